package robots

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
)

// largeRobots builds a robots.txt of about 500 KiB (MaxSize) with a few
// thousand rules, shaped like big real files: many groups for other
// agents, a large "*" group, and our own group last, with plain
// prefixes, "*" wildcards, "$" ends, comments and percent-escapes.
func largeRobots() []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"search", "cart", "account", "api", "static", "img", "tag", "user", "blog", "wiki", "print", "lang", "%E3%83%84", "ツ", "~home", "%7Ehome"}
	rule := func() string {
		var b strings.Builder
		for range 2 + rng.IntN(4) {
			b.WriteByte('/')
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "%d", rng.IntN(1000))
			}
		}
		switch rng.IntN(6) {
		case 0:
			b.WriteString("/*.php")
		case 1:
			b.WriteString("*?sort=")
		case 2:
			b.WriteString(".html$")
		}
		return b.String()
	}
	var b strings.Builder
	b.WriteString("# generated for benchmarks\nSitemap: https://example.org/sitemap.xml\n")
	agents := 0
	for b.Len() < MaxSize-60<<10 {
		fmt.Fprintf(&b, "\nUser-agent: otherbot%d\nUser-agent: Other-Bot-%d\nCrawl-delay: %d\n", agents, agents, agents%10)
		agents++
		for range 40 {
			verb := "Disallow"
			if rng.IntN(4) == 0 {
				verb = "Allow"
			}
			fmt.Fprintf(&b, "%s: %s # rule comment\n", verb, rule())
		}
	}
	b.WriteString("\nUser-agent: *\n")
	for b.Len() < MaxSize-20<<10 {
		verb := "Disallow"
		if rng.IntN(4) == 0 {
			verb = "Allow"
		}
		fmt.Fprintf(&b, "%s: %s\n", verb, rule())
	}
	b.WriteString("\nUser-agent: serverless-crawler\nCrawl-delay: 1\n")
	for b.Len() < MaxSize-100 {
		verb := "Disallow"
		if rng.IntN(4) == 0 {
			verb = "Allow"
		}
		fmt.Fprintf(&b, "%s: %s\n", verb, rule())
	}
	return []byte(b.String())
}

// benchPaths are paths to test against largeRobots: some under its
// rules, some not.
func benchPaths(n int) []string {
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"search", "cart", "account", "api", "static", "img", "tag", "user", "blog", "wiki", "print", "lang", "%E3%83%84", "~home", "about", "docs"}
	paths := make([]string, n)
	for i := range paths {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteByte('/')
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "%d", rng.IntN(1000))
			}
		}
		switch rng.IntN(4) {
		case 0:
			b.WriteString("/index.php?sort=asc&page=2")
		case 1:
			b.WriteString(".html")
		}
		paths[i] = b.String()
	}
	return paths
}

// BenchmarkParse measures reading a 500 KiB robots.txt into rules for
// our user agent: the cost paid once per origin and cache period.
func BenchmarkParse(b *testing.B) {
	body := largeRobots()
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
	r := FromResponse(200, largeRobots(), ua, time.Now(), time.Hour, time.Minute)
	paths := benchPaths(1024)
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
	body := largeRobots()
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
