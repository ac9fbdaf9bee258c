package handlers_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/aws/stack"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// countingSite serves pages by path and counts the requests for each.
type countingSite struct {
	*httptest.Server
	mu sync.Mutex
	n  map[string]int
}

func newCountingSite(t *testing.T, pages map[string]string) *countingSite {
	t.Helper()
	s := &countingSite{n: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.n[r.URL.Path]++
		s.mu.Unlock()
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *countingSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[path]
}

// TestCollectAllRecrawledOnAWS: a collect-all site crawls the page its
// link leads to on a host outside every site and the scope, one hop, and
// that page is recrawled when its recrawl period has passed, as the
// site's own pages are. (Its due URL used to be written under its host in
// the due-by-host GSI, which no release reads: due forever, never sent.)
func TestCollectAllRecrawledOnAWS(t *testing.T) {
	// Longer than the crawl takes to settle (with batching windows of
	// 200 ms at most), so that each run crawls each page once.
	const period = 15 * time.Second
	off := newCountingSite(t, map[string]string{"/page.html": "<html><title>Off the site</title><p>Far away.</p></html>"})
	site := newCountingSite(t, map[string]string{"/": `<html><title>Links</title><p>See <a href="` + off.URL + `/page.html">there</a>.</p></html>`})
	h := newAWSHome(t, func(s *stack.Settings) { s.RecrawlPeriod = period })
	h.maxWindow = 200 * time.Millisecond
	fs, _ := h.functions(1, nil)

	add, _ := json.Marshal(map[string]any{"type": "site", "op": "add", "id": "links", "roots": []string{site.URL + "/"}, "url_type": "collect-all"})
	seed, _ := json.Marshal(crawl.EnqueueEvent{URL: site.URL + "/", Version: 1})
	start := time.Now()
	h.run(fs, time.Minute, add, seed)
	if took := time.Since(start); took > period {
		t.Fatalf("the first crawl took %v, longer than the recrawl period %v", took, period)
	}
	if n := off.count("/page.html"); n != 1 {
		t.Fatalf("the page off the site requested %d times in the first crawl, want 1", n)
	}
	ctx := t.Context()
	c, err := h.db.GetCandidate(ctx, off.URL+"/page.html")
	if err != nil {
		t.Fatal(err)
	}
	if c.State != crawl.StateDue || c.DueAt == 0 {
		t.Fatalf("the page off the site after its crawl: state %s, due %d; want due again", c.State, c.DueAt)
	}

	// Past its recrawl period, the schedule's release sends it again.
	time.Sleep(time.Until(time.Unix(c.DueAt+1, 0)))
	h.run(fs, time.Minute)
	if n := off.count("/page.html"); n != 2 {
		c, _ := h.db.GetCandidate(ctx, off.URL+"/page.html")
		t.Errorf("the page off the site requested %d times after its recrawl period, want 2 (candidate: state %s, due %d, now %d)",
			n, c.State, c.DueAt, time.Now().Unix())
	}
	if n := site.count("/"); n != 2 {
		t.Errorf("the site's page requested %d times after its recrawl period, want 2", n)
	}
}
