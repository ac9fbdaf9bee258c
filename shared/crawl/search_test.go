package crawl

import (
	"slices"
	"testing"
)

func TestSingulars(t *testing.T) {
	for w, want := range map[string][]string{
		"threads": {"thread"}, "Breakpoints": {"breakpoint"}, "dictionaries": {"dictionary", "dictionarie"},
		"movies": {"movy", "movie"}, "classes": {"class", "classe"}, "caches": {"cach", "cache"},
		"boxes": {"box", "boxe"}, "uses": {"use"},
		"class": nil, "status": nil, "analysis": nil, "its": nil, "key": nil, "f-strings": nil, "3.11s": nil,
	} {
		if got := Singulars(w); !slices.Equal(got, want) {
			t.Errorf("Singulars(%q) = %q, want %q", w, got, want)
		}
	}
}

func TestPlurals(t *testing.T) {
	for w, want := range map[string][]string{
		"function": {"functions"}, "Trigger": {"triggers"}, "query": {"queries"}, "key": {"keys"},
		"class": {"classes"}, "status": {"statuses"}, "box": {"boxes"}, "match": {"matches"}, "hash": {"hashes"},
		"api": {"apis"},
		// A word that may be a plural already, a short word, or one not
		// of letters has none.
		"threads": nil, "uses": nil, "go": nil, "f-string": nil, "3.11": nil,
	} {
		if got := Plurals(w); !slices.Equal(got, want) {
			t.Errorf("Plurals(%q) = %q, want %q", w, got, want)
		}
	}
}
