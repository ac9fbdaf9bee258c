package main

import (
	"bytes"
	"database/sql"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/warcio"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// TestExportWARC: a crawl exported with --warc reads in warcio: every
// response the crawl got is a response record (with its request record
// beside it), and a page's body is the one the server sent. A body
// missing from the blob store is left out and said so; a failed export
// leaves no file.
func TestExportWARC(t *testing.T) {
	bin := warcio.Bin(t)
	site, data := testSiteAndData(t)
	if _, stderr, code := runCLI(t, "crawl", "--data", data, "--max-depth", "8", "--delay", "1ms", "--timeout", "2s", site.URL+"/"); code != 0 {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	path := filepath.Join(t.TempDir(), "crawl.warc.gz")
	_, stderr, code := runCLI(t, "export", "--data", data, "--warc", path)
	if code != 0 {
		t.Fatalf("export exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("exported file: %v, %v (want readable by others, as files are)", fi, err)
	}
	warcio.Check(t, bin, path)
	responses := countRows(t, data, `SELECT count(*) FROM request WHERE http_status_code IS NOT NULL`)
	count := map[string]int{}
	var alice *warcio.Record
	recs := warcio.Records(t, bin, path)
	for i, r := range recs {
		count[r.Type]++
		if r.Type == "response" && r.URI == site.URL+"/team/alice.html" {
			alice = &recs[i]
		}
	}
	if count["warcinfo"] != 1 || count["response"] != responses || count["request"] != responses || responses < 10 {
		t.Errorf("records %v, want 1 warcinfo and a response and a request for each of the %d responses", count, responses)
	}
	if !strings.Contains(stderr, "exported "+strconv.Itoa(responses)+" responses") {
		t.Errorf("export said %q, want the count %d", stderr, responses)
	}
	resp, err := http.Get(site.URL + "/team/alice.html")
	if err != nil {
		t.Fatal(err)
	}
	served, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if alice == nil {
		t.Fatal("/team/alice.html has no response record")
	}
	if alice.Status != "200" || !bytes.Equal(alice.Body, served) {
		t.Errorf("/team/alice.html in the WARC: status %s, %d bytes; want 200 and the %d bytes served", alice.Status, len(alice.Body), len(served))
	}

	// Bodies gone from the store (the WARC file that holds them deleted
	// by hand): their responses are left out, and said so.
	db, err := sql.Open("sqlite", filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	var key string
	err = db.QueryRow(`SELECT body_key FROM file_body WHERE body_sha256=?`, crawl.BodySHA256(served)).Scan(&key)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := warc.ParseRef(key)
	if !ok {
		t.Fatalf("body key %q names no WARC record", key)
	}
	if err := os.Remove(filepath.Join(data, "blobs", filepath.FromSlash(ref.Object))); err != nil {
		t.Fatal(err)
	}
	gone := countRows(t, data, `SELECT count(*) FROM request r JOIN file f ON f.request_id=r.request_id
		JOIN file_body fb ON fb.file_id=f.file_id WHERE fb.body_key LIKE '`+ref.Object+`#%'`)
	_, stderr, code = runCLI(t, "export", "--data", data, "--warc", path)
	if code != 0 || gone == 0 || !strings.Contains(stderr, "exported "+strconv.Itoa(responses-gone)+" responses") ||
		!strings.Contains(stderr, strconv.Itoa(gone)+" bodies were not in") {
		t.Errorf("export with a body missing (%d responses): exit %d, %s", gone, code, stderr)
	}

	// Nowhere to write: an error, and no file left behind.
	bad := filepath.Join(t.TempDir(), "no-such-dir", "x.warc.gz")
	if _, stderr, code := runCLI(t, "export", "--data", data, "--warc", bad); code != exitUsage || !strings.Contains(stderr, "cannot write") {
		t.Errorf("export to a missing directory: exit %d, %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, "export", "--data", data); code != exitUsage || !strings.Contains(stderr, "--warc FILE") {
		t.Errorf("export without --warc: exit %d, %s", code, stderr)
	}
}

// TestExportLeavesOutCutBodies: a 200 whose body was not received whole
// (the connection closed short of its Content-Length, or the body past
// --max-resource-size) kept no body; its response is left out of the
// export, and said so, rather than written as a complete empty page. So
// is a response with a status no HTTP message carries ("000"), which
// failed the whole export.
func TestExportLeavesOutCutBodies(t *testing.T) {
	bin := warcio.Bin(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<p>home <a href="/short">short</a> <a href="/big">big</a> <a href="/zero">zero</a></p>`)
		case "/zero":
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			buf.WriteString("HTTP/1.1 000 Zero\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi")
			buf.Flush()
			conn.Close()
		case "/short":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Length", "1000")
			io.WriteString(w, "<p>only the start")
		case "/big":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>"+strings.Repeat("big ", 1000))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	data := t.TempDir()
	if _, stderr, code := runCLI(t, "crawl", "--data", data, "--delay", "0", "--allow-private", "--max-resource-size", "2000", srv.URL+"/"); code != 0 {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	path := filepath.Join(t.TempDir(), "crawl.warc.gz")
	_, stderr, code := runCLI(t, "export", "--data", data, "--warc", path)
	if code != 0 {
		t.Fatalf("export exit %d: %s", code, stderr)
	}
	warcio.Check(t, bin, path)
	got := map[string]string{}
	for _, r := range warcio.Records(t, bin, path) {
		if r.Type == "response" {
			got[strings.TrimPrefix(r.URI, srv.URL)] = r.Status
		}
	}
	if got["/"] != "200" {
		t.Errorf("the whole page's response: %q, want 200 (records %v)", got["/"], got)
	}
	for _, p := range []string{"/short", "/big", "/zero"} {
		if s, ok := got[p]; ok {
			t.Errorf("%s exported as %s, with no body received whole", p, s)
		}
	}
	// /short's connection is retried, so it has more than one.
	cut := countRows(t, data, `SELECT count(*) FROM request WHERE http_status_code/100 = 2 AND exit_code >= 50`)
	if cut < 2 || !strings.Contains(stderr, strconv.Itoa(cut)+" responses whose body was not received whole") {
		t.Errorf("export said %q, want the %d left out named", stderr, cut)
	}
	if !strings.Contains(stderr, "1 responses with no valid HTTP status") {
		t.Errorf("export said %q, want the response of status 000 left out named", stderr)
	}
}
