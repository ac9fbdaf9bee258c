package handlers_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestLongLinksOnAWS: a page's links and canonical link longer than a
// DynamoDB key may be are not kept (schedule.TooLong), and take nothing
// down with them: the page's other links are crawled, the page is
// summarized, and nothing is dead-lettered. (A link of 2,049 to 8,192
// bytes used to fail its whole links message, one lookup refused by
// DynamoDB at a time, until the message was dead-lettered; a canonical
// link as long failed the page's summary.)
func TestLongLinksOnAWS(t *testing.T) {
	long := strings.Repeat("x", crawl.MaxKeptURLLength)
	site := newCountingSite(t, map[string]string{
		"/": `<html><head><title>Long links</title><link rel="canonical" href="/canonical?` + long + `"></head>` +
			`<body><p>See <a href="/a.html">a</a>, <a href="/long?` + long + `">long</a>, ` +
			`<a href="/` + strings.Repeat("é", 400) + `">longer once escaped</a> and ` +
			`<a href="http://exa mple.com/` + long + `">invalid and long</a>.</p></body></html>`,
		"/a.html": "<html><title>A</title><p>The page a.</p></html>",
	})
	h := newAWSHome(t, nil)
	h.maxWindow = 200 * time.Millisecond
	fs, _ := h.functions(1, nil)
	seed, _ := json.Marshal(crawl.EnqueueEvent{URL: site.URL + "/", Version: 1})
	h.run(fs, 2*time.Minute, seed)

	if n := site.count("/a.html"); n != 1 {
		t.Errorf("/a.html requested %d times, want 1", n)
	}
	if n := site.count("/long"); n != 0 {
		t.Errorf("the long link requested %d times, want 0", n)
	}
	ctx := t.Context()
	st, err := h.db.Status(ctx, site.URL+"/")
	if err != nil || st.Generation == nil || st.Generation.Title == nil || *st.Generation.Title != "Long links" {
		t.Errorf("status of the page: %+v, %v; want its generation summarized", st, err)
	}
	for _, n := range deadLetterQueues {
		if msgs := h.deadLetters(ctx, n, 0); len(msgs) != 0 {
			t.Errorf("%s holds %d messages, the first with reason %q", n, len(msgs), crawl.Truncate(msgs[0].Attributes["reason"], 300))
		}
	}
}
