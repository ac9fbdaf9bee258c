package pipeline

import (
	"net/http"
	"net/http/httptest"
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
