package summarize

import (
	"encoding/json"
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
