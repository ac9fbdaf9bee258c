package pipeline

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// citizenSite is a site that checks how a crawler behaves: robots.txt,
// a sitemap, redirects (a chain and a loop), a meta-nofollow page, an
// endless body, a page that never answers, retryable failures, and
// compressed bodies. It logs every request start.
type citizenSite struct {
	*httptest.Server
	mu      sync.Mutex
	log     []Request
	bigSent atomic.Int64
	flaky   atomic.Int32
	other   string // another host's URL, linked but out of scope
	bomb    []byte // 64 MiB of zeros gzipped: over the limit once decoded
}

type Request struct {
	Path string
	At   time.Time
}

func newCitizenSite(other string) *citizenSite {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(make([]byte, 64<<20))
	z.Close()
	s := &citizenSite{other: other, bomb: b.Bytes()}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *citizenSite) requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

func (s *citizenSite) count(path string) int {
	n := 0
	for _, r := range s.requests() {
		if r.Path == path {
			n++
		}
	}
	return n
}

func html(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><title>t</title></head><body>%s</body></html>", body)
}

func (s *citizenSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.log = append(s.log, Request{Path: r.URL.RequestURI(), At: time.Now()})
	s.mu.Unlock()
	switch r.URL.Path {
	case "/robots.txt":
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n\nUser-agent: crawler-test\nDisallow: /private/\nDisallow: /members\n\nSitemap: "+s.URL+"/sitemap.xml\nSitemap: "+s.URL+"/sitemap.txt\n"+
			"Sitemap: "+s.URL+"/moved-sitemap.txt\nSitemap: "+s.URL+"/moved-sitemap.xml\n")
	case "/moved-sitemap.txt":
		// Sitemaps moved (to https, to www): still sitemaps where they land.
		http.Redirect(w, r, "/sitemap-here.txt", http.StatusMovedPermanently)
	case "/sitemap-here.txt":
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s/only-in-moved-text-sitemap.html\n", s.URL)
	case "/moved-sitemap.xml":
		http.Redirect(w, r, "/gone-sitemap.xml", http.StatusMovedPermanently)
	case "/gone-sitemap.xml":
		http.NotFound(w, r)
	case "/sitemap.txt":
		// The protocol's text format: one URL a line.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "\ufeff%s/only-in-text-sitemap.html\r\n\r\n", s.URL)
	case "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s/sitemap-pages.xml.gz</loc></sitemap></sitemapindex>`, s.URL)
	case "/sitemap-pages.xml.gz":
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		fmt.Fprintf(z, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/only-in-sitemap.html</loc></url></urlset>`, s.URL)
		z.Close()
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(b.Bytes())
	case "/":
		html(w, `<a href="/private/secret.html">secret</a> <a href="/members">members</a>
			<a href="/chain/1">chain</a> <a href="/loop/a">loop</a> <a href="/nofollow.html">nofollow page</a>
			<a href="/big">big</a> <a href="/hang">hang</a> <a href="/missing">missing</a> <a href="/error">error</a>
			<a href="/flaky">flaky</a> <a href="/gzip.html">gzip</a> <a href="/br.html">br</a> <a href="/deflate.html">deflate</a>
			<a href="/bomb.html">bomb</a> <a href="`+s.other+`/elsewhere.html">elsewhere</a>
			<a href="/sponsored.html" rel="nofollow">sponsored</a>`)
	case "/chain/1":
		http.Redirect(w, r, "/chain/2", http.StatusMovedPermanently)
	case "/chain/2":
		http.Redirect(w, r, "/chain/3", http.StatusFound)
	case "/chain/3":
		http.Redirect(w, r, "/chain/end.html", http.StatusPermanentRedirect)
	case "/loop/a":
		http.Redirect(w, r, "/loop/b", http.StatusFound)
	case "/loop/b":
		http.Redirect(w, r, "/loop/a", http.StatusFound)
	case "/nofollow.html":
		html(w, `<meta name="robots" content="nofollow"><a href="/not-followed.html">x</a>`)
	case "/big":
		// An endless body: the crawler must stop reading at its limit.
		w.Header().Set("Content-Type", "text/html")
		buf := bytes.Repeat([]byte("<p>big</p>"), 6554)
		for i := 0; i < 256<<20/len(buf); i++ {
			n, err := w.Write(buf)
			s.bigSent.Add(int64(n))
			if err != nil {
				return
			}
		}
	case "/hang":
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	case "/missing":
		http.NotFound(w, r)
	case "/error":
		http.Error(w, "boom", http.StatusInternalServerError)
	case "/flaky":
		if s.flaky.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		html(w, "<p>flaky worked</p>")
	case "/gzip.html", "/br.html", "/deflate.html":
		var b bytes.Buffer
		var wc interface {
			Write([]byte) (int, error)
			Close() error
		}
		enc := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/"), ".html")
		switch enc {
		case "gzip":
			wc = gzip.NewWriter(&b)
		case "br":
			wc = brotli.NewWriter(&b)
		case "deflate":
			wc = zlib.NewWriter(&b)
		}
		fmt.Fprintf(wc, "<html><head><title>%s page</title></head><body><p>compressed with %s</p></body></html>", enc, enc)
		wc.Close()
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", enc)
		w.Write(b.Bytes())
	case "/bomb.html":
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(s.bomb)
	default:
		html(w, "<p>page "+r.URL.Path+"</p>")
	}
}

func TestGoodCitizen(t *testing.T) {
	var otherHits atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
	defer other.Close()
	site := newCitizenSite(other.URL)
	defer site.Close()

	const delay = 50 * time.Millisecond
	cfg := testConfig(site.URL + "/")
	cfg.Fetch.UserAgent = "crawler-test/1.0 (+https://example.org/bot)"
	cfg.Fetch.Delay, cfg.Fetch.Timeout = delay, 2*time.Second
	cfg.Fetch.RetryBase = 50 * time.Millisecond
	cfg.Concurrency = 8
	dir := t.TempDir()
	crawlSite(t, dir, cfg)
	reqs := site.requests()

	if len(reqs) == 0 || reqs[0].Path != "/robots.txt" {
		t.Fatalf("first request %v, want /robots.txt", reqs[:min(1, len(reqs))])
	}
	if n := site.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want once", n)
	}
	for _, p := range []string{"/private/secret.html", "/members", "/not-followed.html", "/sponsored.html"} {
		if n := site.count(p); n != 0 {
			t.Errorf("%s requested %d times; it must never be", p, n)
		}
	}
	for _, p := range []string{"/only-in-sitemap.html", "/only-in-text-sitemap.html", "/only-in-moved-text-sitemap.html", "/chain/end.html", "/flaky", "/gzip.html", "/br.html", "/deflate.html"} {
		if site.count(p) == 0 {
			t.Errorf("%s was never requested", p)
		}
	}
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].At.Sub(reqs[i-1].At); gap < delay-2*time.Millisecond {
			t.Errorf("%s started %v after %s; the delay is %v", reqs[i].Path, gap, reqs[i-1].Path, delay)
		}
	}
	if sent := site.bigSent.Load(); sent > 64<<20 {
		t.Errorf("the server wrote %d MiB of the endless body before the crawler hung up", sent>>20)
	}
	if otherHits.Load() != 0 {
		t.Errorf("another host got %d requests", otherHits.Load())
	}
	if n := site.count("/loop/a") + site.count("/loop/b"); n != 2 {
		t.Errorf("redirect loop requested %d times, want 2", n)
	}

	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	db := dd.DB.SQL()
	exitOf := func(path string) crawl.ExitCode {
		var code crawl.ExitCode
		db.QueryRow(`SELECT c.last_crawl_exit_code FROM crawl_candidate c JOIN url u ON u.url_id=c.url_id WHERE u.url=?`, site.URL+path).Scan(&code)
		return code
	}
	for p, want := range map[string]crawl.ExitCode{
		"/private/secret.html": crawl.ExitRobotsDisallowed, "/members": crawl.ExitRobotsDisallowed,
		"/big": crawl.ExitTooLarge, "/bomb.html": crawl.ExitTooLarge, "/hang": crawl.ExitTimeout,
		"/missing": crawl.ExitHTTPClientError, "/error": crawl.ExitHTTPServerError, "/flaky": crawl.ExitComplete,
		"/loop/b": crawl.ExitRedirectLoop, "/chain/1": crawl.ExitRedirect, "/chain/end.html": crawl.ExitComplete,
		"/gzip.html": crawl.ExitComplete, "/br.html": crawl.ExitComplete, "/deflate.html": crawl.ExitComplete,
		"/only-in-sitemap.html": crawl.ExitComplete, "/gone-sitemap.xml": crawl.ExitNoSitemap,
	} {
		if got := exitOf(p); got != want {
			t.Errorf("%s: exit %v, want %v", p, got, want)
		}
	}
	// Every hop of the chain is a redirect row; the 301 and 308 are permanent.
	rows, err := db.Query(`SELECT f.url, t.url, r.is_permanent FROM redirect r JOIN url f ON f.url_id=r.url_id
		JOIN url t ON t.url_id=r.to_url_id WHERE f.url LIKE ? ORDER BY f.url`, site.URL+"/chain/%")
	if err != nil {
		t.Fatal(err)
	}
	var hops []string
	for rows.Next() {
		var from, to string
		var perm bool
		rows.Scan(&from, &to, &perm)
		hops = append(hops, fmt.Sprintf("%s>%s:%v", strings.TrimPrefix(from, site.URL), strings.TrimPrefix(to, site.URL), perm))
	}
	rows.Close()
	if got, want := strings.Join(hops, " "), "/chain/1>/chain/2:true /chain/2>/chain/3:false /chain/3>/chain/end.html:true"; got != want {
		t.Errorf("redirect rows %s, want %s", got, want)
	}
	st, err := dd.DB.Status(context.Background(), site.URL+"/chain/end.html")
	if err != nil || st.NRedirs != 3 || st.OrigURL != site.URL+"/chain/1" {
		t.Errorf("status of the chain's end: n-redirs %d orig-url %q (%v), want 3 and /chain/1", st.NRedirs, st.OrigURL, err)
	}
	// A decoded body is stored and its text kept.
	var text string
	if err := db.QueryRow(`SELECT t.text FROM file_text t JOIN file f ON f.file_id=t.file_id JOIN url u ON u.url_id=f.url_id
		WHERE u.url=?`, site.URL+"/br.html").Scan(&text); err != nil || !strings.Contains(text, "compressed with br") {
		t.Errorf("br body text %q (%v)", text, err)
	}
	// The flaky page's crawl has two requests: the 503 and the retry.
	var n int
	db.QueryRow(`SELECT count(*) FROM request r JOIN url u ON u.url_id=r.url_id WHERE u.url=?`, site.URL+"/flaky").Scan(&n)
	if n != 2 {
		t.Errorf("flaky page has %d request rows, want 2", n)
	}
}
