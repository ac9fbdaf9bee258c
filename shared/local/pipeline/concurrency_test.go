package pipeline

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestConcurrencyBoundsRequests: --concurrency is the requests in
// flight at once across hosts, though twice as many fetch workers run
// (fetchWorkers), and a crawl of many hosts reaches it.
func TestConcurrencyBoundsRequests(t *testing.T) {
	var mu sync.Mutex
	inFlight, most, served := 0, 0, 0
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		served++
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(15 * time.Millisecond)
		html(w, `<p>page</p><a href="/a.html">a</a> <a href="/b.html">b</a> <a href="/c.html">c</a>`)
	})
	const hosts, concurrency = 6, 3
	var seeds []string
	for range hosts {
		s := httptest.NewServer(handler)
		defer s.Close()
		seeds = append(seeds, s.URL+"/")
	}
	cfg := testConfig(seeds[0])
	cfg.Seeds = seeds
	cfg.Fetch.Delay = 0
	cfg.Concurrency = concurrency
	res := crawlSite(t, t.TempDir(), cfg)
	if res.Crawled < hosts*4 {
		t.Fatalf("crawled %d URLs, want the %d pages of %d hosts", res.Crawled, hosts*4, hosts)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d requests, at most %d at once", served, most)
	if most != concurrency {
		t.Errorf("at most %d requests were in flight at once across %d hosts, want --concurrency (%d)", most, hosts, concurrency)
	}
}

// TestRetryWaitHoldsNoShare: a request waiting to be retried (a 503
// with Retry-After) keeps its host's slot but not its share of
// --concurrency, so at --concurrency 1 another host's pages are fetched
// meanwhile, and the page is still fetched on its retry.
func TestRetryWaitHoldsNoShare(t *testing.T) {
	var mu sync.Mutex
	var busyAt, retriedAt time.Time
	var othersDuring int
	var otherURL string
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case r.URL.Path == "/robots.txt":
			// Names a sitemap elsewhere, so that the page is the busy
			// host's one task: a second would wait for its slot in the
			// second fetch worker.
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", otherURL)
		case busyAt.IsZero():
			busyAt = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			retriedAt = time.Now()
			html(w, `<p>back</p>`)
		}
	}))
	defer busy.Close()
	const pages = 40
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		if !busyAt.IsZero() && retriedAt.IsZero() {
			othersDuring++
		}
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		if r.URL.Path != "/p0.html" {
			html(w, `<p>a page</p>`)
			return
		}
		var links strings.Builder
		for i := 1; i < pages; i++ {
			fmt.Fprintf(&links, `<a href="/p%d.html">%d</a> `, i, i)
		}
		html(w, links.String())
	}))
	defer other.Close()
	mu.Lock()
	otherURL = other.URL
	mu.Unlock()
	cfg := testConfig(busy.URL + "/")
	cfg.Seeds = []string{busy.URL + "/", other.URL + "/p0.html"}
	cfg.Fetch.Delay = 0
	cfg.Concurrency = 1
	res := crawlSite(t, t.TempDir(), cfg)
	mu.Lock()
	defer mu.Unlock()
	if res.Crawled < pages+1 || retriedAt.IsZero() { // (and each host's guessed /sitemap.xml)
		t.Fatalf("crawled %d URLs (retried: %v), want the busy host's page after its retry and the other host's %d", res.Crawled, !retriedAt.IsZero(), pages)
	}
	if wait := retriedAt.Sub(busyAt); wait < time.Second {
		t.Errorf("retried %v after the 503, want Retry-After's 1 s", wait)
	}
	if othersDuring == 0 {
		t.Errorf("no request to the other host while the busy one waited %v to be retried, at --concurrency 1", retriedAt.Sub(busyAt))
	}
	t.Logf("%d of the other host's %d pages fetched during the retry's wait", othersDuring, pages)
}

// TestHostsCrawledSideBySide: a crawl of several hosts at a politeness
// delay fetches from all of them at once, not one host's backlog after
// another: the release shares the fetch queue among the hosts
// (sqlite.DB.DueCandidates), so no host's tasks fill it while another's
// wait. Each host's pages are linked from its index; the requests, in
// the order they came, never go to one host many times running once all
// have begun, and all begin before one is done.
func TestHostsCrawledSideBySide(t *testing.T) {
	const hosts, pages = 3, 12
	var mu sync.Mutex
	var order []int // the host of each page request, in the order they came
	var seeds []string
	for h := range hosts {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt", "/sitemap.xml":
				http.NotFound(w, r)
			case "/":
				var links strings.Builder
				for i := range pages {
					fmt.Fprintf(&links, `<a href="/p%d.html">%d</a> `, i, i)
				}
				html(w, links.String())
			default:
				mu.Lock()
				order = append(order, h)
				mu.Unlock()
				html(w, `<p>a page</p>`)
			}
		}))
		defer s.Close()
		seeds = append(seeds, s.URL+"/")
	}
	cfg := testConfig(seeds[0])
	cfg.Seeds = seeds
	cfg.Fetch.Delay = 20 * time.Millisecond
	cfg.Concurrency = 2
	res := crawlSite(t, t.TempDir(), cfg)
	mu.Lock()
	defer mu.Unlock()
	if len(order) != hosts*pages {
		t.Fatalf("%d page requests (crawled %d URLs), want %d", len(order), res.Crawled, hosts*pages)
	}
	// From the first request to the last host to begin (before it, the
	// hosts whose index pages came first are all there is to fetch)
	// until one host is done (after it, the others' pages are all that
	// is left).
	begun, done := 0, len(order)
	count := make([]int, hosts)
	seen := 0
	for i, h := range order {
		if count[h]++; count[h] == 1 {
			if seen++; seen == hosts {
				begun = i
			}
		}
		if count[h] == pages {
			done = i + 1
			break
		}
	}
	t.Logf("requests by host, in order: %v", order)
	if seen < hosts {
		t.Fatalf("a host was done before the last one began: the hosts were crawled one after another")
	}
	longest, run := 1, 1
	for i := begun + 1; i < done; i++ {
		if order[i] == order[i-1] {
			run++
			longest = max(longest, run)
		} else {
			run = 1
		}
	}
	if longest > hosts+1 {
		t.Errorf("%d requests running went to one host (of %d hosts with %d pages each): the hosts were crawled one after another", longest, hosts, pages)
	}
}
