package crawl_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// FuzzParseEnqueueEvent: any message body either is refused as bad input
// or decodes to an event that validates and survives a round trip
// (re-encoded, it decodes to the same event).
func FuzzParseEnqueueEvent(f *testing.F) {
	for _, s := range []string{
		`https://example.com/`, `{"url":"https://example.com/"}`, `"https://example.com/a b"`,
		`{"v":1,"url":"https://example.com/a","site":"example.com","priority":3,"hops":1,"max_depth":2,"enqueue_type":"forced","metadata":{"k":[1,2]}}`,
		`{"urls":["https://example.com/a","https://example.com/b"],"hops":1}`, `{"url":"x","urls":["y"]}`, `{"url":"x","hops":-1}`, `{"url":"x"} trailing`, `{"url":"x","unknown":1}`, ``, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := crawl.ParseEnqueueEvent(body)
		if err != nil {
			if crawl.KindOf(err) != crawl.KindInvalid {
				t.Fatalf("refused with kind %v, want invalid input: %v", crawl.KindOf(err), err)
			}
			return
		}
		if err := ev.Validate(); err != nil {
			t.Fatalf("decoded an event that does not validate: %v", err)
		}
		for _, e := range ev.Each() {
			if err := e.Validate(); err != nil || e.URL == "" {
				t.Fatalf("an event of %d URLs stands for one that does not validate (%q): %v", len(ev.URLs), e.URL, err)
			}
		}
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("re-encode %+v: %v", ev, err)
		}
		again, err := crawl.ParseEnqueueEvent(b)
		if err != nil {
			t.Fatalf("the re-encoded event %s is refused: %v", b, err)
		}
		if !reflect.DeepEqual(normalJSON(t, ev), normalJSON(t, again)) {
			t.Fatalf("round trip changed the event:\n%+v\n%+v", ev, again)
		}
	})
}

// normalJSON is an event as generic JSON, so that metadata numbers
// compare alike after a round trip.
func normalJSON(t *testing.T, ev crawl.EnqueueEvent) any {
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
