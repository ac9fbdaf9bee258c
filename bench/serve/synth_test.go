package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

var hrefRE = regexp.MustCompile(`<a href="([^"]*)"`)

// TestSynthSite walks sites of a few sizes from /index.html: every page
// is reachable, has 50 to 300 links and about 5 to 20 KB of text, and renders
// the same twice.
func TestSynthSite(t *testing.T) {
	for _, n := range []int{1, 2, 11, 1000} {
		s := synth{n: n, seed: 1}
		seen := map[int]bool{0: true}
		todo := []int{0}
		for len(todo) > 0 {
			i := todo[0]
			todo = todo[1:]
			page := s.page(i)
			if !bytes.Equal(page, s.page(i)) {
				t.Fatalf("n=%d: page %d differs between two renderings", n, i)
			}
			hrefs := hrefRE.FindAllSubmatch(page, -1)
			if len(hrefs) < 50 || len(hrefs) > 300 {
				t.Errorf("n=%d: page %d has %d links, want 50 to 300", n, i, len(hrefs))
			}
			if text := len(textOf(page)); text < 5000 || text > 20500 {
				t.Errorf("n=%d: page %d has %d bytes of paragraph text, want about 5,000 to 20,000", n, i, text)
			}
			for _, h := range hrefs {
				href := string(h[1])
				if strings.HasPrefix(href, "https://") || strings.HasPrefix(href, "#") {
					continue
				}
				path, _, _ := strings.Cut(href, "#")
				j, ok := s.pageNumber(path)
				if !ok {
					t.Fatalf("n=%d: page %d links to %q, which is not a page", n, i, href)
				}
				if !seen[j] {
					seen[j] = true
					todo = append(todo, j)
				}
			}
		}
		if len(seen) != n {
			t.Errorf("n=%d: %d pages reachable from /index.html, want all", n, len(seen))
		}
	}
}

// textOf is the words of a page's paragraphs, without their markup.
func textOf(page []byte) string {
	var b strings.Builder
	for _, p := range regexp.MustCompile(`(?s)<p>(.*?)</p>`).FindAllSubmatch(page, -1) {
		b.WriteString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(string(p[1]), ""))
	}
	return b.String()
}

func TestSynthServe(t *testing.T) {
	srv := httptest.NewServer(synth{n: 100, seed: 1})
	defer srv.Close()
	tests := []struct {
		path   string
		status int
	}{
		{"/index.html", http.StatusOK},
		{"/p/1.html", http.StatusOK},
		{"/p/99.html", http.StatusOK},
		{"/robots.txt", http.StatusOK},
		{"/", http.StatusNotFound},
		{"/p/0.html", http.StatusNotFound}, // page 0 is /index.html
		{"/p/100.html", http.StatusNotFound},
		{"/p/07.html", http.StatusNotFound},
		{"/p/x.html", http.StatusNotFound},
	}
	for _, tt := range tests {
		resp, err := http.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("GET %s: %d, want %d", tt.path, resp.StatusCode, tt.status)
		}
	}

	// A conditional request with the page's ETag or Last-Modified is
	// answered 304.
	resp, err := http.Get(srv.URL + "/p/5.html")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, h := range []struct{ name, value string }{
		{"If-None-Match", resp.Header.Get("ETag")},
		{"If-Modified-Since", resp.Header.Get("Last-Modified")},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/p/5.html", nil)
		req.Header.Set(h.name, h.value)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("GET with %s: %q: %d, want 304", h.name, h.value, resp.StatusCode)
		}
	}
}
