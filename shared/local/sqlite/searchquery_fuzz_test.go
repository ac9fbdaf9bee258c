package sqlite_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// FuzzSearchQuery: whatever a user types as a query, Search answers with
// hits of the pages there are, or refuses the query as invalid (an empty
// one); it never fails on the full-text syntax it builds from the words
// (quotes, FTS5 operators, column filters, NUL, any script), and every
// score is a number. The seed corpus is in testdata/fuzz/FuzzSearchQuery.
func FuzzSearchQuery(f *testing.F) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(f.TempDir(), "crawl.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	pages := map[string]string{
		"http://example.com/functions": "Trigger Functions",
		"http://example.com/queries":   "Queries",
		"http://example.com/café":      "Café",
	}
	texts := []string{"write a trigger function in the language", "run a query with a common table expression",
		"crème brûlée at the café, \"quoted\" NEAR(words) AND more"}
	i := 0
	for u, title := range pages {
		at := int64(100 + i)
		if _, err := db.ApplySummary(ctx, contract.SummaryUpdate(u, u, at, crawl.GenerationReplace, 0,
			contract.TextGen(u, at, contract.TextPile(texts[i]), title))); err != nil {
			f.Fatal(err)
		}
		i++
	}
	f.Add("trigger function")
	f.Fuzz(func(t *testing.T, q string) {
		hits, err := db.Search(ctx, q, 10)
		if err != nil {
			if crawl.KindOf(err) == crawl.KindInvalid && strings.TrimSpace(strings.ReplaceAll(q, "\x00", " ")) == "" {
				return // an empty query (a NUL separates words)
			}
			t.Fatalf("Search(%q): %v", q, err)
		}
		for _, h := range hits {
			if _, ok := pages[h.URL]; !ok || math.IsNaN(h.Rank) || math.IsInf(h.Rank, 0) {
				t.Errorf("Search(%q) hit %+v", q, h)
			}
		}
	})
}
