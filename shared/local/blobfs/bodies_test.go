package blobfs_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/local/blobfs"
	"github.com/serverless-crawler/crawler/shared/testkit/warcio"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

func exchange(i int, body []byte) warc.Exchange {
	return warc.Exchange{URL: fmt.Sprintf("http://example.com/%d", i), Date: time.Unix(1700000000, 0), Status: 200,
		Request: http.Header{"User-Agent": {"test"}}, Response: http.Header{"Content-Type": {"text/html"}}, Body: body}
}

// warcFiles lists the WARC files under dir, by key.
func warcFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".warc") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// TestKeepAppends: bodies kept go into one WARC file, a record each,
// until it passes MaxWARCBytes or the store is closed; each key reads
// back its body, from whichever file; and warcio reads each file whole.
func TestKeepAppends(t *testing.T) {
	ctx := context.Background()
	defer func(n int64) { blobfs.MaxWARCBytes = n }(blobfs.MaxWARCBytes)
	blobfs.MaxWARCBytes = 40000
	dir := t.TempDir()
	s, err := blobfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	var keys []string
	keep := func() {
		t.Helper()
		i := len(bodies)
		body := bytes.Repeat([]byte(fmt.Sprintf("<p>page %d</p>", i)), 1000+i)
		k, err := s.Keep(ctx, exchange(i, body))
		if err != nil {
			t.Fatal(err)
		}
		bodies, keys = append(bodies, body), append(keys, k)
	}
	for range 3 {
		keep() // about 14 KB each: the third passes 40,000 bytes
	}
	if files := warcFiles(t, dir); len(files) != 1 {
		t.Fatalf("after three bodies: files %v, want one", files)
	}
	keep() // a new file
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	keep() // after Close: another
	files := warcFiles(t, dir)
	if len(files) != 3 {
		t.Fatalf("files %v, want three", files)
	}
	for i, k := range keys {
		ref, ok := warc.ParseRef(k)
		if !ok || !strings.HasPrefix(ref.Object, "warc/") {
			t.Errorf("key %q names no record of a WARC file", k)
		}
		if got, err := s.Get(ctx, k); err != nil || !bytes.Equal(got, bodies[i]) {
			t.Errorf("Get(%q): %d bytes, %v; want the %d kept", k, len(got), err, len(bodies[i]))
		}
	}
	if bin := os.Getenv("CRAWLER_TEST_PYTOOLS"); bin != "" {
		n := 0
		for _, f := range files {
			warcio.Check(t, bin, filepath.Join(dir, f))
			for _, r := range warcio.Records(t, bin, filepath.Join(dir, f)) {
				if r.Type == "response" {
					n++
				}
			}
		}
		if n != len(bodies) {
			t.Errorf("warcio read %d responses, want %d", n, len(bodies))
		}
	}
}

// TestGetRefusesABadRef: a key that names a record where there is
// none, or a range past its file's end, is an error, not a body.
func TestGetRefusesABadRef(t *testing.T) {
	ctx := context.Background()
	s, err := blobfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.Keep(ctx, exchange(0, []byte("<html>x</html>")))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := warc.ParseRef(k)
	for _, bad := range []warc.Ref{
		{Object: ref.Object, Span: warc.Span{Offset: ref.Span.Offset + 1, Length: ref.Span.Length - 1}},
		{Object: ref.Object, Span: warc.Span{Offset: 0, Length: ref.Span.Offset}}, // the warcinfo record
		{Object: ref.Object, Span: warc.Span{Offset: ref.Span.Offset, Length: 1 << 20}},
	} {
		if got, err := s.Get(ctx, bad.String()); err == nil {
			t.Errorf("Get(%s) = %d bytes, want an error", bad, len(got))
		}
	}
}

// withFileSizeLimit makes writes past n bytes of any file fail (EFBIG),
// as on a full disk, until the test ends: RLIMIT_FSIZE, with the signal
// it raises ignored.
func withFileSizeLimit(t *testing.T, n uint64) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skip("no RLIMIT_FSIZE:", err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: old.Max}); err != nil {
		t.Skip("cannot set RLIMIT_FSIZE:", err)
	}
	t.Cleanup(func() {
		syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old)
		signal.Reset(syscall.SIGXFSZ)
	})
}

// TestKeepOnAFullDisk: a body that cannot be written whole is cut from
// its file, which stays as it was (the bodies before it read back, no
// torn record), and a file that cannot even take its warcinfo record is
// not left behind: before, a full disk left an empty file a try.
func TestKeepOnAFullDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := blobfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first := []byte("<p>the first body</p>")
	k, err := s.Keep(ctx, exchange(0, first))
	if err != nil {
		t.Fatal(err)
	}
	files := warcFiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("files %v, want one", files)
	}
	path := filepath.Join(dir, files[0])
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	withFileSizeLimit(t, uint64(fi.Size())+2000)
	if _, err := s.Keep(ctx, exchange(1, bytes.Repeat([]byte("x"), 10000))); err == nil {
		t.Fatal("a body past the limit was kept")
	}
	if after, err := os.Stat(path); err != nil || after.Size() != fi.Size() {
		t.Errorf("the file after a failed write: %v bytes, %v; want %d, as before it", after.Size(), err, fi.Size())
	}
	if got, err := s.Get(ctx, k); err != nil || !bytes.Equal(got, first) {
		t.Errorf("the body before: %q, %v", got, err)
	}
	// The next body starts a file, which cannot take its warcinfo record.
	withFileSizeLimit(t, 100)
	for i := range 3 {
		if _, err := s.Keep(ctx, exchange(2+i, first)); err == nil {
			t.Fatal("a body was kept in a file that cannot be written")
		}
	}
	if got := warcFiles(t, dir); len(got) != 1 {
		t.Errorf("files after three failed starts: %v, want the first alone", got)
	}
}
