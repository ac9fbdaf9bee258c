package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestParse(t *testing.T) {
	urlset := `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> http://example.org/a.html </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc>http://example.org/b.html?x=1&amp;y=2</loc></url>
</urlset>`
	index := `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>http://example.org/sm1.xml.gz</loc></sitemap></sitemapindex>`
	tests := []struct {
		name string
		body []byte
		kind Kind
		urls []string
	}{
		{"urlset", []byte(urlset), URLSet, []string{"http://example.org/a.html", "http://example.org/b.html?x=1&y=2"}},
		{"gzipped urlset", gz(urlset), URLSet, []string{"http://example.org/a.html", "http://example.org/b.html?x=1&y=2"}},
		{"index", []byte(index), Index, []string{"http://example.org/sm1.xml.gz"}},
		{"rss is not a sitemap", []byte(`<rss><channel><link>http://x/</link></channel></rss>`), NotSitemap, nil},
		{"garbage", []byte("not xml at all <<<"), NotSitemap, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, urls, err := Parse(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if kind != tt.kind || !reflect.DeepEqual(urls, tt.urls) {
				t.Errorf("Parse = %v %v, want %v %v", kind, urls, tt.kind, tt.urls)
			}
		})
	}
}

func TestParseBoundsGzipBomb(t *testing.T) {
	// 60 MB of zeros inside a urlset compress to ~60 KB; reading stops at MaxSize.
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte("<urlset><url><loc>http://e/1</loc></url><!--"))
	w.Write(make([]byte, 60<<20))
	w.Close()
	kind, urls, _ := Parse(b.Bytes())
	if kind != URLSet || len(urls) != 1 {
		t.Errorf("got %v %v", kind, urls)
	}
}

func TestParseEntries(t *testing.T) {
	body := `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
	<url><loc>https://example.com/a</loc><lastmod>2024-05-06</lastmod><changefreq>daily</changefreq></url>
	<url><loc>https://example.com/b</loc><lastmod>2024-05-06T07:08:09+02:00</lastmod><changefreq>Weekly</changefreq></url>
	<url><loc>https://example.com/c</loc><lastmod>last tuesday</lastmod><changefreq>sometimes</changefreq></url>
	<url><lastmod>2024-01-01</lastmod></url>
	</urlset>`
	kind, got, err := ParseEntries([]byte(body))
	if err != nil || kind != URLSet {
		t.Fatalf("kind %v, %v", kind, err)
	}
	want := []Entry{
		{Loc: "https://example.com/a", LastMod: time.Date(2024, 5, 6, 0, 0, 0, 0, time.UTC), ChangeFreq: "daily"},
		{Loc: "https://example.com/b", LastMod: time.Date(2024, 5, 6, 5, 8, 9, 0, time.UTC), ChangeFreq: "weekly"},
		{Loc: "https://example.com/c"}, // unreadable hints are left out
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Loc != want[i].Loc || !got[i].LastMod.Equal(want[i].LastMod) || got[i].ChangeFreq != want[i].ChangeFreq {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParseText(t *testing.T) {
	tests := []struct {
		name string
		body string
		kind Kind
		urls []string
	}{
		{"one URL a line", "http://example.com/a\nhttps://example.com/b?x=1\n", URLSet,
			[]string{"http://example.com/a", "https://example.com/b?x=1"}},
		{"blank lines, CRLF, a BOM, spaces around", "\ufeffhttp://example.com/a\r\n\r\n  HTTPS://example.com/b  \r\n", URLSet,
			[]string{"http://example.com/a", "HTTPS://example.com/b"}},
		{"the shortest URL", "http://a\n", URLSet, []string{"http://a"}},
		{"a line of prose is a text", "http://example.com/a\nSee the tide tables.\n", NotSitemap, nil},
		{"a relative URL is a text", "/a.html\n", NotSitemap, nil},
		{"another scheme is a text", "ftp://example.com/a\n", NotSitemap, nil},
		{"a scheme alone is a text", "http://\n", NotSitemap, nil},
		{"a URL with a space is a text", "http://example.com/a b\n", NotSitemap, nil},
		{"empty", "\n\n", NotSitemap, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, entries := ParseText(tt.body)
			var urls []string
			for _, e := range entries {
				urls = append(urls, e.Loc)
			}
			if kind != tt.kind || !slices.Equal(urls, tt.urls) {
				t.Errorf("kind %v, URLs %q; want %v, %q", kind, urls, tt.kind, tt.urls)
			}
		})
	}
	t.Run("at most MaxURLs", func(t *testing.T) {
		body := strings.Repeat("http://example.com/p\n", MaxURLs+10)
		if kind, entries := ParseText(body); kind != URLSet || len(entries) != MaxURLs {
			t.Errorf("kind %v, %d entries; want a URL set of %d", kind, len(entries), MaxURLs)
		}
	})
}

// TestParseEntriesAtMost: a sitemap of more than MaxURLs URLs gives the
// first MaxURLs and says the rest were left out; one of exactly MaxURLs
// says nothing.
func TestParseEntriesAtMost(t *testing.T) {
	urlset := func(n int) []byte {
		var b strings.Builder
		b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := range n {
			fmt.Fprintf(&b, "<url><loc>https://example.com/%d</loc></url>\n", i)
		}
		b.WriteString("</urlset>")
		return []byte(b.String())
	}
	tests := []struct {
		name string
		n    int
		err  error
	}{
		{"exactly the limit", MaxURLs, nil},
		{"past the limit", MaxURLs + 10, ErrTooManyURLs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, entries, err := ParseEntries(urlset(tt.n))
			if kind != URLSet || len(entries) != MaxURLs || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
				t.Errorf("kind %v, %d entries, %v; want a URL set of %d, %v", kind, len(entries), err, MaxURLs, tt.err)
			}
		})
	}
}
