package lambdalog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

func TestRequestID(t *testing.T) {
	var buf bytes.Buffer
	log, h := New(&buf, slog.LevelInfo, "fetcher")
	child := log.With("url", "http://a/")
	h.Start(lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"}))
	child.Info("fetched")
	log.Debug("hidden")
	h.Start(lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-2"}))
	log.Warn("second")

	dec := json.NewDecoder(&buf)
	var got []map[string]any
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	if len(got) != 2 {
		t.Fatalf("got %d lines, want 2 (debug is below the level)", len(got))
	}
	if got[0]["request_id"] != "req-1" || got[0]["function"] != "fetcher" || got[0]["url"] != "http://a/" || got[0]["msg"] != "fetched" {
		t.Errorf("first line = %v", got[0])
	}
	if got[1]["request_id"] != "req-2" || got[1]["level"] != "WARN" {
		t.Errorf("second line = %v", got[1])
	}
}

func TestParseLevel(t *testing.T) {
	for _, c := range []struct {
		in   string
		want slog.Level
		err  bool
	}{{"", slog.LevelInfo, false}, {"debug", slog.LevelDebug, false}, {"WARN", slog.LevelWarn, false}, {"loud", 0, true}} {
		l, err := ParseLevel(c.in)
		if (err != nil) != c.err || (!c.err && l != c.want) {
			t.Errorf("ParseLevel(%q) = %v, %v", c.in, l, err)
		}
	}
}
