package sqlite_test

import (
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// TestSearchWordForms: what this store adds to the ranking both stores
// share (searchquery.go): plural query words find singular ones, and
// pages where the query's words stand close together rank first.
func TestSearchWordForms(t *testing.T) {
	db := openDB(t)
	pages := []struct{ url, title, text string }{
		{"http://example.com/near", "Files", "to copy a file to a new place, open both and read the source into the target"},
		{"http://example.com/far", "Objects", "copy makes a new object, not a file"},
		{"http://example.com/keeper", "Keeper", "the keeper trims the wick of the lamp"},
	}
	for i, p := range pages {
		apply(t, db, contract.SummaryUpdate(p.url, p.url, int64(100+i), crawl.GenerationReplace, 0,
			contract.TextGen(p.url, int64(100+i), contract.TextPile(p.text), p.title)))
	}
	for _, tt := range []struct {
		name, query string
		want        []string
	}{
		{"words close together first", "copy a file", []string{"http://example.com/near", "http://example.com/far"}},
		{"query words in the other order", "file copy", []string{"http://example.com/near", "http://example.com/far"}},
		{"a plural finds the singular", "keepers wicks", []string{"http://example.com/keeper"}},
		{"a singular does not find plurals", "dict", []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := db.Search(t.Context(), tt.query, 10)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, h := range hits {
				got = append(got, h.URL)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}
