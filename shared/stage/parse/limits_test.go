package parse

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestNestedHeadingsStayBounded: each nested <h1> used to copy the rest
// of the document; a few hundred of them over megabytes of text took
// gigabytes. The headline is bounded now.
func TestNestedHeadingsStayBounded(t *testing.T) {
	body := "<title>t</title>" + strings.Repeat("<h1>x<div>", 250) + strings.Repeat("word ", 800_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	doc := Extract("http://example.com/", body, "")
	runtime.ReadMemStats(&after)
	if doc.Headline == nil || len(*doc.Headline) > 8<<10 {
		t.Fatalf("headline %v", doc.Headline)
	}
	// A limit on allocation, not on time: before the fix this was ~5.5 GB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 400<<20 {
		t.Errorf("extracting a 4 MB page allocated %d MiB", alloc>>20)
	}
}

// TestDeeplyNestedPageReadFlat: html.Parse refuses nesting deeper than
// 512 elements; the page's text and links are still read.
func TestDeeplyNestedPageReadFlat(t *testing.T) {
	body := "<html lang=de><title>Tief</title>" + strings.Repeat("<div>", 600) +
		`<p>Tief verschachtelt</p><a href="/next.html">weiter</a>` + strings.Repeat("</div>", 600)
	doc := Extract("http://example.com/deep", body, "")
	if len(doc.Links) != 1 || doc.Links[0].URL != "http://example.com/next.html" || doc.Links[0].Text == nil || *doc.Links[0].Text != "weiter" {
		t.Errorf("links %+v", doc.Links)
	}
	if !strings.Contains(doc.Text.Text, "Tief verschachtelt") || doc.Title == nil || *doc.Title != "Tief" {
		t.Errorf("text %q title %v", doc.Text.Text, doc.Title)
	}
	if doc.Language == nil || *doc.Language != "de" || len(doc.Warnings) != 1 {
		t.Errorf("language %v warnings %v", doc.Language, doc.Warnings)
	}
}

// TestHugePageReadAsStream: a page over MaxTreeSize is read as a stream
// of tokens, not a tree: its text and every link are still there, the
// repeated link texts shared, and the document says how it was read.
func TestHugePageReadAsStream(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html lang=en><title>Huge</title><body>`)
	n := 0
	for b.Len() <= MaxTreeSize {
		fmt.Fprintf(&b, "<p>Paragraph %d, <a href=\"/p%d.html#s\">next</a> and more words.</p>\n", n, n%100)
		n++
	}
	b.WriteString(`<p>The last paragraph.</p></body></html>`)
	doc := Extract("http://example.com/huge", b.String(), "")
	if len(doc.Links) != n {
		t.Fatalf("%d links, want %d", len(doc.Links), n)
	}
	first, last := doc.Links[0], doc.Links[n-1]
	if first.URL != "http://example.com/p0.html" || first.Text == nil || *first.Text != "next" || first.Fragment == nil || *first.Fragment != "s" {
		t.Errorf("first link %+v", first)
	}
	if last.Text != first.Text || last.Fragment != doc.Links[n-101].Fragment {
		t.Errorf("repeated link texts and fragments are not shared")
	}
	if !strings.Contains(doc.Text.Text, "The last paragraph.") || !strings.Contains(doc.Text.Text, "Paragraph 0, next and more words.") {
		t.Errorf("text %q...", doc.Text.Text[:200])
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "read flat") {
		t.Errorf("warnings %v", doc.Warnings)
	}
}

// TestParseRoom: MaxBytesInParse is the parser's room (crawl.Room, whose
// own test says how it bounds); 0 leaves it unbounded.
func TestParseRoom(t *testing.T) {
	for _, tc := range []struct {
		bound   int64
		bounded bool
	}{{10, true}, {0, false}} {
		p := New(nil, nil, nil, nil, Config{MaxBytesInParse: tc.bound}, nil)
		if (p.room != nil) != tc.bounded {
			t.Errorf("MaxBytesInParse %d: room %v, want bounded %v", tc.bound, p.room, tc.bounded)
		}
	}
}
