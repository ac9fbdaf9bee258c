package pipeline

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
)

// readCounter is a store whose GetCrawl counts its calls and returns
// the crawl it is asked for, as read from a store.
type readCounter struct {
	summarize.Store
	reads map[string]int
}

func (c *readCounter) GetCrawl(_ context.Context, id string) (crawl.Crawl, error) {
	c.reads[id]++
	return crawl.Crawl{Log: crawl.CrawlLog{CrawlUUID: id, URL: "read"}}, nil
}

// TestRecentCrawls: a crawl kept is read from memory once, without its
// file text; read again, or never kept, or pushed out by newer ones, it
// is read from the store.
func TestRecentCrawls(t *testing.T) {
	ctx := context.Background()
	kept := func(id string) crawl.Crawl {
		text := "body"
		return crawl.Crawl{Log: crawl.CrawlLog{CrawlUUID: id, URL: "kept"}, FileText: &text,
			Requests: []crawl.Request{{URL: "kept", HTTPStatusCode: ptrTo(200)}}}
	}
	store := &readCounter{reads: map[string]int{}}
	r := newRecentCrawls(store)
	r.keep(kept("a"))
	for i := range recentCrawlsKept {
		r.keep(kept(fmt.Sprintf("n%d", i))) // "a" is the oldest: pushed out by the last
	}
	r.keep(kept("b"))
	for _, tt := range []struct {
		name, id, wantURL string
		wantReads         int
	}{
		{"kept: from memory", "b", "kept", 0},
		{"asked again: from the store", "b", "read", 1},
		{"never kept", "c", "read", 1},
		{"pushed out by newer crawls", "a", "read", 1},
		{"the oldest still kept", fmt.Sprintf("n%d", 1), "kept", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cr, err := r.GetCrawl(ctx, tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if cr.Log.CrawlUUID != tt.id || cr.Log.URL != tt.wantURL || store.reads[tt.id] != tt.wantReads {
				t.Errorf("GetCrawl(%s) = %s from %q, %d store reads; want %q, %d", tt.id, cr.Log.CrawlUUID, cr.Log.URL,
					store.reads[tt.id], tt.wantURL, tt.wantReads)
			}
			if tt.wantURL == "kept" {
				if cr.FileText != nil {
					t.Error("a kept crawl came back with its file text, which GetCrawl leaves out")
				}
				if want := kept(tt.id).Requests; !reflect.DeepEqual(cr.Requests, want) {
					t.Errorf("requests = %+v, want %+v", cr.Requests, want)
				}
			}
		})
	}
	if len(r.byID) > recentCrawlsKept {
		t.Errorf("%d crawls kept, want at most %d", len(r.byID), recentCrawlsKept)
	}
}
