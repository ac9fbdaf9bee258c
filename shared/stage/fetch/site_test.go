package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestTaskCarriesSiteSettings: a fetch task's site settings (seed 001
// MaxResourceSize, HTTPTimeout, MaxURLsFromPage) replace the crawl's for
// that fetch.
func TestTaskCarriesSiteSettings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/slow":
			time.Sleep(400 * time.Millisecond)
			fmt.Fprint(w, "<p>late</p>")
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<p>"+strings.Repeat("x", 10_000)+"</p>")
		}
	}))
	defer srv.Close()
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		path string
		task func(*crawl.FetchTask)
		want crawl.ExitCode
	}{
		{"the crawl's settings", "/big", nil, crawl.ExitComplete},
		{"the site's body limit", "/big2", func(ft *crawl.FetchTask) { ft.MaxBytes = 1000 }, crawl.ExitTooLarge},
		{"the site's timeout", "/slow", func(ft *crawl.FetchTask) { ft.TimeoutMS = 50 }, crawl.ExitTimeout},
		{"the site's links per page", "/big3", func(ft *crawl.FetchTask) { ft.MaxLinks = 3 }, crawl.ExitComplete},
	} {
		ft := h.queue(t, srv.URL+tt.path, "crawl-"+tt.path)
		if tt.task != nil {
			tt.task(&ft)
		}
		if err := h.f.Handle(ctx, ft); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		cr, err := h.db.GetCrawl(ctx, ft.CrawlUUID)
		if err != nil || cr.Log.ExitCode != tt.want {
			t.Errorf("%s: exit %v (%v), want %v", tt.name, cr.Log.ExitCode, err, tt.want)
		}
	}
	var last crawl.ParseTask
	h.parse.mu.Lock()
	json.Unmarshal(h.parse.bodies[len(h.parse.bodies)-1], &last)
	h.parse.mu.Unlock()
	if last.URL != srv.URL+"/big3" || last.MaxLinks != 3 {
		t.Errorf("parse task %+v: want the site's 3 links per page passed on", last)
	}
}
