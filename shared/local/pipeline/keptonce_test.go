package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// TestBodiesKeptOnceInWARCFiles: the bodies of a crawl go into WARC
// files in the data directory, one record a distinct body: two URLs
// serving the same bytes share one, and a recrawl of pages served
// without validators (every answer a 200 with the same body) adds
// none. Each crawl's key reads back its own body.
func TestBodiesKeptOnceInWARCFiles(t *testing.T) {
	page := func(links string) string { return "<html><title>t</title><body><p>text</p>" + links + "</body></html>" }
	site := map[string]string{
		"/":       page(`<a href="/a">a</a><a href="/mirror">m</a><a href="/b">b</a>`),
		"/a":      page("<p>the same bytes at two URLs</p>"),
		"/mirror": page("<p>the same bytes at two URLs</p>"),
		"/b":      page("<p>b</p>"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := site[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := testConfig(srv.URL + "/")
	crawlSite(t, dir, cfg)
	cfg.Seeds, cfg.Recrawl = nil, true
	crawlSite(t, dir, cfg)

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT u.url, b.body_key, b.body_sha256 FROM file_body b JOIN file f ON f.file_id = b.file_id
		JOIN url u ON u.url_id = f.url_id WHERE u.url NOT LIKE '%robots.txt'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	crawls, keys := 0, map[string]bool{}
	for rows.Next() {
		var u, key, sha string
		if err := rows.Scan(&u, &key, &sha); err != nil {
			t.Fatal(err)
		}
		crawls++
		keys[key] = true
		ref, ok := warc.ParseRef(key)
		if !ok {
			t.Fatalf("%s: body key %q names no WARC record", u, key)
		}
		b, err := os.ReadFile(filepath.Join(dir, "blobs", filepath.FromSlash(ref.Object)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := warc.ReadResponse(strings.NewReader(string(b[ref.Span.Offset : ref.Span.Offset+ref.Span.Length])))
		if err != nil || string(resp.Body) != site[strings.TrimPrefix(u, srv.URL)] {
			t.Errorf("%s: the record at %s holds %q, %v; want its page", u, key, resp.Body, err)
		}
		if len(sha) != 64 {
			t.Errorf("%s: body_sha256 %q", u, sha)
		}
	}
	if crawls != 8 || len(keys) != 3 {
		t.Errorf("%d crawls with bodies under %d keys, want 8 under 3 (four pages, one a mirror, crawled twice)", crawls, len(keys))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "blobs", "warc", "*", "*", "*", "*.warc"))
	responses := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		responses += strings.Count(string(b), "WARC-Type: response\r\n")
	}
	// The recrawl kept no body, so it started no file.
	if len(files) != 1 || responses != 3 {
		t.Errorf("%d WARC files with %d response records, want 1 with 3", len(files), responses)
	}
}

// TestKeptOnceAtOnce: keepers of the same bytes at the same moment,
// before any crawl of them is recorded, get one record: the first keeps
// it and the others wait for its key. Other bytes get a record of their
// own.
func TestKeptOnceAtOnce(t *testing.T) {
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	k := newKeptOnce(dd.Blobs, dd.DB)
	x := func(u, body string) warc.Exchange {
		return warc.Exchange{URL: u, Date: time.Now(), Method: "GET", Status: 200, Body: []byte(body)}
	}
	keys := make([]string, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if keys[i], err = k.Keep(ctx, x(fmt.Sprintf("http://example.com/mirror%d", i), "the same bytes")); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, key := range keys {
		if key != keys[0] || key == "" {
			t.Fatalf("keys %q: mirror %d was kept apart", keys, i)
		}
	}
	other, err := k.Keep(ctx, x("http://example.com/other", "other bytes"))
	if err != nil || other == keys[0] {
		t.Errorf("other bytes kept under %q (%v), the mirrors' key %q", other, err, keys[0])
	}
}
