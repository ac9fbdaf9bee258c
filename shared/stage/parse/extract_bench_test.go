package parse

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/serverless-crawler/crawler/bench/corpus"
)

// BenchmarkExtract reads every page of a site once per op (HTML parse,
// tree walk, links resolved and normalized, text, language): MB/s is
// HTML read per second.
func BenchmarkExtract(b *testing.B) {
	for _, site := range []struct {
		name  string
		pages func(testing.TB) []corpus.Page
	}{
		{"demosite", corpus.DemoSite},
		{"python-docs", corpus.PythonDocs},
	} {
		b.Run(site.name, func(b *testing.B) {
			pages := site.pages(b)
			b.SetBytes(corpus.Bytes(pages))
			b.ReportAllocs()
			links := 0
			for b.Loop() {
				links = 0
				for _, p := range pages {
					doc := Extract("http://127.0.0.1:8080/"+p.Path, p.Body, "")
					links += len(doc.Links)
				}
			}
			b.ReportMetric(float64(len(pages)), "pages/op")
			b.ReportMetric(float64(links), "links/op")
		})
	}
}

// BenchmarkHTMLParse splits Extract's largest cost: html.Parse (the
// tokenizer, each token's strings, the HTML5 tree construction), against
// the tokenizer alone reading every tag's name and attributes as byte
// slices, which no extractor built on the tokenizer could go below. It
// is what #14's "html.Parse or html.Tokenizer" choice rests on
// (BENCHMARKS.md, "Where the time goes now").
func BenchmarkHTMLParse(b *testing.B) {
	for _, site := range []struct {
		name  string
		pages func(testing.TB) []corpus.Page
	}{
		{"python-docs", corpus.PythonDocs},
		{"postgresql-docs", corpus.PostgresDocs},
	} {
		pages := site.pages(b)
		b.Run(site.name+"/parse", func(b *testing.B) {
			b.SetBytes(corpus.Bytes(pages))
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pages {
					if _, err := html.Parse(strings.NewReader(p.Body)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(site.name+"/tokenize", func(b *testing.B) {
			b.SetBytes(corpus.Bytes(pages))
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range pages {
					z := html.NewTokenizer(strings.NewReader(p.Body))
					for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
						if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
							for _, more := z.TagName(); more; {
								_, _, more = z.TagAttr()
							}
						}
					}
				}
			}
		})
	}
}
