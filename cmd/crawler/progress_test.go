package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8"

	"github.com/serverless-crawler/crawler/shared/local/pipeline"
)

func TestDescribeProgress(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var r rateWindow
	r.add(start, 10, 1<<20)
	r.add(start.Add(2*time.Second), 30, 3<<20) // 10 pages/s, 1 MiB/s
	tests := []struct {
		name string
		s    pipeline.Progress
		want []string
	}{
		{"unbounded, no failures",
			pipeline.Progress{Crawled: 30, Bytes: 3 << 20, Frontier: 70, Elapsed: 3 * time.Second},
			[]string{"30 of 100 known pages, 3.0 MiB stored", "10.0 pages/s, 1.0 MiB/s, 3s elapsed", "70 in the frontier, no failures", ""}},
		{"bounded by --max-pages: an ETA",
			pipeline.Progress{Crawled: 30, Frontier: 500, MaxPages: 80, Elapsed: 3 * time.Second, Hosts: []string{"a.example", "b.example"}},
			[]string{"30 of 530 known pages, 0 B stored", "10.0 pages/s, 1.0 MiB/s, ETA 5s, 3s elapsed", "500 in the frontier, no failures", "crawling a.example, b.example"}},
		{"failures by outcome, the most first",
			pipeline.Progress{Crawled: 30, Failed: map[string]int{"timeout": 1, "http-server-error": 4, "dns-failure": 1}},
			[]string{"30 of 30 known pages, 0 B stored", "10.0 pages/s, 1.0 MiB/s, 0s elapsed", "0 in the frontier, 6 failed (4 http-server-error, 1 dns-failure, 1 timeout)", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describeProgress(tt.s, r)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestRateWindowForgetsThePast(t *testing.T) {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var r rateWindow
	r.add(start, 0, 0)
	r.add(start.Add(time.Second), 1000, 0) // a fast start
	for i := 2; i <= 20; i++ {
		r.add(start.Add(time.Duration(i)*time.Second), 1000+int64(i-1), 0) // then 1 page/s
	}
	if pages, _ := r.perSecond(); pages < 0.9 || pages > 1.5 {
		t.Errorf("rate %.2f pages/s, want about 1 (the last %s only)", pages, rateSpan)
	}
}

// TestProgressPlainLines: off a terminal, one plain line a period, no
// escape codes.
func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgressTo(&buf, false, false)
	p.lastLine = time.Time{} // the period is over
	p.update(pipeline.Progress{Crawled: 3, Frontier: 7, Failed: map[string]int{"timeout": 1}, Hosts: []string{"example.com"}})
	p.update(pipeline.Progress{Crawled: 4, Frontier: 6}) // within the period: no line
	p.done()
	want := "progress: 3 of 10 known pages, 0 B stored; 0.0 pages/s, 0 B/s, 0s elapsed; 7 in the frontier, 1 failed (1 timeout); crawling example.com\n"
	if buf.String() != want {
		t.Errorf("got %q\nwant %q", buf.String(), want)
	}
}

// TestProgressLive: on a terminal mpb draws the lines, and clears them
// when the crawl is done; quiet draws nothing.
func TestProgressLive(t *testing.T) {
	var buf bytes.Buffer
	refresh := make(chan any)
	p := newProgressTo(&buf, false, true, mpb.WithManualRefresh(refresh), mpb.WithWidth(200))
	p.update(pipeline.Progress{Crawled: 5, Frontier: 15, Hosts: []string{"docs.example"}})
	refresh <- time.Now()
	p.done()
	out := buf.String()
	for _, want := range []string{"5 of 20 known pages", "15 in the frontier, no failures", "crawling docs.example"} {
		if !strings.Contains(out, want) {
			t.Errorf("live lines lack %q:\n%s", want, out)
		}
	}

	buf.Reset()
	q := newProgressTo(&buf, true, true)
	q.update(pipeline.Progress{Crawled: 5})
	q.done()
	if buf.Len() != 0 {
		t.Errorf("quiet progress wrote %q", buf.String())
	}
}
