package summarize

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/sqlite"
)

// TestOlderCrawlArrivingLate: queues may deliver an older crawl's
// summary after a newer one opened the URL's current generation. The old
// crawl is kept (its crawl_summary) but rewrites no history, and is not
// retried forever.
func TestOlderCrawlArrivingLate(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.RegisterAgent(ctx, crawl.Agent{UUID: "agent", Name: "t", TimeStarted: 1}); err != nil {
		t.Fatal(err)
	}
	const u = "http://example.com/page"
	record := func(id string, at int64, body string) {
		t.Helper()
		size := int64(len(body))
		cr := crawl.Crawl{
			Log:  crawl.CrawlLog{AgentUUID: "agent", URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: id, TimeStarted: at, ExitCode: crawl.ExitComplete},
			File: &crawl.File{URL: u, MIMEType: "application/pdf", FileSize: &size, BodyKey: crawl.BodyKey([]byte(body))},
		}
		if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
			t.Fatal(err)
		}
	}
	record("new", 200, "version 2")
	record("old", 100, "version 1")
	s := New(db, nil, Config{}, slog.New(slog.DiscardHandler))
	for _, id := range []string{"new", "old"} {
		if err := s.Handle(ctx, crawl.SummarizeTask{URL: u, CrawlUUID: id}); err != nil {
			t.Fatalf("summarize %s: %v", id, err)
		}
	}
	var gens, summaries int
	db.SQL().QueryRow(`SELECT count(*) FROM entity_generation`).Scan(&gens)
	db.SQL().QueryRow(`SELECT count(*) FROM crawl_summary`).Scan(&summaries)
	if gens != 1 || summaries != 2 {
		t.Errorf("%d generations and %d crawl summaries, want 1 and 2", gens, summaries)
	}
	open, err := db.OpenGeneration(ctx, u)
	if err != nil || open.Generation.FirstSeen != 200 {
		t.Errorf("open generation %+v (%v), want the newer one", open.Generation, err)
	}
}

// TestLateCrawlDoesNotReplaceLaterContent: crawls at 0 (A), 100 (B) and
// 200 (A again), summarized in the order 0, 200, 100. The crawl at 100
// arrives after A was seen at 200: A stays the open generation.
func TestLateCrawlDoesNotReplaceLaterContent(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.RegisterAgent(ctx, crawl.Agent{UUID: "agent", Name: "t", TimeStarted: 1}); err != nil {
		t.Fatal(err)
	}
	const u = "http://example.com/page"
	for _, c := range []struct {
		id   string
		at   int64
		body string
	}{{"t0", 1000, "A"}, {"t100", 1100, "B"}, {"t200", 1200, "A"}} {
		size := int64(len(c.body))
		cr := crawl.Crawl{
			Log:  crawl.CrawlLog{AgentUUID: "agent", URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: c.id, TimeStarted: c.at, ExitCode: crawl.ExitComplete},
			File: &crawl.File{URL: u, MIMEType: "application/pdf", FileSize: &size, BodyKey: crawl.BodyKey([]byte(c.body))},
		}
		if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
			t.Fatal(err)
		}
	}
	s := New(db, nil, Config{}, slog.New(slog.DiscardHandler))
	for _, id := range []string{"t0", "t200", "t100"} {
		if err := s.Handle(ctx, crawl.SummarizeTask{URL: u, CrawlUUID: id}); err != nil {
			t.Fatalf("summarize %s: %v", id, err)
		}
	}
	open, err := db.OpenGeneration(ctx, u)
	if err != nil || open.Generation.LastSeen != 1200 || open.ContentKey != "body:"+crawl.BodyKey([]byte("A")) {
		t.Errorf("open generation %+v %q (%v), want A last seen at 1200", open.Generation, open.ContentKey, err)
	}
}
