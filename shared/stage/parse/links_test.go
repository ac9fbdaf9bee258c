package parse

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/blobfs"
)

// TestLinksPacked: packed into few enqueue events (LinksPerMessage) or
// sent one a message, a page's links stand for the same events, in the
// same order, with the overflow past MaxURLsFromPage kept apart; every
// message parses (none carries a URL longer than an event may), and
// stays within SQS's message size.
func TestLinksPacked(t *testing.T) {
	var page strings.Builder
	page.WriteString("<!doctype html><title>Links</title>")
	for i := range 2500 {
		fmt.Fprintf(&page, `<a href="/p/%d?a=1&amp;b=%d">p</a>`, i, i)
	}
	page.WriteString(`<a href="/p/1?a=1&amp;b=1">again</a><a rel=nofollow href="/hidden">x</a><a href="http://[bad/">bad</a>`)
	long := strings.Repeat("x", 1000)
	for i := range 400 {
		fmt.Fprintf(&page, `<a href="/long/%d/%s">l</a>`, i, long)
	}
	// Longer than an event may carry, valid and not: no message is sent
	// for them, rather than one the scheduler cannot read.
	huge := strings.Repeat("y", crawl.MaxURLLength)
	fmt.Fprintf(&page, `<a href="/huge/%s">h</a><a href="http://[bad/%s">hb</a>`, huge, huge)

	type link struct {
		URL      string
		Overflow bool
		Hops     int
		Parent   string
	}
	run := func(t *testing.T, perMessage int) ([]link, int) {
		ctx := context.Background()
		blobs, err := blobfs.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(page.String())
		key := crawl.BodyKey(body)
		if err := blobs.Put(ctx, key, body); err != nil {
			t.Fatal(err)
		}
		var enq, sum sent
		p := New(blobs, noCanonical{}, &enq, &sum, Config{MaxURLsFromPage: 1200, LinksPerMessage: perMessage}, slog.New(slog.DiscardHandler))
		if err := p.Handle(ctx, crawl.ParseTask{URL: "http://example.com/", CrawlUUID: "c1", BodyKey: key, MIMEType: "text/html", Hops: 3}); err != nil {
			t.Fatal(err)
		}
		var links []link
		for _, b := range enq.bodies {
			if len(b) > 256<<10 {
				t.Errorf("a message of %d bytes, over SQS's 256 KiB", len(b))
			}
			ev, err := crawl.ParseEnqueueEvent(b)
			if err != nil {
				t.Fatalf("a message the scheduler cannot read (%d bytes): %v", len(b), err)
			}
			for _, e := range ev.Each() {
				links = append(links, link{e.URL, e.Overflow, e.Hops, e.Parent})
			}
		}
		return links, len(enq.bodies)
	}
	one, n1 := run(t, 1)
	if n1 != len(one) || len(one) < 2900 {
		t.Fatalf("one link a message: %d messages for %d links", n1, len(one))
	}
	if one[0].Overflow || !one[1200].Overflow || one[0].Hops != 4 || one[0].Parent != "http://example.com/" {
		t.Errorf("links: first %+v, 1201st %+v; want the overflow past 1200 marked, hops 4, the page as parent", one[0], one[1200])
	}
	for _, per := range []int{7, 1000, 5000} {
		t.Run(fmt.Sprint(per, " a message"), func(t *testing.T) {
			packed, n := run(t, per)
			if !reflect.DeepEqual(packed, one) {
				t.Fatalf("packed links differ from one a message (%d and %d links)", len(packed), len(one))
			}
			// 1,200 followed and 1,700 overflow links (400 of them 1 KB
			// long, so split by size), plus the one invalid link alone.
			if max := len(one)/min(per, crawl.MaxEventURLs) + 6; n > max {
				t.Errorf("%d messages for %d links at %d a message, want at most %d", n, len(one), per, max)
			}
		})
	}
}

// TestTooLongLinksTakeNoSlot: a link longer than the crawler keeps
// (recorded too-long by the scheduler) is sent, and takes none of the
// page's MaxURLsFromPage: the page's ordinary links after it are followed.
func TestTooLongLinksTakeNoSlot(t *testing.T) {
	ctx := context.Background()
	blobs, err := blobfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	page.WriteString(`<title>Long links first</title>`)
	for i := range 3 {
		fmt.Fprintf(&page, `<a href="/long/%d/%s">l</a>`, i, strings.Repeat("x", crawl.MaxKeptURLLength))
	}
	page.WriteString(`<a href="/a">a</a><a href="/b">b</a><a href="/c">c</a>`)
	body := []byte(page.String())
	key := crawl.BodyKey(body)
	if err := blobs.Put(ctx, key, body); err != nil {
		t.Fatal(err)
	}
	for _, per := range []int{1, 100} {
		var enq, sum sent
		p := New(blobs, noCanonical{}, &enq, &sum, Config{MaxURLsFromPage: 2, LinksPerMessage: per}, slog.New(slog.DiscardHandler))
		if err := p.Handle(ctx, crawl.ParseTask{URL: "http://example.com/", CrawlUUID: "c1", BodyKey: key, MIMEType: "text/html"}); err != nil {
			t.Fatal(err)
		}
		followed, overflow, long := map[string]bool{}, map[string]bool{}, 0
		for _, b := range enq.bodies {
			ev, err := crawl.ParseEnqueueEvent(b)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ev.Each() {
				switch {
				case len(e.URL) > crawl.MaxKeptURLLength:
					long++
					if e.Overflow {
						t.Errorf("%d a message: a too-long link marked past MaxURLsFromPage", per)
					}
				case e.Overflow:
					overflow[e.URL] = true
				default:
					followed[e.URL] = true
				}
			}
		}
		if long != 3 || !followed["http://example.com/a"] || !followed["http://example.com/b"] || !overflow["http://example.com/c"] {
			t.Errorf("%d a message: %d too-long links sent, followed %v, past the limit %v; want 3, a and b, c", per, long, followed, overflow)
		}
	}
}

// TestSitemapURLsTooLong: a sitemap's URL longer than an event may carry
// is not sent (the scheduler could not read the event, and would
// dead-letter it); the sitemap's other URLs are.
func TestSitemapURLsTooLong(t *testing.T) {
	ctx := context.Background()
	blobs, err := blobfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
		`<url><loc>http://example.com/a</loc></url>` +
		`<url><loc>http://example.com/` + strings.Repeat("x", crawl.MaxURLLength) + `</loc></url>` +
		`<url><loc>http://example.com/b</loc></url></urlset>`)
	key := crawl.BodyKey(body)
	if err := blobs.Put(ctx, key, body); err != nil {
		t.Fatal(err)
	}
	var enq, sum sent
	p := New(blobs, noCanonical{}, &enq, &sum, Config{}, slog.New(slog.DiscardHandler))
	if err := p.Handle(ctx, crawl.ParseTask{URL: "http://example.com/sitemap.xml", CrawlUUID: "c1", BodyKey: key, MIMEType: "application/xml"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range enq.bodies {
		ev, err := crawl.ParseEnqueueEvent(b)
		if err != nil {
			t.Fatalf("an event the scheduler cannot read: %v", err)
		}
		got = append(got, ev.URL)
	}
	if want := []string{"http://example.com/a", "http://example.com/b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("enqueued %q, want %q", got, want)
	}
}

// TestInvalidLinksPacked: hrefs that are no URL are sent once each,
// packed as links are (a page of thousands of them is a few messages,
// each within SQS's size however JSON escapes them), and do not count
// toward MaxURLsFromPage; one too long to record is not sent.
func TestInvalidLinksPacked(t *testing.T) {
	ctx := context.Background()
	blobs, err := blobfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	page.WriteString(`<title>Bad links</title><a href="/ok">ok</a>`)
	for i := range 3000 {
		fmt.Fprintf(&page, `<a href="http://[bad%d/">b</a>`, i%1500)
	}
	// Hrefs that JSON makes six times longer (control characters), and
	// one too long to record.
	for i := range 100 {
		fmt.Fprintf(&page, `<a href="http://[ctl%d/%s">c</a>`, i, strings.Repeat("\x01", 2000))
	}
	fmt.Fprintf(&page, `<a href="http://[long/%s">l</a>`, strings.Repeat("x", crawl.MaxKeptURLLength))
	body := []byte(page.String())
	key := crawl.BodyKey(body)
	if err := blobs.Put(ctx, key, body); err != nil {
		t.Fatal(err)
	}
	var enq, sum sent
	p := New(blobs, noCanonical{}, &enq, &sum, Config{MaxURLsFromPage: 1, LinksPerMessage: 1000}, slog.New(slog.DiscardHandler))
	if err := p.Handle(ctx, crawl.ParseTask{URL: "http://example.com/", CrawlUUID: "c1", BodyKey: key, MIMEType: "text/html"}); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, b := range enq.bodies {
		if len(b) > crawl.MaxMessageBytes {
			t.Errorf("a message of %d bytes, over SQS's %d", len(b), crawl.MaxMessageBytes)
		}
		ev, err := crawl.ParseEnqueueEvent(b)
		if err != nil {
			t.Fatalf("a message the scheduler cannot read: %v", err)
		}
		for _, e := range ev.Each() {
			count[e.URL]++
			if e.Overflow {
				t.Errorf("%s marked past MaxURLsFromPage", e.URL)
			}
		}
	}
	if len(count) != 1601 || count["http://example.com/ok"] != 1 || count["http://[bad7/"] != 1 {
		t.Errorf("%d URLs sent (ok %d, one invalid %d times), want 1,601, each once", len(count), count["http://example.com/ok"], count["http://[bad7/"])
	}
	if len(enq.bodies) > 10 {
		t.Errorf("%d messages for 1,601 URLs, want at most 10", len(enq.bodies))
	}
}
