package crawl_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

func TestRootPrefix(t *testing.T) {
	for _, tt := range []struct{ root, want string }{
		{"https://h/", "https://h/"},
		{"https://h", "https://h/"},
		{"https://h/docs/index.html", "https://h/docs/"},
		{"https://h/docs/", "https://h/docs/"},
		{"https://h/docs", "https://h/"},
		{"https://h/a/b?x=/c/d", "https://h/a/"},
		{"http://h:8080/x/#/y/", "http://h:8080/x/"},
	} {
		if got := crawl.RootPrefix(tt.root); got != tt.want {
			t.Errorf("RootPrefix(%q) = %q, want %q", tt.root, got, tt.want)
		}
	}
}

func TestSitesOf(t *testing.T) {
	ss, err := crawl.NewSites([]crawl.Site{
		{ID: "whole", Roots: []string{"https://h/"}},
		{ID: "docs", Roots: []string{"https://h/docs/index.html", "https://mirror/docs/"},
			Filters: []crawl.SiteFilter{
				{Pattern: `\.pdf$`, Type: crawl.FilterExclude},
				{Pattern: `\.png$`, Type: crawl.FilterExclude, Mode: crawl.FilterMedia}, // decides nothing
			}},
		{ID: "only-faq", Roots: []string{"https://q/"}, Filters: []crawl.SiteFilter{{Pattern: `/faq`, Type: crawl.FilterInclude}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		url, site string
		admits    bool
	}{
		{"https://h/docs/a.html", "docs", true},
		{"https://h/docs/a.pdf", "docs", false},
		{"https://h/docs/a.png", "docs", true},
		{"https://mirror/docs/b.html", "docs", true},
		{"https://h/blog/", "whole", true},
		{"https://h/docsx", "whole", true},
		{"https://q/faq.html", "only-faq", true},
		{"https://q/other.html", "only-faq", false},
		{"https://elsewhere/", "", false},
		{"https://mirror/", "", false},
	} {
		s := ss.Of(tt.url)
		switch {
		case s == nil && tt.site != "":
			t.Errorf("%s: no site, want %s", tt.url, tt.site)
		case s != nil && s.ID != tt.site:
			t.Errorf("%s: site %s, want %q", tt.url, s.ID, tt.site)
		case s != nil && s.Admits(tt.url) != tt.admits:
			t.Errorf("%s: admitted %v, want %v", tt.url, s.Admits(tt.url), tt.admits)
		}
	}
}

func TestParseSiteEvent(t *testing.T) {
	for _, tt := range []struct {
		body, err string // err: a part of the error, "" if it parses
	}{
		{`{"type":"site","op":"add","roots":["https://example.com/"]}`, ""},
		{`{"type":"site","op":"add","id":"docs","roots":["https://example.com/docs/"],"priority":5,"max_urls":1000,
			"max_errors":10,"request_delay_ms":2000,"recrawl_period_min":1440,"url_type":"single",
			"filters":[{"pattern":"\\.pdf$","type":"exclude","mode":"urls"}]}`, ""},
		{`{"type":"site","op":"set","id":"docs","state":"suspended"}`, ""},
		{`{"type":"site","op":"disable","id":"docs"}`, ""},
		{`{"type":"site","op":"enable","id":"docs"}`, ""},
		{`{"type":"site","op":"add"}`, `needs "roots"`},
		{`{"type":"site","op":"set"}`, `needs "id"`},
		{`{"type":"site","op":"remove","id":"x"}`, `"op" must be`},
		{`{"type":"enqueue","op":"add","roots":["https://e/"]}`, `"type" must be "site"`},
		{`{"type":"site","op":"set","id":"a b"}`, `site id "a b"`},
		{`{"type":"site","op":"set","id":"` + strings.Repeat("x", 33) + `"}`, `site id`},
		{`{"type":"site","op":"set","id":"x","max_urls":-1}`, `site x: max_urls must be from 0`},
		{`{"type":"site","op":"add","roots":["https://e/"],"max_urls":-1}`, `event: max_urls must be from 0`}, // no site named before it has an ID
		{`{"type":"site","op":"set","id":"x","request_delay_ms":3600001}`, `request_delay_ms must be from 0 to 3600000`},
		{`{"type":"site","op":"set","id":"x","state":"paused"}`, `site state "paused"`},
		{`{"type":"site","op":"set","id":"x","url_type":"all"}`, `url type "all"`},
		{`{"type":"site","op":"set","id":"x","filters":[{"pattern":"(","type":"exclude"}]}`, `filter pattern "("`},
		{`{"type":"site","op":"set","id":"x","filters":[{"pattern":"a","type":"maybe"}]}`, `filter type "maybe"`},
		{`{"type":"site","op":"disable","id":"x","state":"active"}`, `takes only "id"`},
		{`{"type":"site","op":"set","id":"x","colour":"red"}`, `unknown field "colour"`},
		{`{"type":"site","op":"set","id":"x"} {}`, `more than one JSON value`},
		{`[1]`, `cannot unmarshal`},
		{"{\"type\":\"site\",\"op\":\"set\",\"id\":\"\xff\"}", `not UTF-8`},
	} {
		ev, err := crawl.ParseSiteEvent([]byte(tt.body))
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.body, err)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want one containing %q", tt.body, err, tt.err)
		case err != nil && crawl.KindOf(err) != crawl.KindInvalid:
			t.Errorf("%s: error of kind %v, want invalid", tt.body, crawl.KindOf(err))
		case err == nil && ev.Type != crawl.SiteEventType:
			t.Errorf("%s: parsed as %+v", tt.body, ev)
		}
	}
	if got := crawl.MessageType([]byte(` {"type":"site","op":"add"}`)); got != "site" {
		t.Errorf("MessageType = %q, want site", got)
	}
	if got := crawl.MessageType([]byte(`{"url":"https://e/"}`)); got != "" {
		t.Errorf("MessageType of an enqueue event = %q, want none", got)
	}
}

// FuzzParseSiteEvent: a site event is refused as invalid input or
// accepted; one accepted validates, and reads back the same after a
// round trip through JSON.
func FuzzParseSiteEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"site","op":"add","roots":["https://example.com/"]}`,
		`{"type":"site","op":"set","id":"docs","priority":-3,"max_urls":10,"filters":[{"pattern":"a+","type":"include","mode":"media"}]}`,
		`{"type":"site","op":"disable","id":"docs"}`, `{"type":"site","op":"set","id":"x","state":"suspended","url_type":"collect-all"}`,
		`{"type":"site"}`, `{}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := crawl.ParseSiteEvent(body)
		if err != nil {
			if crawl.KindOf(err) != crawl.KindInvalid {
				t.Fatalf("refused with kind %v, want invalid input: %v", crawl.KindOf(err), err)
			}
			return
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("decoded an event that does not validate: %v", err)
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", ev, err)
		}
		again, err := crawl.ParseSiteEvent(b)
		if err != nil {
			t.Fatalf("the re-encoded event %s is refused: %v", b, err)
		}
		if !reflect.DeepEqual(ev, again) {
			t.Fatalf("round trip changed the event:\n%+v\n%+v", ev, again)
		}
	})
}

// TestSampleSiteEvents: the sample site events in events/ read as
// documented (docs/sites.md), the malformed one refused as invalid.
func TestSampleSiteEvents(t *testing.T) {
	for file, op := range map[string]crawl.SiteOp{"site-add.json": crawl.SiteAdd, "site-disable.json": crawl.SiteDisable, "site-malformed.json": ""} {
		b, err := os.ReadFile(filepath.Join("..", "..", "events", file))
		if err != nil {
			t.Fatal(err)
		}
		if crawl.MessageType(b) != crawl.SiteEventType {
			t.Errorf("%s: not told apart from an enqueue event", file)
		}
		ev, err := crawl.ParseSiteEvent(b)
		if op == "" {
			if crawl.KindOf(err) != crawl.KindInvalid {
				t.Errorf("%s: %v, want an invalid event", file, err)
			}
			continue
		}
		if err != nil || ev.Op != op {
			t.Errorf("%s: %+v, %v; want op %s", file, ev, err, op)
		}
	}
}

func TestFiltersKey(t *testing.T) {
	a := []crawl.SiteFilter{{Pattern: "x", Type: crawl.FilterExclude}}
	keys := map[string]string{
		"none":        crawl.FiltersKey(nil),
		"one":         crawl.FiltersKey(a),
		"include":     crawl.FiltersKey([]crawl.SiteFilter{{Pattern: "x", Type: crawl.FilterInclude}}),
		"media":       crawl.FiltersKey([]crawl.SiteFilter{{Pattern: "x", Type: crawl.FilterExclude, Mode: crawl.FilterMedia}}),
		"two":         crawl.FiltersKey(append(a, crawl.SiteFilter{Pattern: "y", Type: crawl.FilterExclude})),
		"other order": crawl.FiltersKey([]crawl.SiteFilter{{Pattern: "y", Type: crawl.FilterExclude}, {Pattern: "x", Type: crawl.FilterExclude}}),
		"joined":      crawl.FiltersKey([]crawl.SiteFilter{{Pattern: "x\n0 0 1:y", Type: crawl.FilterExclude}}),
	}
	seen := map[string]string{}
	for name, k := range keys {
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s have one key", name, other)
		}
		seen[k] = name
	}
	if crawl.FiltersKey(a) != keys["one"] {
		t.Error("the same filters, another key")
	}
}

func TestSiteStateHolds(t *testing.T) {
	for _, tt := range []struct {
		st              crawl.SiteState
		found, enqueued bool
	}{
		{crawl.SiteActive, false, false},
		{crawl.SiteDisabled, true, true},
		{crawl.SiteSuspended, true, false},
	} {
		if got := tt.st.Holds(true); got != tt.found {
			t.Errorf("%s holds a URL found in a page: %v, want %v", tt.st, got, tt.found)
		}
		if got := tt.st.Holds(false); got != tt.enqueued {
			t.Errorf("%s holds a URL enqueued: %v, want %v", tt.st, got, tt.enqueued)
		}
	}
}
