package crawl

import (
	"fmt"
	"slices"
	"strings"
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

func TestChangelogTitle(t *testing.T) {
	for _, tt := range []struct {
		title string
		want  bool
	}{
		{"Changelog — Sphinx documentation", true},
		{"Changes — Flask Documentation (2.2.x)", true},
		{"Django 3.2 release notes — Django 3.2.25 documentation", true},
		{"What’s New In Python 3.11 — Python 3.11.2 documentation", true},
		{"What's new in SQLAlchemy 1.4?", true},
		{"1.4 Changelog — SQLAlchemy 1.4 Documentation", true},
		{"Tracking queries, object and Session Changes with Events", false},
		{"Changes to the API", false},
		{"Changes", true},
		{"Changes - My Project", true},
		{"Visibility of Data Changes", false},
		{"Releases of the lock", false},
		{"", false},
	} {
		if got := ChangelogTitle(tt.title); got != tt.want {
			t.Errorf("ChangelogTitle(%q) = %v, want %v", tt.title, got, tt.want)
		}
	}
}

func TestChangelogPenalty(t *testing.T) {
	for _, tt := range []struct {
		query string
		want  float64
	}{
		{"check for broken links", SearchChangelogPenalty},
		{"what is new in python 3.11", 0},
		{"Release notes", 0},
		{"changes?", 0},
		{"lantern release-notes", 0},
		{"changes/fixes", 0},
		{"release_notes", 0},
		{"renew newer", SearchChangelogPenalty},
		{"", SearchChangelogPenalty},
	} {
		if got := ChangelogPenalty(tt.query); got != tt.want {
			t.Errorf("ChangelogPenalty(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}

func TestSourceListing(t *testing.T) {
	for _, tt := range []struct {
		text, code int
		want       bool
	}{
		{0, 100, true},
		{10, 90, true},
		{11, 89, false},
		{100, 0, false},
		{0, 0, false},
	} {
		if got := SourceListing(tt.text, tt.code); got != tt.want {
			t.Errorf("SourceListing(%d, %d) = %v, want %v", tt.text, tt.code, got, tt.want)
		}
	}
}

func TestQueryCut(t *testing.T) {
	var distinct []string
	for i := range MaxQueryTerms + 1 {
		distinct = append(distinct, fmt.Sprintf("word%c", 'a'+i))
	}
	for _, tt := range []struct {
		query string
		want  bool
	}{
		{strings.Join(distinct[:MaxQueryTerms], " "), false},
		{strings.Join(distinct, " "), true},
		{strings.Join(distinct, "/"), true},
		{strings.Repeat("copy ", MaxQueryTerms+5), false},
		{strings.Join(distinct[:MaxQueryTerms], " ") + " the of and", false},
	} {
		if got := QueryCut(tt.query); got != tt.want {
			t.Errorf("QueryCut(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
}
