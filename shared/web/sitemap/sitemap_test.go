package sitemap

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"testing"
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
