package crawl

import (
	"encoding/json"
	"strings"
	"testing"
)

// A task carries a crawl without its text, and not at all when the
// server made it long; what it carries reads back as it was.
func TestCarried(t *testing.T) {
	text, etag, status := "the whole body", `"v1"`, 200
	page := func(u string) Crawl {
		return Crawl{
			Log:      CrawlLog{ID: 7, URL: u, CrawlUUID: "c1", CrawlType: CrawlFirst, TimeStarted: 100, ExitCode: ExitComplete},
			Requests: []Request{{URL: u, TimeSent: 100, RobotsTxtApproved: true, ExitCode: ExitComplete, HTTPStatusCode: &status, HTTPETag: &etag}},
			File:     &File{URL: u, MIMEType: "text/html", BodyKey: "warc/a.warc.gz#0,10", RobotsTag: "noindex"},
			FileText: &text,
		}
	}
	for _, tc := range []struct {
		name    string
		url     string
		carried bool
	}{
		{"a page", "http://example.com/page", true},
		{"a URL near the bound", "http://example.com/" + strings.Repeat("a", 3<<10), true},
		{"a URL the server made long", "http://example.com/" + strings.Repeat("a", 6<<10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cr := page(tc.url)
			got := Carried(cr)
			if (got != nil) != tc.carried {
				t.Fatalf("carried %v, want %v", got != nil, tc.carried)
			}
			if got == nil {
				return
			}
			if got.FileText != nil || cr.FileText == nil {
				t.Errorf("FileText carried %v (the crawl's own %v): want it left out of the copy only", got.FileText, cr.FileText)
			}
			b, err := json.Marshal(SummarizeTask{URL: tc.url, CrawlUUID: "c1", Crawl: got})
			if err != nil {
				t.Fatal(err)
			}
			var back SummarizeTask
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			want := cr
			want.FileText, want.Log.ID = nil, 0 // ids are the store's own
			if back.Crawl == nil || back.Crawl.Log != want.Log || *back.Crawl.File != *want.File ||
				len(back.Crawl.Requests) != 1 || *back.Crawl.Requests[0].HTTPETag != etag || !back.Crawl.Requests[0].RobotsTxtApproved {
				t.Errorf("read back %+v, want %+v", back.Crawl, want)
			}
		})
	}
}
