package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// FuzzDocumentGz: whatever a summarize task's document_gz holds (the
// summarize queue takes messages from anyone allowed to send to it),
// reading it returns a document or an error, within
// crawl.MaxDocumentBytes, and never panics. Seeds: testdata/fuzz.
func FuzzDocumentGz(f *testing.F) {
	f.Fuzz(func(t *testing.T, gz []byte) {
		b, err := gunzipDocument(gz)
		if err != nil {
			return
		}
		if len(b) > crawl.MaxDocumentBytes {
			t.Fatalf("read %d bytes, past the limit", len(b))
		}
		var doc crawl.Document
		_ = json.Unmarshal(b, &doc)
	})
}

// noLog is a store whose crawl log holds nothing.
type noLog struct{ Store }

func (noLog) GetCrawl(context.Context, string) (crawl.Crawl, error) {
	return crawl.Crawl{}, crawl.ErrNotFound
}

// FuzzSummarizeTask: whatever a summarize task's JSON holds (the queue
// takes messages from anyone allowed to send to it), the crawl it
// carries is taken only when it is the task's own crawl of the task's
// URL, is otherwise refused as malformed, and nothing panics. Seeds:
// testdata/fuzz.
func FuzzSummarizeTask(f *testing.F) {
	s := New(noLog{}, nil, Config{}, slog.New(slog.DiscardHandler))
	f.Fuzz(func(t *testing.T, b []byte) {
		var task crawl.SummarizeTask
		if json.Unmarshal(b, &task) != nil {
			return
		}
		cr, err := s.crawlOf(t.Context(), task)
		switch {
		case task.Crawl == nil:
			if !errors.Is(err, crawl.ErrNotFound) {
				t.Fatalf("a task without a crawl: %v, want the log's not found", err)
			}
		case err == nil:
			if cr.Log.CrawlUUID != task.CrawlUUID || cr.Log.URL != task.URL {
				t.Fatalf("took crawl %s of %s for the task's %s of %s", cr.Log.CrawlUUID, cr.Log.URL, task.CrawlUUID, task.URL)
			}
		case crawl.KindOf(err) != crawl.KindInvalid:
			t.Fatalf("a carried crawl refused with %v, want a malformed task", err)
		}
	})
}
