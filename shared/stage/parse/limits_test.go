package parse

import (
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
