package parse

import (
	"testing"

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
