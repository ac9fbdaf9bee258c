package sitemap

import (
	"bytes"
	"compress/gzip"
	"slices"
	"strings"
	"testing"
)

// FuzzParse: no input makes Parse panic, and what it returns stays
// within the protocol's bounds: at most MaxURLs URLs, none empty, no more
// text than it may read.
func FuzzParse(f *testing.F) {
	seeds := []string{
		`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://example.com/a</loc><lastmod>2024-01-01</lastmod></url></urlset>`,
		`<sitemapindex><sitemap><loc> https://example.com/s1.xml </loc></sitemap></sitemapindex>`,
		`<html><body>not a sitemap</body></html>`,
		`<urlset><url><loc>https://example.com/&amp;x</loc></url><url><loc></loc></url>`,
		`<urlset><url><loc><![CDATA[https://example.com/c]]></loc></url></urlset>`,
		`<urlset><url><loc>https://example.com/d</loc><lastmod>2024-05-06T07:08:09+02:00</lastmod><changefreq>Weekly</changefreq></url></urlset>`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	w.Write([]byte(seeds[0]))
	w.Close()
	f.Add(z.Bytes())
	f.Fuzz(func(t *testing.T, body []byte) {
		kind, entries, _ := ParseEntries(body)
		var urls []string
		for _, e := range entries {
			urls = append(urls, e.Loc)
			if e.ChangeFreq != "" && !slices.Contains(ChangeFreqs, e.ChangeFreq) {
				t.Fatalf("changefreq %q is not one of the protocol's", e.ChangeFreq)
			}
		}
		if kind == NotSitemap && len(urls) > 0 {
			t.Fatalf("not a sitemap, yet %d URLs", len(urls))
		}
		if len(urls) > MaxURLs {
			t.Fatalf("%d URLs, more than %d", len(urls), MaxURLs)
		}
		total := 0
		for _, u := range urls {
			if u == "" {
				t.Fatal("an empty URL")
			}
			total += len(u)
		}
		if total > MaxSize {
			t.Fatalf("%d bytes of URLs, more than the %d a sitemap may hold", total, MaxSize)
		}
	})
}

// FuzzParseText: no input makes ParseText panic; a URL set lists at
// most MaxURLs URLs, each an absolute http(s) URL without spaces, and a
// text lists none.
func FuzzParseText(f *testing.F) {
	for _, s := range []string{
		"http://example.com/a\nhttps://example.com/b\n",
		"\ufeffhttp://example.com/a\r\n\r\n",
		"http://example.com/a\nnot a URL\n",
		"HTTP://a\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		kind, entries := ParseText(text)
		if kind == NotSitemap && len(entries) > 0 || kind == Index {
			t.Fatalf("kind %v with %d entries", kind, len(entries))
		}
		if len(entries) > MaxURLs {
			t.Fatalf("%d entries, past MaxURLs", len(entries))
		}
		for _, e := range entries {
			l := strings.ToLower(e.Loc)
			if !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") || strings.IndexFunc(e.Loc, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
				t.Fatalf("entry %q is not an absolute http(s) URL without spaces or control characters", e.Loc)
			}
		}
	})
}
