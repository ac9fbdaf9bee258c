package summarize

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

const orderURL = "http://example.com/page"

// fileCrawls records one contentful crawl of orderURL per body, at the
// given times, and returns the store and a summarizer over it.
func fileCrawls(t *testing.T, crawls map[string]struct {
	at   int64
	body string
}) (*sqlite.DB, *Summarizer) {
	t.Helper()
	ctx := context.Background()
	db := openStore(t)
	for id, c := range crawls {
		size := int64(len(c.body))
		cr := crawl.Crawl{
			Log:  crawl.CrawlLog{AgentUUID: "agent", URL: orderURL, CrawlType: crawl.CrawlFirst, CrawlUUID: id, TimeStarted: c.at, ExitCode: crawl.ExitComplete},
			File: &crawl.File{URL: orderURL, MIMEType: "application/pdf", FileSize: &size, BodyKey: crawl.BodyKey([]byte(c.body))},
		}
		if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
			t.Fatal(err)
		}
	}
	return db, New(db, nil, Config{}, slog.New(slog.DiscardHandler))
}

// openStore opens a fresh SQLite store with the agent "agent" registered.
func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.RegisterAgent(ctx, crawl.Agent{UUID: "agent", Name: "t", TimeStarted: 1}); err != nil {
		t.Fatal(err)
	}
	return db
}

func summarizeInOrder(t *testing.T, s *Summarizer, ids ...string) {
	t.Helper()
	for _, id := range ids {
		if err := s.Handle(context.Background(), crawl.SummarizeTask{URL: orderURL, CrawlUUID: id}); err != nil {
			t.Fatalf("summarize %s: %v", id, err)
		}
	}
}

// TestOlderCrawlArrivingLate: queues may deliver an older crawl's
// summary after a newer one opened the URL's current generation. The old
// crawl is kept (its crawl_summary) but rewrites no history, and is not
// retried forever.
func TestOlderCrawlArrivingLate(t *testing.T) {
	db, s := fileCrawls(t, map[string]struct {
		at   int64
		body string
	}{"new": {200, "version 2"}, "old": {100, "version 1"}})
	summarizeInOrder(t, s, "new", "old")
	var gens, summaries int
	db.SQL().QueryRow(`SELECT count(*) FROM entity_generation`).Scan(&gens)
	db.SQL().QueryRow(`SELECT count(*) FROM crawl_summary`).Scan(&summaries)
	if gens != 1 || summaries != 2 {
		t.Errorf("%d generations and %d crawl summaries, want 1 and 2", gens, summaries)
	}
	open, err := db.OpenGeneration(context.Background(), orderURL)
	if err != nil || open.Generation.FirstSeen != 200 {
		t.Errorf("open generation %+v (%v), want the newer one", open.Generation, err)
	}
}

// TestLateCrawlDoesNotReplaceLaterContent: crawls at 1000 (A), 1100 (B)
// and 1200 (A again), summarized in the order 1000, 1200, 1100. The crawl
// at 1100 arrives after A was seen at 1200: A stays the open generation.
func TestLateCrawlDoesNotReplaceLaterContent(t *testing.T) {
	db, s := fileCrawls(t, map[string]struct {
		at   int64
		body string
	}{"t0": {1000, "A"}, "t100": {1100, "B"}, "t200": {1200, "A"}})
	summarizeInOrder(t, s, "t0", "t200", "t100")
	open, err := db.OpenGeneration(context.Background(), orderURL)
	if err != nil || open.Generation.LastSeen != 1200 || open.ContentKey != "body:"+crawl.BodyKey([]byte("A")) {
		t.Errorf("open generation %+v %q (%v), want A last seen at 1200", open.Generation, open.ContentKey, err)
	}
}
