// Package robotsgen generates a large robots.txt and paths to test
// against it, for the benchmarks of package robots and for the parser
// comparison in ../../testdata/compare.
package robotsgen

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// maxSize is robots.MaxSize: the file fills what the fetcher reads.
const maxSize = 500 << 10

// Large builds a robots.txt of about 500 KiB (maxSize) with a few
// thousand rules, shaped like big real files: many groups for other
// agents, a large "*" group, and our own group last, with plain
// prefixes, "*" wildcards, "$" ends, comments and percent-escapes.
func Large() []byte {
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
	for b.Len() < maxSize-60<<10 {
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
	for b.Len() < maxSize-20<<10 {
		verb := "Disallow"
		if rng.IntN(4) == 0 {
			verb = "Allow"
		}
		fmt.Fprintf(&b, "%s: %s\n", verb, rule())
	}
	b.WriteString("\nUser-agent: serverless-crawler\nCrawl-delay: 1\n")
	for b.Len() < maxSize-100 {
		verb := "Disallow"
		if rng.IntN(4) == 0 {
			verb = "Allow"
		}
		fmt.Fprintf(&b, "%s: %s\n", verb, rule())
	}
	return []byte(b.String())
}

// Paths are paths to test against Large: some under its
// rules, some not.
func Paths(n int) []string {
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
