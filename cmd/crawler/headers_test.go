package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// TestHugeResponseHeaders: a response whose headers run past
// crawl.MaxResponseHeaderBytes is recorded as a network error (its
// fields would not fit the AWS home's items and messages), and the
// crawl goes on to the other pages.
func TestHugeResponseHeaders(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><title>Home</title><a href="/huge.html">huge</a> <a href="/ok.html">ok</a></html>`)
		case "/huge.html":
			w.Header().Set("ETag", `"`+strings.Repeat("e", crawl.MaxResponseHeaderBytes)+`"`)
			fmt.Fprint(w, "<html><title>Huge</title></html>")
		case "/ok.html":
			fmt.Fprint(w, "<html><title>OK</title></html>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	data := t.TempDir()
	if _, stderr, code := runCLI(t, "crawl", "--data", data, "--delay", "0", "--allow-private", "--quiet", site.URL+"/"); code != 0 {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for path, want := range map[string]crawl.ExitCode{"/huge.html": crawl.ExitNetworkError, "/ok.html": crawl.ExitComplete} {
		c, err := db.GetCandidate(ctx, site.URL+path)
		if err != nil || c.LastCrawlExitCode == nil || *c.LastCrawlExitCode != want {
			t.Errorf("%s: %+v, %v; want exit %v", path, c.LastCrawlExitCode, err, want)
		}
	}
}
