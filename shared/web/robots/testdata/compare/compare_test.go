// Package compare measures the robots.txt parsers we considered on the
// same inputs: temoto/robotstxt (what we had), jimsmart/grobotstxt (a
// port of Google's parser) and ours (package robots). It is a module of
// its own under testdata, so the main module does not depend on the
// other two. Run it from this directory:
//
//	go test -v -run Agreement .
//	go test -run XXX -bench . -benchmem .
package compare

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jimsmart/grobotstxt"
	"github.com/serverless-crawler/crawler/shared/web/robots"
	"github.com/serverless-crawler/crawler/shared/web/robots/internal/robotsgen"
	"github.com/temoto/robotstxt"
)

type parser struct {
	name string
	// allowed answers for one product token and path, parsing body as the
	// parser must (temoto: an error allows everything, as we used it).
	allowed func(body, token, path string) bool
}

var parsers = []parser{
	{"temoto", func(body, token, path string) bool {
		d, err := robotstxt.FromString(body)
		if err != nil {
			return true
		}
		return d.FindGroup(token).Test(path)
	}},
	{"grobotstxt", func(body, token, path string) bool {
		return grobotstxt.AgentAllowed(body, token, "http://example.org"+path)
	}},
	{"ours", func(body, token, path string) bool {
		return robots.FromResponse(200, []byte(body), token, time.Unix(0, 0), time.Hour, time.Minute).Allowed(path)
	}},
}

type googleCase struct {
	Class, Robots, Agent, URL string
	GoogleAllowed             bool `json:"google_allowed"`
}

// TestAgreement counts, per parser, the cases of Google's parser it
// agrees with, RFC 9309-decided and Google-specific apart. It asserts
// nothing: it is a measurement.
func TestAgreement(t *testing.T) {
	b, err := os.ReadFile("../google_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Cases []googleCase }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range parsers {
		agree, total := map[string]int{}, map[string]int{}
		for _, c := range doc.Cases {
			total[c.Class]++
			if c.Agent == "Foo Bar" && p.name == "ours" {
				// robots.Token would cut "Foo Bar" to "Foo"; Google's case
				// passes the whole string as the token.
				c.Agent = "Foo_Bar"
			}
			if p.allowed(c.Robots, c.Agent, pathOf(c.URL)) == c.GoogleAllowed {
				agree[c.Class]++
			}
		}
		t.Logf("%-10s rfc9309 %d/%d, google-specific %d/%d", p.name, agree["rfc9309"], total["rfc9309"], agree["google"], total["google"])
	}
}

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

const token = "serverless-crawler"

// BenchmarkParse: the cost of reading the file once. grobotstxt has no
// parse step apart from a question: its figure is one whole question.
func BenchmarkParse(b *testing.B) {
	body := robotsgen.Large()
	s := string(body)
	b.Run("temoto", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			d, err := robotstxt.FromBytes(body)
			if err != nil {
				b.Fatal(err)
			}
			d.FindGroup(token)
		}
	})
	b.Run("grobotstxt", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			grobotstxt.AgentAllowed(s, token, "http://example.org/")
		}
	})
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			robots.FromResponse(200, body, token, time.Now(), time.Hour, time.Minute)
		}
	})
}

// BenchmarkMatch: one URL's verdict, for our group (538 rules) and for
// the "*" group (1,089 rules), the file parsed beforehand where the
// parser allows it.
func BenchmarkMatch(b *testing.B) {
	body := robotsgen.Large()
	s := string(body)
	paths := robotsgen.Paths(1024)
	for _, agent := range []string{token, "nobody"} {
		group := "ours"
		if agent == "nobody" {
			group = "star"
		}
		d, err := robotstxt.FromBytes(body)
		if err != nil {
			b.Fatal(err)
		}
		g := d.FindGroup(agent)
		b.Run("temoto/"+group, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				g.Test(paths[i%len(paths)])
				i++
			}
		})
		b.Run("grobotstxt/"+group, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				grobotstxt.AgentAllowed(s, agent, "http://example.org"+paths[i%len(paths)])
				i++
			}
		})
		r := robots.FromResponse(200, body, agent, time.Now(), time.Hour, time.Minute)
		b.Run("ours/"+group, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Allowed(paths[i%len(paths)])
				i++
			}
		})
	}
}
