package sqlite_test

import (
	"context"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

func registerAgent(t *testing.T, db *sqlite.DB) {
	t.Helper()
	a := crawl.Agent{TimeStarted: 1700000000, UUID: contract.AgentUUID, Name: "test", HTTPUserAgent: ptr("crawler-test/1.0")}
	if err := db.RegisterAgent(context.Background(), a); err != nil {
		t.Fatalf("register agent: %v", err)
	}
}

// queuedCandidate stores a candidate released as crawlUUID and returns it.
func queuedCandidate(t *testing.T, db *sqlite.DB, u, crawlUUID string) crawl.Candidate {
	t.Helper()
	return putNew(t, db, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateQueued, CrawlUUID: crawlUUID,
		QueuedAt: 1700000000, CrawlType: crawl.CrawlFirst, DiscoveredAt: 1699999999})
}

// tableCounts counts the rows a crawl writes, by table.
func tableCounts(t *testing.T, db *sqlite.DB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tb := range []string{"crawl_log", "request", "file", "file_text", "file_body", "redirect"} {
		out[tb] = count(t, db, `SELECT count(*) FROM `+tb)
	}
	return out
}

// TestRecordCrawlRows: the rows a crawl writes, by table (the contract
// reads the crawl back through GetCrawl): the file and redirect rows
// point at the crawl's last request, file_text keeps the text, and
// GetCrawl returns the row ids.
func TestRecordCrawlRows(t *testing.T) {
	ctx := context.Background()
	const u = "http://example.com/page"
	several := contract.CompleteCrawl(u, "crawl-4")
	several.Requests = append([]crawl.Request{{URL: u, TimeSent: 1700000099, RobotsTxtApproved: true,
		ExitCode: crawl.ExitHTTPServerError, HTTPStatusCode: ptr(503)}}, several.Requests...)
	several.FileText = nil
	tests := []struct {
		name string
		cr   crawl.Crawl
		want map[string]int
	}{
		{"complete crawl with file and text", contract.CompleteCrawl(u, "crawl-1"),
			map[string]int{"crawl_log": 1, "request": 1, "file": 1, "file_text": 1, "file_body": 1, "redirect": 0}},
		{"redirect", contract.RedirectCrawl(u, "https://example.com/page", "crawl-2"),
			map[string]int{"crawl_log": 1, "request": 1, "file": 0, "file_text": 0, "file_body": 0, "redirect": 1}},
		{"failed crawl: log and request only", contract.FailedCrawl(u, "crawl-3"),
			map[string]int{"crawl_log": 1, "request": 1, "file": 0, "file_text": 0, "file_body": 0, "redirect": 0}},
		{"several requests", several,
			map[string]int{"crawl_log": 1, "request": 2, "file": 1, "file_text": 0, "file_body": 1, "redirect": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			registerAgent(t, db)
			if _, err := db.RecordCrawl(ctx, tt.cr, nil); err != nil {
				t.Fatal(err)
			}
			if got := tableCounts(t, db); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rows by table = %v, want %v", got, tt.want)
			}
			got, err := db.GetCrawl(ctx, tt.cr.Log.CrawlUUID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Log.ID == 0 || len(got.Requests) == 0 || got.Requests[len(got.Requests)-1].ID == 0 {
				t.Fatalf("row ids not read back: %+v", got)
			}
			last := int64(got.Requests[len(got.Requests)-1].ID)
			for _, link := range []struct {
				table string
				has   bool
			}{{"file", got.File != nil}, {"redirect", got.Redirect != nil}} {
				if !link.has {
					continue
				}
				if n := count(t, db, `SELECT request_id FROM `+link.table+` WHERE crawl_log_id=?`, got.Log.ID); int64(n) != last {
					t.Errorf("%s row points at request %d, want the last, %d", link.table, n, last)
				}
			}
			if got.File != nil && got.File.ID == 0 || got.Redirect != nil && got.Redirect.ID == 0 {
				t.Errorf("file or redirect id not read back: %+v %+v", got.File, got.Redirect)
			}
			if tt.cr.FileText != nil {
				var text string
				if err := db.SQL().QueryRowContext(ctx, `SELECT text FROM file_text WHERE file_id=?`, got.File.ID).Scan(&text); err != nil || text != *tt.cr.FileText {
					t.Errorf("file_text = %q, %v; want %q", text, err, *tt.cr.FileText)
				}
			}
		})
	}
}

// TestRecordCrawlUnknownAgent: a crawl names its agent by uuid, and the
// SQLite store keeps the agent's row id: a crawl of an agent never
// registered is an error, and nothing of it is written, not even its
// candidate or a url row. (The DynamoDB store keeps the uuid and records
// such a crawl.)
func TestRecordCrawlUnknownAgent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const u = "http://example.com/page"
	c := queuedCandidate(t, db, u, "crawl-1")
	cr := contract.CompleteCrawl(u, "crawl-1")
	next := contract.CrawledAs(c, cr)
	urls := count(t, db, `SELECT count(*) FROM url`)
	if fresh, err := db.RecordCrawl(ctx, cr, &next); err == nil || fresh {
		t.Fatalf("RecordCrawl = %v, %v; want an error", fresh, err)
	}
	want := map[string]int{"crawl_log": 0, "request": 0, "file": 0, "file_text": 0, "file_body": 0, "redirect": 0}
	if got := tableCounts(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("rows after failed RecordCrawl = %v, want none", got)
	}
	if n := count(t, db, `SELECT count(*) FROM url`); n != urls {
		t.Errorf("url rows %d -> %d: a failed RecordCrawl added URLs", urls, n)
	}
	if got := mustGet(t, db, u); !reflect.DeepEqual(got, c) {
		t.Errorf("candidate changed:\nbefore %+v\nafter  %+v", c, got)
	}
}

// TestNotHandedOn: every recorded crawl without a summary is handed on
// at a resume, not only its candidate's current one: content followed
// by a 304 before its summary (which the 304 waits for) is found too,
// and each comes as its candidate naming that crawl.
func TestNotHandedOn(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	registerAgent(t, db)
	const u = "http://example.com/"
	record := func(cr crawl.Crawl) {
		t.Helper()
		c, err := db.GetCandidate(ctx, u)
		if err != nil {
			c = queuedCandidate(t, db, u, cr.Log.CrawlUUID)
		}
		c.State, c.CrawlUUID = crawl.StateQueued, cr.Log.CrawlUUID
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatal(err)
		}
		c, _ = db.GetCandidate(ctx, u)
		next := contract.CrawledAs(c, cr)
		if _, err := db.RecordCrawl(ctx, cr, &next); err != nil {
			t.Fatal(err)
		}
	}
	content := contract.CompleteCrawl(u, "content")
	record(content)
	record(contract.UnchangedCrawl(u, "unchanged", content.Log.TimeStarted+60))
	got, err := db.NotHandedOn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var uuids []string
	for _, c := range got {
		if c.URL != u {
			t.Errorf("candidate %s, want %s", c.URL, u)
		}
		uuids = append(uuids, c.CrawlUUID)
	}
	if want := []string{"content", "unchanged"}; !reflect.DeepEqual(uuids, want) {
		t.Errorf("crawls not handed on: %v, want %v", uuids, want)
	}
	// Summarized, the content settles the 304 that waited for it.
	su := crawl.SummaryUpdate{URL: u, SeenAt: content.Log.TimeStarted, Action: crawl.GenerationReplace,
		Crawl: crawl.CrawlSummary{CrawlUUID: "content", AgentUUID: contract.AgentUUID, TimeStarted: content.Log.TimeStarted, ExitCode: crawl.ExitComplete},
		New:   contract.TextGen(u, content.Log.TimeStarted, contract.TextPile("words"), "T")}
	if _, err := db.ApplySummary(ctx, su); err != nil {
		t.Fatal(err)
	}
	if got, err := db.NotHandedOn(ctx); err != nil || len(got) != 0 {
		t.Errorf("after the summary: %d crawls not handed on (%v), want none", len(got), err)
	}
}

// TestHostBackOffs: a host's back-off is kept past the process, the
// later of two times wins, and one past its time is not returned.
func TestHostBackOffs(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	now := time.Now()
	for _, b := range []struct {
		host  string
		until time.Time
	}{
		{"busy.example", now.Add(10 * time.Minute)},
		{"busy.example", now.Add(5 * time.Minute)}, // earlier: the later stays
		{"done.example", now.Add(-time.Second)},
		{"other.example:8080", now.Add(time.Hour)},
	} {
		if err := db.PutHostBackOff(ctx, b.host, b.until); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.HostBackOffs(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{
		"busy.example":       time.UnixMilli(now.Add(10 * time.Minute).UnixMilli()),
		"other.example:8080": time.UnixMilli(now.Add(time.Hour).UnixMilli()),
	}
	if !maps.EqualFunc(got, want, time.Time.Equal) {
		t.Errorf("HostBackOffs = %v, want %v", got, want)
	}
}
