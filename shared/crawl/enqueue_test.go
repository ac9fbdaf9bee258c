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

func TestParseEnqueueEvent(t *testing.T) {
	two := 2
	tests := []struct {
		name    string
		body    string
		want    crawl.EnqueueEvent
		wantErr string // set: a KindInvalid error whose message contains it
	}{
		{
			name: "JSON object, every field",
			body: `{"v":1,"url":"https://example.com/a","site":"example.com","priority":3,"hops":1,"max_depth":2,
				"enqueue_type":"forced","metadata":{"k":"v"},"parent":"https://example.com/","n_redirs":1,
				"orig_url":"http://example.com/a","redirect_chain":["http://example.com/a"],"seed":true,"overflow":true}`,
			want: crawl.EnqueueEvent{Version: 1, URL: "https://example.com/a", Site: "example.com", Priority: 3, Hops: 1,
				MaxDepth: &two, EnqueueType: crawl.EnqueueForced, Metadata: map[string]any{"k": "v"},
				Parent: "https://example.com/", NRedirs: 1, OrigURL: "http://example.com/a",
				RedirectChain: []string{"http://example.com/a"}, Seed: true, Overflow: true},
		},
		{
			name: "JSON object, defaults filled in",
			body: `{"url":"https://example.com/"}`,
			want: crawl.EnqueueEvent{Version: crawl.EnqueueVersion, URL: "https://example.com/", EnqueueType: crawl.EnqueueNone},
		},
		{
			name: "JSON object with surrounding space",
			body: "\n  {\"url\":\"https://example.com/\", \"enqueue_type\":\"status\"}\n",
			want: crawl.EnqueueEvent{Version: 1, URL: "https://example.com/", EnqueueType: crawl.EnqueueStatus},
		},
		{
			name: "explicit version 0 reads as version 1",
			body: `{"v":0,"url":"https://example.com/"}`,
			want: crawl.EnqueueEvent{Version: 1, URL: "https://example.com/", EnqueueType: crawl.EnqueueNone},
		},
		{
			name: "bare URL",
			body: "https://example.com/a?b=c",
			want: crawl.EnqueueEvent{Version: 1, URL: "https://example.com/a?b=c", EnqueueType: crawl.EnqueueNone},
		},
		{
			name: "bare URL with a trailing newline",
			body: "https://example.com/\n",
			want: crawl.EnqueueEvent{Version: 1, URL: "https://example.com/", EnqueueType: crawl.EnqueueNone},
		},
		{
			name: "JSON string",
			body: `"https://example.com/a b"`,
			want: crawl.EnqueueEvent{Version: 1, URL: "https://example.com/a b", EnqueueType: crawl.EnqueueNone},
		},
		{
			name: "several URLs in one event",
			body: `{"urls":["https://example.com/a","https://example.com/b"],"hops":2,"parent":"https://example.com/"}`,
			want: crawl.EnqueueEvent{Version: 1, URLs: []string{"https://example.com/a", "https://example.com/b"}, Hops: 2,
				Parent: "https://example.com/", EnqueueType: crawl.EnqueueNone},
		},
		{name: "url and urls", body: `{"url":"https://example.com/","urls":["https://example.com/a"]}`, wantErr: `give "url" or "urls", not both`},
		{name: "an empty URL in urls", body: `{"urls":["https://example.com/a"," "]}`, wantErr: `"urls"[1] is empty`},
		{name: "a URL in urls too long", body: `{"urls":["https://example.com/` + strings.Repeat("a", 8192) + `"]}`, wantErr: `"urls"[0] is 8212 bytes long`},
		{name: "too many urls", body: `{"urls":[` + strings.Repeat(`"https://example.com/",`, 1000) + `"https://example.com/"]}`, wantErr: `"urls" has 1001 URLs, more than the 1000`},
		{name: "empty urls", body: `{"urls":[]}`, wantErr: `"url" (or "urls") is required`},
		{name: "empty body", body: "", wantErr: "empty message"},
		{name: "not UTF-8", body: "http://example.com/\xb5", wantErr: "message is not UTF-8 text"},
		{name: "hops past the bound", body: `{"url":"https://example.com/","hops":1000001}`, wantErr: `"hops" must be from 0 to 1000000`},
		{name: "max_depth past the bound", body: `{"url":"https://example.com/","max_depth":1000001}`, wantErr: `"max_depth" must be from 0 to 1000000`},
		{name: "priority past the bound", body: `{"url":"https://example.com/","priority":-1000001}`, wantErr: `"priority" must be from -1000000 to 1000000`},
		{name: "URL too long", body: `{"url":"https://example.com/` + strings.Repeat("a", 8192) + `"}`, wantErr: `more than the 8192 a URL may have`},
		{name: "site too long", body: `{"url":"https://example.com/","site":"` + strings.Repeat("a", 8193) + `"}`, wantErr: `"site" is 8193 bytes long`},
		{name: "only white space", body: " \n\t ", wantErr: "empty message"},
		{name: "unknown field", body: `{"url":"https://example.com/","depth":3}`, wantErr: `unknown field "depth"`},
		{name: "bad enqueue_type", body: `{"url":"https://example.com/","enqueue_type":"now"}`, wantErr: `"enqueue_type" must be one of`},
		{name: "negative hops", body: `{"url":"https://example.com/","hops":-1}`, wantErr: `"hops" must be from 0 to 1000000, got -1`},
		{name: "negative max_depth", body: `{"url":"https://example.com/","max_depth":-3}`, wantErr: `"max_depth" must be from 0 to 1000000, got -3`},
		{name: "version too new", body: `{"v":2,"url":"https://example.com/"}`, wantErr: "schema version 2 is newer"},
		{name: "negative version", body: `{"v":-1,"url":"https://example.com/"}`, wantErr: `"v" must be`},
		{name: "missing url", body: `{"hops":1}`, wantErr: `"url" (or "urls") is required`},
		{name: "blank url", body: `{"url":"  "}`, wantErr: `"url" (or "urls") is required`},
		{name: "null url", body: `{"url":null}`, wantErr: `"url" (or "urls") is required`},
		{name: "empty JSON string", body: `""`, wantErr: `"url" (or "urls") is required`},
		{name: "wrong field type", body: `{"url":"https://example.com/","hops":"1"}`, wantErr: "not a valid enqueue event"},
		{name: "truncated JSON object", body: `{"url":"https://example.com/"`, wantErr: "not a valid enqueue event"},
		{name: "trailing data after the object", body: `{"url":"https://example.com/"} {"url":"https://example.org/"}`, wantErr: "after the JSON object"},
		{name: "trailing garbage after the object", body: `{"url":"https://example.com/"}x`, wantErr: "after the JSON object"},
		{name: "unterminated JSON string", body: `"https://example.com/`, wantErr: "not a valid JSON string"},
		{name: "two words of plain text", body: "https://example.com/ https://example.org/", wantErr: "single URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := crawl.ParseEnqueueEvent([]byte(tt.body))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("ParseEnqueueEvent(%q) = %+v, want an error", tt.body, got)
				}
				if k := crawl.KindOf(err); k != crawl.KindInvalid {
					t.Errorf("KindOf(%v) = %v, want KindInvalid", err, k)
				}
				if crawl.IsTransient(err) {
					t.Errorf("%v is transient", err)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("error %q does not say %q", err, tt.wantErr)
				}
				if !reflect.DeepEqual(got, crawl.EnqueueEvent{}) {
					t.Errorf("an error came with an event: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseEnqueueEvent(%q): %v", tt.body, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseEnqueueEvent(%q):\ngot  %+v\nwant %+v", tt.body, got, tt.want)
			}
			if err := got.Validate(); err != nil {
				t.Errorf("parsed event does not validate: %v", err)
			}
		})
	}
}

func TestParseEnqueueEventRoundTrip(t *testing.T) {
	// What the parser and fetch stage send must read back unchanged.
	md := 0
	evs := []crawl.EnqueueEvent{
		{Version: 1, URL: "https://example.com/x", Hops: 2, MaxDepth: &md, Parent: "https://example.com/", EnqueueType: crawl.EnqueueNone},
		{Version: 1, URL: "https://example.com/y", NRedirs: 2, OrigURL: "http://example.com/y",
			RedirectChain: []string{"http://example.com/y", "https://example.com/y0"}, EnqueueType: crawl.EnqueueReenqueued},
		{Version: 1, URL: "https://example.com/", Seed: true, EnqueueType: crawl.EnqueueNone},
	}
	for _, ev := range evs {
		t.Run(ev.URL, func(t *testing.T) {
			b := mustJSON(t, ev)
			got, err := crawl.ParseEnqueueEvent(b)
			if err != nil {
				t.Fatalf("ParseEnqueueEvent(%s): %v", b, err)
			}
			if !reflect.DeepEqual(got, ev) {
				t.Errorf("round trip of %s:\ngot  %+v\nwant %+v", b, got, ev)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEach: an event of several URLs stands for one event per URL, with
// the other fields shared; an event of one URL stands for itself.
func TestEach(t *testing.T) {
	two := 2
	ev := crawl.EnqueueEvent{URLs: []string{"http://a/", "http://b/"}, Hops: 1, MaxDepth: &two, Parent: "http://p/", Overflow: true}
	got := ev.Each()
	if len(got) != 2 {
		t.Fatalf("%d events, want 2", len(got))
	}
	for i, u := range []string{"http://a/", "http://b/"} {
		want := crawl.EnqueueEvent{URL: u, Hops: 1, MaxDepth: &two, Parent: "http://p/", Overflow: true}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want)
		}
	}
	one := crawl.EnqueueEvent{URL: "http://a/"}
	if got := one.Each(); len(got) != 1 || !reflect.DeepEqual(got[0], one) {
		t.Errorf("one URL: %+v", got)
	}
}

// TestSampleEvents: the sample enqueue events in events/ (the README's
// and the e2e test's fixtures) read as documented.
func TestSampleEvents(t *testing.T) {
	for file, urls := range map[string]int{"enqueue-message.json": 1, "enqueue-urls.json": 3, "enqueue-url.txt": 1, "enqueue-malformed.json": 0} {
		b, err := os.ReadFile(filepath.Join("..", "..", "events", file))
		if err != nil {
			t.Fatal(err)
		}
		ev, err := crawl.ParseEnqueueEvent(b)
		if urls == 0 {
			if crawl.KindOf(err) != crawl.KindInvalid {
				t.Errorf("%s: %v, want an invalid event", file, err)
			}
			continue
		}
		if err != nil || len(ev.Each()) != urls {
			t.Errorf("%s: %d events, %v; want %d", file, len(ev.Each()), err, urls)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aééé", 4, "aé…"}, // not inside the second é
		{"HTTP \x80\x80\x80\x80\x80\x80\x80", 10, "HTTP \x80\x80…"}, // bytes that are no UTF-8: cut where n says, less at most three
	} {
		if got := crawl.Truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
