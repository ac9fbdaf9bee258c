package crawl

import "testing"

func TestSingular(t *testing.T) {
	for w, want := range map[string]string{
		"threads": "thread", "Breakpoints": "breakpoint", "dictionaries": "dictionary", "classes": "class",
		"boxes": "box", "matches": "match", "uses": "use",
		"class": "", "status": "", "analysis": "", "its": "", "key": "", "f-strings": "", "3.11s": "",
	} {
		if got := Singular(w); got != want {
			t.Errorf("Singular(%q) = %q, want %q", w, got, want)
		}
	}
}
