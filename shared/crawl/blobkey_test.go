package crawl_test

import (
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestContentID: a file's content is known by its SHA-256 wherever its
// body is kept, and by its key when that is the content address.
func TestContentID(t *testing.T) {
	body := []byte("<html>x</html>")
	for _, f := range []crawl.File{
		{BodyKey: crawl.BodyKey(body)},
		{BodyKey: crawl.BodyKey(body), BodySHA256: crawl.BodySHA256(body)},
		{BodyKey: "warc/a.warc.gz#0,10", BodySHA256: crawl.BodySHA256(body)},
	} {
		if got := f.ContentID(); got != crawl.BodyKey(body) {
			t.Errorf("%+v: ContentID %q, want %q", f, got, crawl.BodyKey(body))
		}
	}
}
