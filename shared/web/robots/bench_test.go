package robots

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/web/robots/internal/robotsgen"
)

// The file is robotsgen.Large: 500 KiB, 10,027 rules in 212 groups; our
// group has 538 of them (and "*" 1,089). testdata/compare measures the
// other parsers on the same file.

// BenchmarkParse measures reading a 500 KiB robots.txt into rules for
// our user agent: the cost paid once per origin and cache period.
func BenchmarkParse(b *testing.B) {
	body := robotsgen.Large()
	now := time.Now()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		FromResponse(200, body, ua, now, time.Hour, time.Minute)
	}
}

// BenchmarkMatch measures one URL's verdict against the rules of a
// 500 KiB robots.txt: the cost paid once per crawled URL.
func BenchmarkMatch(b *testing.B) {
	r := FromResponse(200, robotsgen.Large(), ua, time.Now(), time.Hour, time.Minute)
	paths := robotsgen.Paths(1024)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		r.Allowed(paths[i%len(paths)])
		i++
	}
}

// BenchmarkRetained reports the heap one origin's parsed rules keep
// alive in the cache (retained-B/op), beside the file's size.
func BenchmarkRetained(b *testing.B) {
	body := robotsgen.Large()
	var keep []*Rules
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for b.Loop() {
		keep = append(keep, FromResponse(200, body, ua, time.Now(), time.Hour, time.Minute))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(len(keep)), "retained-B/op")
	b.ReportMetric(float64(len(body)), "file-B")
	b.ReportMetric(float64(strings.Count(string(body), "llow:")), "rules")
	runtime.KeepAlive(keep)
}
