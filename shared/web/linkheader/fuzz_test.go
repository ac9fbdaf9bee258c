package linkheader

import (
	"strings"
	"testing"
)

// FuzzParse: any field value is read without panic, and every link it
// returns has a target free of the angle brackets that delimit it and
// lower-case relation types.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`<https://example.com/>; rel="canonical"`, `<a>; rel=next, <b,c>; title="x, \"y\""`,
		`<a; rel=x`, `<>;;;=,,<`, `<a>; rel="unterminated`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, l := range Parse([]string{s}) {
			if strings.ContainsAny(l.Target, "<>") {
				t.Errorf("Parse(%q): target %q holds a bracket", s, l.Target)
			}
			for _, r := range l.Rels {
				if r == "" || r != strings.ToLower(r) {
					t.Errorf("Parse(%q): rel %q", s, r)
				}
			}
		}
	})
}
