package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `{"time":"2026-11-22T05:00:00Z","level":"INFO","msg":"aws usage","v":1,"function":"parser","phase":"invoke","memory_mb":0,"duration_ms":999.5,"messages":1,"message_bytes":300,"failed":0,"requests":1,"sqs_billed":1,"ddb_rcu":0,"ddb_wcu":0,"ddb_wcu_est":0,"ops":{"SQS.SendMessageBatch":{"n":1,"billed":1}}}
{"Function":"fetcher","Outcome":"complete","Pages":4,"_aws":{"Timestamp":1,"CloudWatchMetrics":[]}}`

func TestRun(t *testing.T) {
	file := filepath.Join(t.TempDir(), "logs.jsonl")
	if err := os.WriteFile(file, []byte(sample), 0o644); err != nil { // no final newline
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want func(t *testing.T, out string)
	}{
		{"markdown from a file", []string{file}, func(t *testing.T, out string) {
			if !strings.Contains(out, "4 pages, 1 usage records") || !strings.Contains(out, "per million pages") {
				t.Errorf("output:\n%s", out)
			}
		}},
		{"json, pages and memory given", []string{"-json", "-pages", "2", "-memory-of", "parser=2048", "-log-bytes", "0", file}, func(t *testing.T, out string) {
			var e struct {
				Pages float64 `json:"pages"`
				USD   float64 `json:"usd"`
			}
			if err := json.Unmarshal([]byte(out), &e); err != nil {
				t.Fatal(err)
			}
			// 1 invocation, 2 GB for 1 s, 1 send, Lambda's receive and delete.
			want := 0.20/1e6 + 2*0.0000133334 + 3*0.40/1e6
			if e.Pages != 2 || e.USD < want*0.999999 || e.USD > want*1.000001 {
				t.Errorf("pages %v, $%v; want 2, $%v", e.Pages, e.USD, want)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := run(tc.args, strings.NewReader(""), &out); err != nil {
				t.Fatal(err)
			}
			tc.want(t, out.String())
		})
	}
	for _, args := range [][]string{{"-memory-of", "parser"}, {"/no/such/file"}, {}} {
		if err := run(args, strings.NewReader("no records here\n"), &bytes.Buffer{}); err == nil {
			t.Errorf("run %q: no error", args)
		}
	}
}
