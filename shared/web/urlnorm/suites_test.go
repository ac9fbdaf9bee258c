package urlnorm

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// ccCase is one assertion of crawler-commons' BasicURLNormalizerTest,
// kept in testdata/crawler-commons.json.
type ccCase struct {
	In     string  `json:"in"`
	Want   *string `json:"want"` // nil: crawler-commons refuses the URL
	From   string  `json:"from"`
	Choice string  `json:"choice,omitempty"` // why urlnorm differs, if it does
	Got    *string `json:"got,omitempty"`    // what urlnorm gives instead; nil: refused
}

func loadCrawlerCommons(t *testing.T) []ccCase {
	t.Helper()
	b, err := os.ReadFile("testdata/crawler-commons.json")
	if err != nil {
		t.Fatalf("read crawler-commons cases: %v", err)
	}
	var doc struct{ Cases []ccCase }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("decode crawler-commons cases: %v", err)
	}
	return doc.Cases
}

// TestCrawlerCommons runs crawler-commons' normalizer assertions. A case
// must agree, or carry a written choice with the result urlnorm gives.
func TestCrawlerCommons(t *testing.T) {
	cases := loadCrawlerCommons(t)
	agree, chosen := 0, map[string]int{}
	for _, c := range cases {
		r, err := Normalize(c.In)
		var got *string
		if err == nil {
			got = &r.URL
		}
		if eqPtr(got, c.Want) {
			agree++
			if c.Choice != "" {
				t.Errorf("%s: Normalize(%q) agrees with crawler-commons; drop the choice %q", c.From, c.In, c.Choice)
			}
			continue
		}
		if c.Choice == "" {
			t.Errorf("%s: Normalize(%q) = %s (err %v), crawler-commons wants %s, and no choice is written",
				c.From, c.In, show(got), err, show(c.Want))
			continue
		}
		if !eqPtr(got, c.Got) {
			t.Errorf("%s: Normalize(%q) = %s (err %v), the written choice says %s", c.From, c.In, show(got), err, show(c.Got))
		}
		chosen[strings.SplitN(c.Choice, ":", 2)[0]]++
	}
	t.Logf("crawler-commons: %d of %d agree; written choices: %v", agree, len(cases), chosen)
}

func eqPtr(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func show(s *string) string {
	if s == nil {
		return "refused"
	}
	return `"` + *s + `"`
}

// wptCase is one entry of the web-platform-tests urltestdata.json.
type wptCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Failure bool    `json:"failure"`
}

// loadWPT returns the entries whose result is an http(s) URL, or that
// fail and would be http(s) (an http(s) base, or an input that starts
// with the scheme).
func loadWPT(t testing.TB) []wptCase {
	t.Helper()
	b, err := os.ReadFile("testdata/urltestdata.json")
	if err != nil {
		t.Fatalf("read urltestdata: %v", err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("decode urltestdata: %v", err)
	}
	var out []wptCase
	for _, m := range raw {
		if len(m) > 0 && m[0] == '"' {
			continue // a comment
		}
		var c wptCase
		if err := json.Unmarshal(m, &c); err != nil {
			t.Fatalf("decode urltestdata entry %s: %v", m, err)
		}
		if isHTTP(c.Href) || c.Failure && (c.Base != nil && isHTTP(*c.Base) || isHTTP(strings.TrimSpace(c.Input))) {
			out = append(out, c)
		}
	}
	return out
}

func isHTTP(s string) bool {
	s = strings.ToLower(s)
	return strings.HasPrefix(s, "http:") || strings.HasPrefix(s, "https:")
}

func (c wptCase) resolve() (Result, error) {
	if c.Base == nil {
		return Normalize(c.Input)
	}
	return Resolve(*c.Base, c.Input)
}

// wptChoices are the WPT http(s) inputs that the standard accepts and
// urlnorm refuses, each with the reason docs/urls.md gives. None today.
var wptChoices = map[string]string{}

// TestWPT runs the web-platform-tests URL cases whose result is http(s):
// each must give the standard's href with the fragment cut off and the
// written equivalences applied (wantEquivalent), or fail where the
// standard fails. Outputs must be idempotent, and two cases the standard
// tells apart must not become one URL.
func TestWPT(t *testing.T) {
	cases := loadWPT(t)
	agree, refused, accepted := 0, 0, 0
	byOutput := map[string]string{} // urlnorm output -> the standard's href
	for _, c := range cases {
		name := c.Input
		if c.Base != nil {
			name += " against " + *c.Base
		}
		r, err := c.resolve()
		switch {
		case c.Failure && err == nil:
			accepted++
			t.Errorf("%s: the standard fails, urlnorm gives %q", name, r.URL)
			continue
		case c.Failure:
			agree++
			continue
		case err != nil:
			refused++
			if why := wptChoices[c.Input]; why == "" {
				t.Errorf("%s: the standard gives %q, urlnorm refuses: %v", name, c.Href, err)
			}
			continue
		}
		want := wantEquivalent(c.Href)
		if r.URL != want {
			t.Errorf("%s: got %q, want %q (the standard's %q)", name, r.URL, want, c.Href)
			continue
		}
		if frag := strings.Contains(c.Href, "#"); r.HasFrag != frag {
			t.Errorf("%s: HasFrag %v, want %v", name, r.HasFrag, frag)
		}
		agree++
		if again, err := Normalize(r.URL); err != nil || again.URL != r.URL {
			t.Errorf("%s: not idempotent: %q -> %q (err %v)", name, r.URL, again.URL, err)
		}
		std, _, _ := strings.Cut(c.Href, "#")
		if prev, ok := byOutput[r.URL]; ok && wantEquivalent(prev) != wantEquivalent(std) {
			t.Errorf("collision: %q and %q both become %q", prev, std, r.URL)
		}
		byOutput[r.URL] = std
	}
	t.Logf("WPT http(s): %d cases, %d agree, %d valid refused, %d invalid accepted", len(cases), agree, refused, accepted)
}

// wantEquivalent applies the written equivalences to an href the
// standard serialized, independently of the package's code: the
// fragment cut off, a '%' that starts no escape written "%25", escapes
// of unreserved characters decoded and the hex of the rest upper-case.
func wantEquivalent(href string) string {
	href, _, _ = strings.Cut(href, "#")
	var b strings.Builder
	for i := 0; i < len(href); i++ {
		if href[i] != '%' {
			b.WriteByte(href[i])
			continue
		}
		if i+2 >= len(href) || !strings.ContainsRune("0123456789abcdefABCDEF", rune(href[i+1])) ||
			!strings.ContainsRune("0123456789abcdefABCDEF", rune(href[i+2])) {
			b.WriteString("%25")
			continue
		}
		hex := strings.ToUpper(href[i+1 : i+3])
		var v byte
		for _, h := range hex {
			v = v<<4 | byte(strings.IndexRune("0123456789ABCDEF", h))
		}
		if strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~", v) >= 0 {
			b.WriteByte(v)
		} else {
			b.WriteString("%" + hex)
		}
		i += 2
	}
	return b.String()
}
