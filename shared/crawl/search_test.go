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
