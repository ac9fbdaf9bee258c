package parse

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/abadojack/whatlanggo"

	"github.com/serverless-crawler/crawler/bench/corpus"
)

// LangTreesEnv names more HTML trees for BenchmarkDetectLanguage,
// separated by the system's list separator: the Apache HTTP Server
// manual in its eleven languages (Debian's apache2-doc) is the check
// that the English shortcut leaves other languages to the detector.
const LangTreesEnv = "CRAWLER_LANG_TREES"

// BenchmarkDetectLanguage runs the language detection of each page's
// text as Extract samples it (whatever the page declares), and reports
// beside the time a page: how many pages got no language (unsure/op);
// how many plainlyEnglish took (shortcut/op); and of those, how many
// whatlanggo would not have called English with confidence
// (shortcut-not-en/op), the shortcut's disagreements (BENCHMARKS.md,
// "A tree of short pages").
func BenchmarkDetectLanguage(b *testing.B) {
	type tree struct {
		name  string
		pages func(testing.TB) []corpus.Page
	}
	trees := []tree{{"python-docs", corpus.PythonDocs}, {"postgresql-docs", corpus.PostgresDocs}}
	for _, dir := range filepath.SplitList(os.Getenv(LangTreesEnv)) {
		trees = append(trees, tree{filepath.Base(dir), func(tb testing.TB) []corpus.Page { return corpus.Dir(tb, dir) }})
	}
	for _, tree := range trees {
		b.Run(tree.name, func(b *testing.B) {
			var samples []string
			for _, p := range tree.pages(b) {
				t := Extract("http://127.0.0.1:8080/"+p.Path, p.Body, "").Text
				samples = append(samples, sample(sample(t.BigHeadlines)+"\n"+sample(t.SmallHeadlines)+"\n"+sample(t.Text)))
			}
			shortcut, notEn := 0, 0
			for _, s := range samples {
				if _, wide := letterCounts(s); wide < minDetectWide && plainlyEnglish(s) {
					shortcut++
					if info := whatlanggo.Detect(s); !info.IsReliable() || info.Lang.Iso6391() != "en" {
						notEn++
					}
				}
			}
			unsure := 0
			for b.Loop() {
				unsure = 0
				for _, s := range samples {
					if detectLanguage(s) == "" {
						unsure++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(samples)), "ns/page")
			b.ReportMetric(float64(len(samples)), "pages/op")
			b.ReportMetric(float64(unsure), "unsure/op")
			b.ReportMetric(float64(shortcut), "shortcut/op")
			b.ReportMetric(float64(notEn), "shortcut-not-en/op")
		})
	}
}
