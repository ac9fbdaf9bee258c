package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
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

// TestUnwritable: write-side failures stop a run; a failed read (EIO,
// a damaged record) does not, and goes to retries and dead letters.
func TestUnwritable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"disk full", &os.PathError{Op: "write", Path: "crawl.db-wal", Err: syscall.ENOSPC}, true},
		{"quota", fmt.Errorf("keep the body: %w", syscall.EDQUOT), true},
		{"read-only file system", &os.PathError{Op: "open", Path: "x.warc", Err: syscall.EROFS}, true},
		{"file too large", fmt.Errorf("keep the body: %w", syscall.EFBIG), true},
		{"a failed read", &os.PathError{Op: "read", Path: "x.warc", Err: syscall.EIO}, false},
		{"anything else", errors.New("HTTP 500"), false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unwritable(tt.err); got != tt.want {
				t.Errorf("unwritable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
