package pipeline

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

// TestFetchedPagesGoStraightToTheParser: in a crawl, a fetched page is
// parsed and summarized as it is handed on, in process; no parse task is
// written to the parse queue (a trigger counts what each queue is sent),
// no fetch task to the database (the fetch queue is in memory), and
// every HTML page crawled has its summary.
func TestFetchedPagesGoStraightToTheParser(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	dir := t.TempDir()
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	dd.Close()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE sent(queue TEXT NOT NULL);
		CREATE TRIGGER count_sent AFTER INSERT ON queue_message BEGIN INSERT INTO sent VALUES (NEW.queue); END;`); err != nil {
		t.Fatal(err)
	}

	crawlSite(t, dir, testConfig(site.URL+"/"))

	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRow(q, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM sent WHERE queue = ?`, QueueParse); n != 0 {
		t.Errorf("%d parse tasks written to the parse queue, want none", n)
	}
	if n := count(`SELECT count(*) FROM sent WHERE queue = ?`, QueueFetch); n != 0 {
		t.Errorf("%d fetch tasks written to the database, want none (in memory)", n)
	}
	if n := count(`SELECT count(*) FROM sent WHERE queue = ?`, QueueEnqueue); n == 0 {
		t.Fatal("no seed written to the enqueue queue: the trigger counts nothing")
	}
	// Every crawl of an HTML page that came back with content has its
	// summary: the crawl_summary row of its crawl.
	htmlCrawls := count(`SELECT count(*) FROM crawl_log l JOIN file f ON f.crawl_log_id = l.crawl_log_id
		JOIN mimetype m ON m.mimetype_id = f.mimetype_id WHERE m.mimetype = 'text/html'`)
	summarized := count(`SELECT count(*) FROM crawl_log l JOIN file f ON f.crawl_log_id = l.crawl_log_id
		JOIN mimetype m ON m.mimetype_id = f.mimetype_id JOIN crawl_summary s ON s.crawl_uuid = l.crawl_uuid
		WHERE m.mimetype = 'text/html'`)
	if htmlCrawls == 0 || summarized != htmlCrawls {
		t.Errorf("%d of %d HTML crawls summarized, want all", summarized, htmlCrawls)
	}
}
