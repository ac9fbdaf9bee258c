package robots

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// googleCase is one case of Google's robots_test.cc (testdata/README.md).
type googleCase struct {
	Name          string `json:"name"`
	Class         string `json:"class"` // "rfc9309" or "google"
	Robots        string `json:"robots"`
	Agent         string `json:"agent"`
	URL           string `json:"url"`
	GoogleAllowed bool   `json:"google_allowed"`
	OurAllowed    *bool  `json:"our_allowed"` // set where we deliberately differ
	Note          string `json:"note"`
}

func loadGoogleCases(t testing.TB) []googleCase {
	b, err := os.ReadFile("testdata/google_cases.json")
	if err != nil {
		t.Fatalf("read Google's cases: %v", err)
	}
	var doc struct{ Cases []googleCase }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("decode Google's cases: %v", err)
	}
	return doc.Cases
}

// rulesFor reads a 200 robots.txt for a product token as given (Google's
// cases pass the token itself, "Foo Bar" included).
func rulesFor(body, token string) *Rules {
	r := &Rules{Status: 200}
	r.apply(parse([]byte(body)), token)
	return r
}

// pathOf returns a URL's path and query as the fetch stage passes them,
// without escaping anything: matching must normalize by itself.
func pathOf(u string) string {
	u, _, _ = strings.Cut(u, "#")
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
		j := strings.IndexAny(u, "/?")
		if j < 0 {
			return "/"
		}
		u = u[j:]
	}
	if !strings.HasPrefix(u, "/") {
		u = "/" + u
	}
	return u
}

// TestGoogleCases runs the cases of Google's parser: every case RFC 9309
// decides must agree with Google; where we differ from a Google-specific
// behaviour, the data says so and why.
func TestGoogleCases(t *testing.T) {
	cases := loadGoogleCases(t)
	counts := map[string][2]int{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			want := c.GoogleAllowed
			if c.OurAllowed != nil {
				if c.Class == "rfc9309" {
					t.Fatalf("case decided by RFC 9309 marked as differing from Google")
				}
				want = *c.OurAllowed
			}
			v := rulesFor(c.Robots, c.Agent).Verdict(pathOf(c.URL))
			if v.Allowed != want {
				t.Errorf("agent %q, %s: allowed %v, want %v (%s)\nrobots.txt:\n%s", c.Agent, clip(c.URL), v.Allowed, want, v, clip(c.Robots))
			}
			n := counts[c.Class]
			n[0]++
			if v.Allowed == c.GoogleAllowed {
				n[1]++
			}
			counts[c.Class] = n
		})
	}
	for class, n := range counts {
		t.Logf("%s cases: %d, agreeing with Google: %d", class, n[0], n[1])
	}
}
