package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// BlobStore is the blob store: the union of what the stages consume (raw
// bodies, parsed documents) and what the DynamoDB store keeps its text
// piles in. blobfs.Store and s3blob.Store implement it.
type BlobStore interface {
	Put(ctx context.Context, key string, data []byte) error
	fetch.Bodies
	parse.Blobs
	summarize.Blobs
}

// BlobRanger is a blob store that reads part of a blob (blobfs.Store
// and s3blob.Store; what warc.Packer reads records with).
type BlobRanger interface {
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// BlobExister is a blob store that can tell whether a key exists without
// reading it (s3blob.Store, with HEAD; blobfs.Store has none, and the
// DynamoDB store reads a key instead).
type BlobExister interface {
	Exists(ctx context.Context, key string) (bool, error)
}

// Blobs runs the blob store contract: a key is a slash-separated path;
// Put replaces; Get of a missing key is crawl.ErrNotFound; a key that
// could leave the store's root is refused with crawl.KindInvalid.
func Blobs(t *testing.T, open func(t *testing.T) BlobStore) {
	run(t, []testCase{
		{"PutGet", func(t *testing.T) {
			b := open(t)
			binary := make([]byte, 1<<20)
			for i := range binary {
				binary[i] = byte(i * 7)
			}
			for _, tc := range []struct {
				key  string
				data []byte
			}{
				{"doc/ab/cdef.json", []byte(`{"url":"http://example.com/","title":"Ünïcode"}`)},
				{crawl.BodyKey(binary), binary},
				{"raw/empty", []byte{}},
				{"crawl/2026-11-22/a b+c=d.html.json", []byte("{}")},
			} {
				t.Run(tc.key, func(t *testing.T) {
					wantExists(t, b, tc.key, false)
					if err := b.Put(t.Context(), tc.key, tc.data); err != nil {
						t.Fatal(err)
					}
					got, err := b.Get(t.Context(), tc.key)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got, tc.data) {
						t.Fatalf("Get returned %d bytes, want the %d put", len(got), len(tc.data))
					}
					wantExists(t, b, tc.key, true)
				})
			}
		}},
		{"PutReplaces", func(t *testing.T) {
			b := open(t)
			for i, data := range []string{"first", "first", "second, longer than the first", "third"} {
				if err := b.Put(t.Context(), "doc/k.json", []byte(data)); err != nil {
					t.Fatalf("put %d: %v", i, err)
				}
				if got, err := b.Get(t.Context(), "doc/k.json"); err != nil || string(got) != data {
					t.Fatalf("after put %d: %q, %v; want %q", i, got, err, data)
				}
			}
		}},
		{"Missing", func(t *testing.T) {
			b := open(t)
			if err := b.Put(t.Context(), "raw/ab/present", []byte("x")); err != nil {
				t.Fatal(err)
			}
			// Neither a key's prefix nor a key under a blob is a blob.
			for _, key := range []string{"raw/no/such/key", "raw/ab/presen", "raw/ab", "raw/ab/present/more"} {
				_, err := b.Get(t.Context(), key)
				if !errors.Is(err, crawl.ErrNotFound) || crawl.KindOf(err) != crawl.KindNotFound {
					t.Errorf("Get(%q) = %v, want crawl.ErrNotFound", key, err)
				}
				wantExists(t, b, key, false)
			}
		}},
		{"GetRange", func(t *testing.T) {
			b := open(t)
			r, ok := b.(BlobRanger)
			if !ok {
				t.Skip("the store reads whole blobs only")
			}
			data := make([]byte, 100000)
			for i := range data {
				data[i] = byte(i * 13)
			}
			if err := b.Put(t.Context(), "raw/range", data); err != nil {
				t.Fatal(err)
			}
			for _, rg := range [][2]int64{{0, 1}, {0, 100000}, {1000, 5000}, {99999, 1}} {
				got, err := r.GetRange(t.Context(), "raw/range", rg[0], rg[1])
				if err != nil || !bytes.Equal(got, data[rg[0]:rg[0]+rg[1]]) {
					t.Errorf("GetRange(%d, %d): %d bytes, %v; want the %d stored there", rg[0], rg[1], len(got), err, rg[1])
				}
			}
			if got, err := r.GetRange(t.Context(), "raw/range", 99990, 20); err == nil {
				t.Errorf("a range past the end: %d bytes and no error", len(got))
			}
			if _, err := r.GetRange(t.Context(), "raw/no-such", 0, 10); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("GetRange of a missing key = %v, want crawl.ErrNotFound", err)
			}
		}},
		{"KeepGet", func(t *testing.T) {
			// Bodies kept at once, the same one twice, an empty one: each
			// key reads back its body.
			b := open(t)
			bodies := [][]byte{[]byte("<html>one</html>"), []byte("<html>two</html>"), []byte("<html>one</html>"), {}, bytes.Repeat([]byte{0xff, 0}, 70000)}
			keys := make([]string, len(bodies))
			errs := make([]error, len(bodies))
			var wg sync.WaitGroup
			for i, body := range bodies {
				wg.Go(func() {
					keys[i], errs[i] = b.Keep(t.Context(), warc.Exchange{URL: fmt.Sprintf("http://example.com/%d", i),
						Date: time.Unix(1700000000, 0), Status: 200, Response: http.Header{"Content-Type": {"text/html"}}, Body: body})
				})
			}
			wg.Wait()
			for i, body := range bodies {
				if errs[i] != nil {
					t.Fatalf("keep %d: %v", i, errs[i])
				}
				got, err := b.Get(t.Context(), keys[i])
				if err != nil || !bytes.Equal(got, body) {
					t.Errorf("Get(%q): %d bytes, %v; want the %d kept", keys[i], len(got), err, len(body))
				}
			}
		}},
		{"InvalidKey", func(t *testing.T) {
			b := open(t)
			for _, key := range []string{"", "../up", "a/../../b", "/abs"} {
				if err := b.Put(t.Context(), key, []byte("x")); crawl.KindOf(err) != crawl.KindInvalid {
					t.Errorf("Put(%q) = %v, want KindInvalid", key, err)
				}
				if _, err := b.Get(t.Context(), key); crawl.KindOf(err) != crawl.KindInvalid {
					t.Errorf("Get(%q) = %v, want KindInvalid", key, err)
				}
				if e, ok := b.(BlobExister); ok {
					if _, err := e.Exists(t.Context(), key); crawl.KindOf(err) != crawl.KindInvalid {
						t.Errorf("Exists(%q) = %v, want KindInvalid", key, err)
					}
				}
			}
		}},
	})
}

// wantExists checks Exists, for a store that has it.
func wantExists(t *testing.T, b BlobStore, key string, want bool) {
	t.Helper()
	e, ok := b.(BlobExister)
	if !ok {
		return
	}
	if got, err := e.Exists(t.Context(), key); err != nil || got != want {
		t.Errorf("Exists(%q) = %v, %v; want %v", key, got, err, want)
	}
}
