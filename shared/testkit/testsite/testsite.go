// Package testsite serves a site of known shape for tests: ordinary
// pages linked every way a page can link (relative, ./ and ../,
// root-relative, protocol-relative, absolute, with fragments and
// queries), redirects, non-HTML files, slow, failing and hanging pages,
// and links that must not be followed (other hosts, mailto:,
// javascript:, invalid URLs). It logs every request it receives.
package testsite

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"time"
)

// Request is one request the site received.
type Request struct {
	Path      string // path and query
	UserAgent string
	At        time.Time
}

// Site is a running test site.
type Site struct {
	*httptest.Server
	mu   sync.Mutex
	log  []Request
	hang time.Duration // how long /hang waits before answering
}

// Ordinary lists the paths of the pages a crawl must reach and store.
var Ordinary = []string{
	"/", "/about.html", "/contact.html", "/news/", "/news/2024.html", "/news/2025.html",
	"/news/archive/", "/news/archive/2023.html", "/news/archive/2022.html",
	"/docs/", "/docs/intro.html", "/docs/install.html", "/docs/usage.html", "/docs/faq.html",
	"/docs/api/", "/docs/api/v1.html", "/docs/api/v2.html", "/docs/api/errors.html",
	"/team/", "/team/alice.html", "/team/bob.html", "/team/carol.html",
	"/products/", "/products/lamp.html", "/products/lens.html", "/products/horn.html",
	"/search?q=lamps", "/search?q=lenses", "/deep/1.html", "/deep/2.html", "/deep/3.html",
	"/slow.html", "/redirected-target.html", "/final.html", "/Mixed-Case.html", "/space%20name.html",
}

// Files lists the non-HTML files a crawl must reach, with their MIME type.
var Files = map[string]string{
	"/files/report.pdf":  "application/pdf",
	"/files/logo.png":    "image/png",
	"/files/notes.txt":   "text/plain",
	"/files/data.csv":    "text/csv",
	"/files/feed.xml":    "application/xml",
	"/files/untyped.bin": "text/html", // served without Content-Type; the body is HTML
}

// Failing lists paths that answer with an error status.
var Failing = map[string]int{"/missing.html": 404, "/broken.html": 500, "/gone.html": 410}

// Redirects maps each redirecting path to where it points.
var Redirects = map[string]string{
	"/old.html":        "/redirected-target.html",
	"/chain-1.html":    "/chain-2.html",
	"/chain-2.html":    "/final.html",
	"/moved-temp.html": "/final.html",
}

// New starts the site.
func New() *Site {
	s := &Site{hang: 30 * time.Second}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// SetHang sets how long /hang waits before answering (30 s at first).
func (s *Site) SetHang(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = d
}

// Requests returns what the site has received, in order.
func (s *Site) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Counts returns how often each path was requested.
func (s *Site) Counts() map[string]int {
	out := map[string]int{}
	for _, r := range s.Requests() {
		out[r.Path]++
	}
	return out
}

// Paths returns the requested paths, sorted.
func (s *Site) Paths() []string {
	var out []string
	for p := range s.Counts() {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (s *Site) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		p += "?" + r.URL.RawQuery
	}
	s.mu.Lock()
	s.log = append(s.log, Request{Path: p, UserAgent: r.UserAgent(), At: time.Now()})
	hang := s.hang
	s.mu.Unlock()

	if to, ok := Redirects[p]; ok {
		code := http.StatusMovedPermanently
		if p == "/moved-temp.html" {
			code = http.StatusFound
		}
		http.Redirect(w, r, to, code)
		return
	}
	if code, ok := Failing[p]; ok {
		http.Error(w, http.StatusText(code), code)
		return
	}
	switch p {
	case "/hang":
		select {
		case <-time.After(hang):
		case <-r.Context().Done():
		}
		return
	case "/slow.html":
		time.Sleep(300 * time.Millisecond)
	case "/files/untyped.bin":
		w.Header()["Content-Type"] = nil
		fmt.Fprint(w, "<!doctype html><html><head><title>untyped</title></head><body><p>No Content-Type here.</p></body></html>")
		return
	}
	if mt, ok := Files[p]; ok {
		w.Header().Set("Content-Type", mt)
		switch mt {
		case "image/png":
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
		case "application/pdf":
			w.Write([]byte("%PDF-1.4\n%test\n"))
		default:
			fmt.Fprintf(w, "file %s\n", p)
		}
		return
	}
	for _, o := range Ordinary {
		if o == p {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, page(p, r.Host))
			return
		}
	}
	http.NotFound(w, r)
}

// page returns the HTML of an ordinary page: a unique paragraph and the
// links that lead on from it ("HOST" in a link is the site's own host).
func page(p, host string) string {
	links := pageLinks[p]
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html lang=en><head><title>Page %s</title></head><body>\n", p)
	fmt.Fprintf(&b, "<nav><a href=\"/\">home</a> <a href=\"#top\">top</a></nav><main><h1>Heading of %s</h1>\n<p>Unique text for %s.</p>\n<ul>\n", p, p)
	for _, l := range links {
		l = strings.ReplaceAll(l, "HOST", host)
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", l, l)
	}
	b.WriteString("</ul></main></body></html>\n")
	return b.String()
}

// pageLinks are the links of each page, written every way links are.
var pageLinks = map[string][]string{
	"/": {"about.html", "./contact.html", "/news/", "docs/", "/team/#members", "products/", "//HOST/search?q=lamps",
		"/old.html", "/chain-1.html", "/moved-temp.html", "/missing.html", "/broken.html", "/gone.html",
		"/files/report.pdf", "files/logo.png", "/files/notes.txt", "/hang", "/deep/1.html",
		"http://other.invalid/elsewhere.html", "mailto:someone@example.org", "javascript:void(0)", "http://exa mple.com/",
		"tel:+15555550100", "/Mixed-Case.html", "/space name.html"},
	"/about.html":              {"contact.html", "/", "#history"},
	"/contact.html":            {"about.html", "mailto:office@example.org"},
	"/news/":                   {"2024.html", "./2025.html", "archive/", "../"},
	"/news/2024.html":          {"../news/2025.html", "/news/archive/2023.html#jan"},
	"/news/2025.html":          {"2024.html", "../slow.html"},
	"/news/archive/":           {"2023.html", "./2022.html", "../../docs/"},
	"/news/archive/2023.html":  {"2022.html", "../2024.html"},
	"/news/archive/2022.html":  {"../../"},
	"/docs/":                   {"intro.html", "install.html", "usage.html", "./faq.html", "api/"},
	"/docs/intro.html":         {"install.html#linux", "../files/data.csv"},
	"/docs/install.html":       {"usage.html", "/files/feed.xml"},
	"/docs/usage.html":         {"faq.html", "api/v1.html"},
	"/docs/faq.html":           {"../contact.html", "intro.html?ref=faq#q1"},
	"/docs/api/":               {"v1.html", "v2.html", "./errors.html", "../"},
	"/docs/api/v1.html":        {"v2.html", "errors.html"},
	"/docs/api/v2.html":        {"../../files/untyped.bin"},
	"/docs/api/errors.html":    {"../../missing.html"},
	"/team/":                   {"alice.html", "bob.html", "carol.html"},
	"/team/alice.html":         {"bob.html"},
	"/team/bob.html":           {"carol.html"},
	"/team/carol.html":         {"alice.html"},
	"/products/":               {"lamp.html", "lens.html", "horn.html", "/search?q=lenses"},
	"/products/lamp.html":      {"lens.html"},
	"/products/lens.html":      {"horn.html"},
	"/products/horn.html":      {"lamp.html"},
	"/search?q=lamps":          {"/products/lamp.html"},
	"/search?q=lenses":         {"/products/lens.html"},
	"/deep/1.html":             {"2.html"},
	"/deep/2.html":             {"3.html"},
	"/deep/3.html":             {"/"},
	"/slow.html":               {"/"},
	"/redirected-target.html":  {"/"},
	"/final.html":              {"/"},
	"/Mixed-Case.html":         {"/"},
	"/space%20name.html":       {"/"},
	"/docs/intro.html?ref=faq": {},
}

func init() {
	// The intro page is also reached with a query; it is a page of its own.
	Ordinary = append(Ordinary, "/docs/intro.html?ref=faq")
}
