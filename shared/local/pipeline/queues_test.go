package pipeline

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

// TestQueues: the fetch queue is in memory and every other queue in the
// database; Pending counts both; a fetch task dead-lettered goes to the
// database's dead-letter queue with its reason, and is out of memory.
func TestQueues(t *testing.T) {
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	q := newQueues(dd.DB)
	if err := q.Send(ctx, QueueFetch, []byte(`{"url":"a"}`), []byte(`{"url":"b"}`)); err != nil {
		t.Fatal(err)
	}
	if err := q.Send(ctx, QueueSummarize, []byte(`{"url":"c"}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		queues []string
		want   int
	}{
		{[]string{QueueFetch}, 2},
		{[]string{QueueSummarize}, 1},
		{allQueues, 3},
	} {
		if n, err := q.Pending(ctx, tc.queues...); n != tc.want || err != nil {
			t.Errorf("Pending(%v) = %d, %v; want %d", tc.queues, n, err, tc.want)
		}
	}
	if n, err := dd.DB.Pending(ctx, QueueFetch); n != 0 || err != nil {
		t.Errorf("%d fetch tasks (%v) in the database, want none", n, err)
	}
	msgs, err := q.Receive(ctx, QueueFetch, 1, time.Minute)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != `{"url":"a"}` || msgs[0].ReceiveCount != 1 {
		t.Fatalf("Receive = %+v, %v; want the first task, received once", msgs, err)
	}
	if err := q.DeadLetter(ctx, QueueFetch, msgs[0].ID, "cannot be handled"); err != nil {
		t.Fatal(err)
	}
	dead, err := dd.DB.DeadLetters(ctx, QueueFetch)
	if err != nil || len(dead) != 1 || dead[0] != [2]string{`{"url":"a"}`, "cannot be handled"} {
		t.Errorf("dead letters = %q, %v; want the task with its reason", dead, err)
	}
	if n, _ := q.Pending(ctx, QueueFetch); n != 1 {
		t.Errorf("%d fetch tasks pending after the dead letter, want 1", n)
	}
	// And one of a queue kept in the database.
	sum, err := q.Receive(ctx, QueueSummarize, 1, time.Minute)
	if err != nil || len(sum) != 1 {
		t.Fatalf("Receive = %+v, %v; want the summarize task", sum, err)
	}
	if err := q.DeadLetter(ctx, QueueSummarize, sum[0].ID, "cannot be summarized"); err != nil {
		t.Fatal(err)
	}
	// Counted as dead-lettered since a moment ago, and not since now.
	for _, tc := range []struct {
		since  time.Time
		recent int
	}{{time.Now().Add(-time.Minute), 2}, {time.Now().Add(time.Second), 0}} {
		if recent, all, err := dd.DB.DeadLetterCounts(ctx, tc.since, allQueues...); recent != tc.recent || all != 2 || err != nil {
			t.Errorf("DeadLetterCounts(since %v) = %d, %d, %v; want %d of 2", tc.since, recent, all, err, tc.recent)
		}
	}
}

// TestResumeDropsFetchTasksInTheDatabase: the fetch tasks an earlier
// version kept in the database (a killed run's) are dropped when a run
// resumes: their candidates are released again, so the crawl finishes,
// with no message left, and crawls every page once.
func TestResumeDropsFetchTasksInTheDatabase(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	dir := t.TempDir()
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := dd.DB.Send(context.Background(), QueueFetch, []byte(`{"url":"`+site.URL+`/","crawl_uuid":"from-an-earlier-run"}`)); err != nil {
		t.Fatal(err)
	}
	dd.Close()

	crawlSite(t, dir, testConfig(site.URL+"/"))
	finishedOnce(t, dir, site, nil)
}

// TestResumeHandsOnRecordedCrawls: a run stopped between a crawl's
// record and its hand-on (its fetch task was in memory) leaves the
// crawl recorded without a summary; the next run hands it on, without
// fetching it again, and the crawl ends as an uninterrupted one does.
func TestResumeHandsOnRecordedCrawls(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	dir := t.TempDir()
	if n := stopAfterFirstRecord(t, dir, testConfig(site.URL+"/")); n == 0 {
		t.Fatal("the run did not stop between a record and its hand-on")
	}
	first := stoppedRun{site.Counts(), recordedPaths(t, dir)}
	crawlSite(t, dir, testConfig(site.URL+"/"))
	finishedOnce(t, dir, site, &first)
}

// stoppedRun is what a stopped run left: the requests the site had by
// then, and the paths whose crawls it recorded.
type stoppedRun struct {
	requests map[string]int
	recorded map[string]bool
}

// recordedPaths is the paths of the crawls recorded in dir's database.
func recordedPaths(t *testing.T, dir string) map[string]bool {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT u.url FROM crawl_log l JOIN url u USING (url_id)`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	paths := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		paths[u.Path] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return paths
}

// finishedOnce checks a crawl of site into dir that was resumed: every
// crawl summarized, no message left in the database, no page fetched
// twice (robots.txt aside: each run reads it), and more than the seed
// fetched. After a stopped run (first, nil if none), a page whose crawl
// that run recorded is not fetched again; one it was fetching when it
// stopped may be, once.
func finishedOnce(t *testing.T, dir string, site *testsite.Site, first *stoppedRun) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct{ name, query string }{
		{"crawls without a summary", unsummarized},
		{"messages left", `SELECT count(*) FROM queue_message`},
	} {
		var n int
		if err := db.QueryRow(c.query).Scan(&n); err != nil || n != 0 {
			t.Errorf("%s: %d (%v)", c.name, n, err)
		}
	}
	for p, n := range site.Counts() {
		most := 1
		if first != nil {
			most = first.requests[p]
			if !first.recorded[p] {
				most++
			}
		}
		if n > most && p != "/robots.txt" {
			t.Errorf("%s requested %d times, want at most %d: a crawl was fetched again", p, n, most)
		}
	}
	if len(site.Counts()) < 3 {
		t.Errorf("%d paths requested: the crawl did not run", len(site.Counts()))
	}
}

// unsummarized counts the crawls recorded without a summary: not
// handed on (every crawl gets its summary).
const unsummarized = `SELECT count(*) FROM crawl_log l WHERE NOT EXISTS
	(SELECT 1 FROM crawl_summary s WHERE s.crawl_uuid=l.crawl_uuid)`

// stopAfterFirstRecord runs a crawl of seed into dir that stops at its
// first recorded crawl, before that crawl is handed on, and returns how
// many crawls are then recorded without a summary.
func stopAfterFirstRecord(t *testing.T, dir string, cfg Config) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stopped sync.Once
	cfg.afterRecord = func(crawl.Crawl) { stopped.Do(cancel) }
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	if _, err := dd.Run(ctx, cfg); err == nil {
		t.Fatal("the stopped run returned no error")
	}
	var n int
	if err := dd.DB.SQL().QueryRow(unsummarized).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// notHandedOn counts the crawls recorded without a summary and without
// a parse or summarize task in the database: a crawl whose hand-off was
// cut short by the stop may already have its task queued there (to be
// retried), and that task, not a hand-on, finishes it.
const notHandedOn = unsummarized + ` AND NOT EXISTS (SELECT 1 FROM queue_message q
	WHERE q.queue IN ('` + QueueParse + `', '` + QueueSummarize + `')
	AND json_extract(q.body, '$.crawl_uuid')=l.crawl_uuid)`

// TestResumeHandsOnBeforeRelease: a run hands on what the stopped run
// before it recorded before it releases anything: released again first
// (here by --recrawl, which makes every URL due), a candidate would no
// longer name the unfinished crawl, and a second stop would lose it.
func TestResumeHandsOnBeforeRelease(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	dir := t.TempDir()
	if n := stopAfterFirstRecord(t, dir, testConfig(site.URL+"/")); n == 0 {
		t.Fatal("the first run did not stop between a record and its hand-on")
	}
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	cfg := testConfig(site.URL + "/")
	cfg.Recrawl = true
	resumed := false
	cfg.afterResume = func() {
		resumed = true
		var n int
		if err := dd.DB.SQL().QueryRow(notHandedOn).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d crawls not handed on (%v) when the run starts releasing, want none", n, err)
		}
	}
	if _, err := dd.Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if !resumed {
		t.Error("the run never said it had resumed")
	}
}

// TestResumeLeavesDeadLettersAlone: a recorded crawl whose summarize
// task was dead-lettered is not handed on again by every run (each
// would dead-letter it once more).
func TestResumeLeavesDeadLettersAlone(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	dir := t.TempDir()
	if n := stopAfterFirstRecord(t, dir, testConfig(site.URL+"/")); n == 0 {
		t.Fatal("the run did not stop between a record and its hand-on")
	}
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var crawlUUID string
	if err := dd.DB.SQL().QueryRow(strings.Replace(notHandedOn, "count(*)", "l.crawl_uuid", 1) + ` LIMIT 1`).Scan(&crawlUUID); err != nil {
		t.Fatal(err)
	}
	if err := dd.DB.AddDeadLetter(context.Background(), QueueSummarize, []byte(`{"url":"x","crawl_uuid":"`+crawlUUID+`"}`), 10, "cannot be handled"); err != nil {
		t.Fatal(err)
	}
	dd.Close()

	res := crawlSite(t, dir, testConfig(site.URL+"/"))
	if res.DeadLettersAll != 1 || res.DeadLetters != 0 {
		t.Errorf("%d dead letters after the next run, %d of them its own; want the one, of the run before (not handed on again)",
			res.DeadLettersAll, res.DeadLetters)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var summarized int
	if err := db.QueryRow(`SELECT count(*) FROM crawl_summary WHERE crawl_uuid=?`, crawlUUID).Scan(&summarized); err != nil || summarized != 0 {
		t.Errorf("the dead-lettered crawl has %d summaries (%v): it was handed on again", summarized, err)
	}
}
