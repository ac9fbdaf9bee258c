package robots

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// FuzzParse reads arbitrary robots.txt files and paths. Besides never
// panicking, it checks that:
//
//   - ignored lines are inert: blanking every line the parser ignored
//     gives the same verdict (same allowed, group and deciding line), and
//     the blanked file has no ignored line left; so no line we could not
//     read ever changed a verdict, in either direction;
//   - a stricter reading never allows more: turning any one Allow line
//     into a Disallow of the same pattern never turns a disallowed path
//     into an allowed one (and the converse for Disallow to Allow);
//   - the matcher agrees with a plain regexp reading of RFC 9309 (the
//     longest matching pattern decides, Allow on a tie).
//
// Seeds: testdata/fuzz/FuzzParse and every case of Google's.
func FuzzParse(f *testing.F) {
	for _, c := range loadGoogleCases(f) {
		if len(c.Robots) < 4<<10 {
			f.Add([]byte(c.Robots), pathOf(c.URL))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, path string) {
		if len(body) > 64<<10 {
			return
		}
		r := FromResponse(200, body, ua, time.Unix(0, 0), time.Hour, time.Minute)
		v := r.Verdict(path)
		_ = v.String()

		pf := parse(body)
		blank := map[int]string{}
		for _, l := range pf.ignored {
			blank[l.Line] = " "
		}
		if len(blank) > 0 {
			clean := rewrite(body, blank)
			rc := FromResponse(200, clean, ua, time.Unix(0, 0), time.Hour, time.Minute)
			if vc := rc.Verdict(path); !sameVerdict(v, vc) {
				t.Fatalf("blanking the ignored lines changed the verdict on %q: %s -> %s", path, v, vc)
			}
			if n := len(parse(clean).ignored); n > 0 {
				t.Fatalf("the file with its ignored lines blanked still has %d ignored", n)
			}
		}

		flips := 0
		for _, g := range pf.groups {
			for _, rule := range g.rules {
				if flips == 8 {
					break
				}
				flips++
				verb := "Allow: "
				if rule.Allow {
					verb = "Disallow: "
				}
				rf := FromResponse(200, rewrite(body, map[int]string{rule.Line: verb + rule.Pattern}), ua, time.Unix(0, 0), time.Hour, time.Minute)
				vf := rf.Verdict(path)
				if rule.Allow && !v.Allowed && vf.Allowed {
					t.Fatalf("turning line %d into a Disallow allowed %q", rule.Line, path)
				}
				if !rule.Allow && v.Allowed && !vf.Allowed {
					t.Fatalf("turning line %d into an Allow disallowed %q", rule.Line, path)
				}
			}
		}

		want, wantLen := true, -1
		p := normalize(path)
		if p == "" {
			p = "/"
		}
		for _, rule := range r.rules {
			n := normalize(rule.Pattern)
			expr := "(?s)^"
			anchored := strings.HasSuffix(n, "$")
			n = strings.TrimSuffix(n, "$")
			for i, part := range strings.Split(n, "*") {
				if i > 0 {
					expr += ".*"
				}
				expr += regexp.QuoteMeta(part)
			}
			if anchored {
				expr += "$"
			}
			if !regexp.MustCompile(expr).MatchString(p) {
				continue
			}
			if l := rule.p.length; l > wantLen || l == wantLen && rule.Allow {
				want, wantLen = rule.Allow, l
			}
		}
		if v.Allowed != want {
			t.Fatalf("%q: allowed %v, the regexp reading says %v (%s)", path, v.Allowed, want, v)
		}
	})
}

func sameVerdict(a, b Verdict) bool {
	line := func(v Verdict) int {
		if v.Rule == nil {
			return 0
		}
		return v.Rule.Line
	}
	return a.Allowed == b.Allowed && a.Group == b.Group && line(a) == line(b)
}

// rewrite replaces the text of the given lines (numbered as parse does,
// after any byte order mark) and keeps every line ending, so lines keep
// their numbers.
func rewrite(body []byte, lines map[int]string) []byte {
	s := string(body)
	var b strings.Builder
	for _, bom := range []string{"\xEF\xBB\xBF", "\xEF\xBB", "\xEF"} {
		if strings.HasPrefix(s, bom) {
			s = s[len(bom):]
			break
		}
	}
	for n := 1; s != ""; n++ {
		line, rest := cutLine(s)
		end := s[len(line) : len(s)-len(rest)]
		if text, ok := lines[n]; ok {
			line = text
		}
		b.WriteString(line)
		b.WriteString(end)
		s = rest
	}
	return []byte(b.String())
}
