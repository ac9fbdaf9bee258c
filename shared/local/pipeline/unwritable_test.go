package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// TestFullDiskStopsTheRun: a data directory that fills up mid-crawl
// ends the run with ErrUnwritable, rather than retrying messages that
// can never be written (once, a full disk left a run going for more
// than ten minutes). The database is bounded with SQLite's
// max_page_count, which fails writes as a full disk does.
func TestFullDiskStopsTheRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/robots.txt" || r.URL.Path == "/sitemap.xml" {
			http.NotFound(w, r)
			return
		}
		for i := range 20 {
			fmt.Fprintf(w, `<a href="%s/%d">link</a> `, strings.TrimSuffix(r.URL.Path, "/"), i)
		}
		// Words of their own on every page: they fill the database fast.
		for i := range 400 {
			fmt.Fprintf(w, "<p>word%s%d text%d</p>", strings.ReplaceAll(r.URL.Path, "/", "x"), i, i)
		}
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	dd, err := OpenDataDir(ctx, dir, sqlite.WithMaxPages(600))
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	cfg := testConfig(srv.URL + "/")
	cfg.Fetch.Delay = 0
	_, err = dd.Run(ctx, cfg)
	if !errors.Is(err, ErrUnwritable) {
		t.Fatalf("run: %v; want ErrUnwritable", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run ended only at the test's deadline")
	}
}
