package pipeline

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// TestIndexWaiting: one look of the indexer writes every full batch
// waiting, not one (what is left at the crawl's end is indexed after its
// last fetch, while it waits), and leaves fewer than a batch to wait
// until indexWithin has passed; then it writes them too.
func TestIndexWaiting(t *testing.T) {
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	const extra = 5
	for i := range 3*sqlite.IndexBatch + extra {
		u := fmt.Sprintf("http://example.com/p%d", i)
		g := contract.TextGen(u, 100, contract.TextPile(fmt.Sprintf("page %d of the keeper's log", i)), "Page")
		if _, err := dd.DB.ApplySummary(ctx, contract.SummaryUpdate(u, fmt.Sprint("c", i), 100, crawl.GenerationReplace, 0, g)); err != nil {
			t.Fatal(err)
		}
	}
	r := parseRunner(dd)
	tests := []struct {
		name    string
		waiting time.Time
		left    int
		since   bool // a time the piles left waited since (else the next look starts it)
	}{
		{"full batches", time.Time{}, extra, false},
		{"fewer than a batch, lately", time.Now(), extra, true},
		{"fewer than a batch, long waiting", time.Now().Add(-indexWithin), 0, false},
	}
	for _, tt := range tests {
		since := r.indexWaiting(ctx, tt.waiting)
		n, err := dd.DB.Unindexed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != tt.left || since.IsZero() == tt.since {
			t.Errorf("%s: %d piles left unindexed, waiting since %v; want %d, waiting %v", tt.name, n, since, tt.left, tt.since)
		}
	}
}
