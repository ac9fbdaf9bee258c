package summarize

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestDocumentInTask: a summarize task's document is read the same
// whether it rides as JSON or gzipped (DocumentGz); a gzipped one that
// is not gzip, or decompresses past crawl.MaxDocumentBytes, is refused
// as malformed, not retried.
func TestDocumentInTask(t *testing.T) {
	title := "Lamps"
	doc := crawl.Document{URL: orderURL, Title: &title, Text: crawl.TextPile{Text: "lamps and lighthouses"}}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	tests := []struct {
		name    string
		task    crawl.SummarizeTask
		invalid bool
	}{
		{"as JSON", crawl.SummarizeTask{Document: js}, false},
		{"gzipped", crawl.SummarizeTask{DocumentGz: gz(js)}, false},
		{"not gzip", crawl.SummarizeTask{DocumentGz: []byte("plain bytes")}, true},
		{"past the limit", crawl.SummarizeTask{DocumentGz: gz(make([]byte, crawl.MaxDocumentBytes+1))}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openStore(t)
			cr := crawl.Crawl{
				Log:  crawl.CrawlLog{AgentUUID: "agent", URL: orderURL, CrawlType: crawl.CrawlFirst, CrawlUUID: "c1", TimeStarted: 100, ExitCode: crawl.ExitComplete},
				File: &crawl.File{URL: orderURL, MIMEType: "text/html", BodyKey: crawl.BodyKey([]byte("<p>lamps</p>"))},
			}
			if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
				t.Fatal(err)
			}
			s := New(db, nil, Config{}, slog.New(slog.DiscardHandler))
			task := tt.task
			task.URL, task.CrawlUUID = orderURL, "c1"
			err := s.Handle(ctx, task)
			if tt.invalid {
				if crawl.KindOf(err) != crawl.KindInvalid {
					t.Fatalf("Handle = %v, want a KindInvalid error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var n int
			db.SQL().QueryRow(`SELECT count(*) FROM document_description WHERE title = ?`, title).Scan(&n)
			if n != 1 {
				t.Errorf("%d generations titled %q, want 1", n, title)
			}
		})
	}
}
