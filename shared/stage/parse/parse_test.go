package parse

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/blobfs"
)

// sent records what a stage sends to one queue.
type sent struct{ bodies [][]byte }

func (s *sent) Send(_ context.Context, bodies ...[]byte) error {
	s.bodies = append(s.bodies, bodies...)
	return nil
}

type noCanonical struct{}

func (noCanonical) SetCanonicalURL(context.Context, string, string) error { return nil }

// A parsed document rides in the summarize task when it is small, as
// it is, or gzipped when that makes it fit, and is stored as a blob,
// named by the task, when even gzipped it does not.
func TestDocumentInlineOrStored(t *testing.T) {
	random := make([]byte, 400<<10)
	rand.NewChaCha8([32]byte{1}).Read(random)
	for _, tc := range []struct {
		name   string
		text   string
		inline string // "plain", "gzip", or "" for stored
	}{
		{"small page inline", "A short page.", "plain"},
		{"large page gzipped", strings.Repeat("many words of a long page ", 10000), "gzip"},
		{"large page that does not compress, stored", hex.EncodeToString(random), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			blobs, err := blobfs.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			body := []byte("<!doctype html><html><head><title>T</title></head><body><p>" + tc.text + "</p></body></html>")
			key := crawl.BodyKey(body)
			if err := blobs.Put(ctx, key, body); err != nil {
				t.Fatal(err)
			}
			var enq, sum sent
			p := New(blobs, noCanonical{}, &enq, &sum, Config{}, slog.New(slog.DiscardHandler))
			cr := &crawl.Crawl{Log: crawl.CrawlLog{URL: "http://example.com/", CrawlUUID: "c1", TimeStarted: 100, ExitCode: crawl.ExitComplete},
				File: &crawl.File{URL: "http://example.com/", MIMEType: "text/html", BodyKey: key}}
			task := crawl.ParseTask{URL: "http://example.com/", CrawlUUID: "c1", BodyKey: key, MIMEType: "text/html", Crawl: cr}
			if err := p.Handle(ctx, task); err != nil {
				t.Fatal(err)
			}
			if len(sum.bodies) != 1 {
				t.Fatalf("%d summarize tasks, want 1", len(sum.bodies))
			}
			var st crawl.SummarizeTask
			if err := json.Unmarshal(sum.bodies[0], &st); err != nil {
				t.Fatal(err)
			}
			if st.Crawl == nil || st.Crawl.Log != cr.Log || st.Crawl.File.BodyKey != key {
				t.Errorf("the summarize task carries the crawl %+v, want the parse task's %+v", st.Crawl, cr)
			}
			stored, err := blobs.Get(ctx, crawl.DocumentKey("c1"))
			var doc crawl.Document
			switch tc.inline {
			case "plain":
				if st.DocumentKey != "" || len(st.Document) == 0 || len(st.DocumentGz) != 0 || !errors.Is(err, crawl.ErrNotFound) {
					t.Fatalf("task %s, stored document err %v: want the document inline and no blob", sum.bodies[0][:min(200, len(sum.bodies[0]))], err)
				}
				err = json.Unmarshal(st.Document, &doc)
			case "gzip":
				if st.DocumentKey != "" || len(st.Document) != 0 || len(st.DocumentGz) == 0 || !errors.Is(err, crawl.ErrNotFound) {
					t.Fatalf("task %s, stored document err %v: want the document gzipped inline and no blob", sum.bodies[0][:min(200, len(sum.bodies[0]))], err)
				}
				zr, zerr := gzip.NewReader(bytes.NewReader(st.DocumentGz))
				if zerr != nil {
					t.Fatal(zerr)
				}
				err = json.NewDecoder(zr).Decode(&doc)
			default:
				if st.DocumentKey != crawl.DocumentKey("c1") || len(st.Document) != 0 || err != nil || len(stored) <= crawl.MaxInlineDocument {
					t.Fatalf("task key %q, inline %d bytes, blob %d bytes (%v): want the document stored under its key", st.DocumentKey, len(st.Document), len(stored), err)
				}
				err = json.Unmarshal(stored, &doc)
			}
			if err != nil || doc.Title == nil || *doc.Title != "T" {
				t.Errorf("document %+v, %v; want the page's title", doc.Title, err)
			}
			if len(sum.bodies[0]) > 256<<10 {
				t.Errorf("summarize task of %d bytes: over SQS's 256 KiB", len(sum.bodies[0]))
			}
		})
	}
}

// docSender is a summarize sender that takes documents as they are, and
// fails while err is set.
type docSender struct {
	sent
	docs []*crawl.Document
	err  error
}

func (d *docSender) SendDocument(_ context.Context, _ crawl.SummarizeTask, doc *crawl.Document) error {
	if d.err != nil {
		return d.err
	}
	d.docs = append(d.docs, doc)
	return nil
}

// A DocumentSender gets the parsed document as it is; if it fails, the
// encoded task is sent instead, so the page is still summarized.
func TestDocumentSender(t *testing.T) {
	for _, tc := range []struct {
		name          string
		err           error
		docs, encoded int
	}{
		{"document handed over", nil, 1, 0},
		{"handing over fails: task sent", errors.New("summarizer busy"), 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			blobs, err := blobfs.New(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			body := []byte("<!doctype html><title>T</title><p>Words.")
			key := crawl.BodyKey(body)
			if err := blobs.Put(ctx, key, body); err != nil {
				t.Fatal(err)
			}
			var enq sent
			sum := &docSender{err: tc.err}
			p := New(blobs, noCanonical{}, &enq, sum, Config{}, slog.New(slog.DiscardHandler))
			if err := p.Handle(ctx, crawl.ParseTask{URL: "http://example.com/", CrawlUUID: "c1", BodyKey: key, MIMEType: "text/html"}); err != nil {
				t.Fatal(err)
			}
			if len(sum.docs) != tc.docs || len(sum.bodies) != tc.encoded {
				t.Fatalf("%d documents handed over, %d tasks sent; want %d, %d", len(sum.docs), len(sum.bodies), tc.docs, tc.encoded)
			}
			if tc.docs == 1 && (sum.docs[0].Title == nil || *sum.docs[0].Title != "T") {
				t.Errorf("document handed over has title %v, want T", sum.docs[0].Title)
			}
		})
	}
}

func TestBodyKeys(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bodies []string
		want   []string
	}{
		{"tasks", []string{`{"url":"http://a/","crawl_uuid":"c","body_key":"w.warc.gz#0,10"}`, `{"body_key":"k2"}`}, []string{"w.warc.gz#0,10", "k2"}},
		{"no body key", []string{`{"url":"http://a/"}`}, []string{}},
		{"not JSON", []string{`not a task`, `{"body_key":"k"}`}, []string{"k"}},
		{"none", nil, []string{}},
	} {
		var bodies [][]byte
		for _, b := range tc.bodies {
			bodies = append(bodies, []byte(b))
		}
		if got := BodyKeys(bodies); !slices.Equal(got, tc.want) {
			t.Errorf("%s: BodyKeys = %q, want %q", tc.name, got, tc.want)
		}
	}
}
