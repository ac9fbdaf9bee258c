package urlnorm

import (
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/bench/corpus"
)

// absoluteURLs are the shapes of absolute URL a crawl meets: plain,
// upper-case host and default port, dot segments, escapes, queries, IDNA.
var absoluteURLs = []string{
	"https://docs.python.org/3/library/os.html",
	"HTTP://Example.COM:80/a/./b/../c/index.html#frag",
	"https://example.org/search?q=lamp%20room&lang=en&page=2",
	"https://example.org/%7Euser/caf%c3%a9/%41%42%43",
	"http://bücher.example/über/straße?x=ä",
	"https://example.org",
	"https://www.example.com/blog/2024/03/05/a-rather-long-slug-for-a-post-about-lighthouses/?utm_source=feed",
}

// BenchmarkNormalize normalizes one absolute URL per op.
func BenchmarkNormalize(b *testing.B) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := Normalize(absoluteURLs[i%len(absoluteURLs)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

var hrefRE = regexp.MustCompile(`href="([^"]*)"`)

// BenchmarkResolve resolves and normalizes one link per op, as the parse
// stage does: every href of the site's pages, against its page's URL.
func BenchmarkResolve(b *testing.B) {
	for _, site := range []struct {
		name  string
		pages func(testing.TB) []corpus.Page
	}{
		{"demosite", corpus.DemoSite},
		{"python-docs", corpus.PythonDocs},
	} {
		b.Run(site.name, func(b *testing.B) {
			type link struct {
				base *Base
				href string
			}
			var links []link
			for _, p := range site.pages(b) {
				base, err := NewBase("http://127.0.0.1:8080/" + p.Path)
				if err != nil {
					b.Fatal(err)
				}
				for _, m := range hrefRE.FindAllStringSubmatch(p.Body, -1) {
					links = append(links, link{base, html.UnescapeString(m[1])})
				}
			}
			// What the cache holds for one pass over the site: the links it
			// can take, and the distinct keys they make (cache.go).
			nCacheable, keys := 0, map[cacheKey]bool{}
			for _, l := range links {
				if !cacheable(l.href) {
					continue
				}
				nCacheable++
				pre, _, _ := strings.Cut(l.href, "#")
				k := cacheKey{l.base.whole, pre}
				if dirOnly(pre) {
					k.base = l.base.dir
				}
				keys[k] = true
			}
			for _, how := range []struct {
				name    string
				resolve func(*Base, string) (Result, error)
			}{
				{"cached", (*Base).Resolve},
				{"parser", (*Base).resolve}, // without the cross-page cache
			} {
				b.Run(how.name, func(b *testing.B) {
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						l := links[i%len(links)]
						how.resolve(l.base, l.href) // some hrefs (mailto:, javascript:) are refused, as in a crawl
						i++
					}
					b.ReportMetric(float64(len(links)), "links")
					b.ReportMetric(float64(nCacheable), "cacheable")
					b.ReportMetric(float64(len(keys)), "keys")
				})
			}
		})
	}
}
