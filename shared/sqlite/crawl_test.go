package sqlite_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/sqlite"
)

const agentUUID = "0d6a1f5e-2a43-4c1e-9d3b-6f1f0c1d2e3f"

func registerAgent(t *testing.T, db *sqlite.DB) {
	t.Helper()
	a := crawl.Agent{TimeStarted: 1700000000, UUID: agentUUID, Name: "test", HTTPUserAgent: ptr("crawler-test/1.0")}
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

// crawledAs is the candidate as the fetch stage leaves it after cr.
func crawledAs(c crawl.Candidate, cr crawl.Crawl) crawl.Candidate {
	code, at := cr.Log.ExitCode, cr.Log.TimeStarted
	c.State, c.LastCrawlTime, c.LastCrawlExitCode = crawl.StateCrawled, &at, &code
	if code.Contentful() {
		c.LastContentfulCrawlTime = &at
		c.LastContentfulETag = cr.Requests[len(cr.Requests)-1].HTTPETag
	}
	return c
}

func completeCrawl(u, crawlUUID string) crawl.Crawl {
	text := "<html><title>Lamps</title></html>"
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: agentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			TimeStarted: 1700000100, TimeTakenMS: 42, ExitCode: crawl.ExitComplete},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000100, DurationMS: ptr(int64(40)), RobotsTxtApproved: true,
			ExitCode: crawl.ExitComplete, ServerLastModified: ptr(int64(1690000000)), HTTPStatusCode: ptr(200),
			HTTPETag: ptr(`"v1"`)}},
		File: &crawl.File{URL: u, LastModified: ptr(int64(1690000000)), FileSize: ptr(int64(len(text))),
			MIMEType: "text/html", CanonicalURL: ptr("http://example.com/canonical"), BodyKey: crawl.BodyKey([]byte(text)),
			Charset: "utf-8", ContentType: "text/html; charset=utf-8", ContentLanguage: "en", RobotsTag: "noarchive"},
		FileText: &text,
	}
}

func redirectCrawl(u, to, crawlUUID string) crawl.Crawl {
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: agentUUID, URL: u, CrawlType: crawl.CrawlReenqueued, CrawlUUID: crawlUUID,
			TimeStarted: 1700000200, TimeTakenMS: 7, ExitCode: crawl.ExitRedirect, Message: ptr("301 to " + to)},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000200, DurationMS: ptr(int64(6)), RobotsTxtApproved: true,
			ExitCode: crawl.ExitRedirect, HTTPStatusCode: ptr(301)}},
		Redirect: &crawl.Redirect{URL: u, ToURL: to, InformationSource: crawl.SourceHTTPHeader, IsPermanent: true},
	}
}

func failedCrawl(u, crawlUUID string) crawl.Crawl {
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: agentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			TimeStarted: 1700000300, TimeTakenMS: 30000, ExitCode: crawl.ExitTimeout, Message: ptr("timeout after 30s")},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000300, RobotsTxtApproved: true, ExitCode: crawl.ExitTimeout}},
	}
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

func TestRecordCrawlRows(t *testing.T) {
	ctx := context.Background()
	const u = "http://example.com/page"
	tests := []struct {
		name  string
		cr    crawl.Crawl
		want  map[string]int
		check func(t *testing.T, db *sqlite.DB, cr crawl.Crawl)
	}{
		{
			name: "complete crawl with file and text",
			cr:   completeCrawl(u, "crawl-1"),
			want: map[string]int{"crawl_log": 1, "request": 1, "file": 1, "file_text": 1, "file_body": 1, "redirect": 0},
			check: func(t *testing.T, db *sqlite.DB, cr crawl.Crawl) {
				var agent, url, canon, mime, text, bodyKey, charset, ctype, clang, robots string
				var ctypeN, exit, status, size, reqOfFile, reqID, approved int
				err := db.SQL().QueryRowContext(ctx, `SELECT a.agent_uuid, u.url, l.crawl_type, l.exit_code,
					r.request_id, r.http_status_code, r.robotstxt_approved, f.request_id, f.file_size, m.mimetype, cu.url,
					t.text, b.body_key, b.charset, b.content_type, b.content_language, b.x_robots_tag
					FROM crawl_log l JOIN agent a ON a.agent_id=l.agent_id JOIN url u ON u.url_id=l.url_id
					JOIN request r ON r.crawl_log_id=l.crawl_log_id JOIN file f ON f.crawl_log_id=l.crawl_log_id
					JOIN mimetype m ON m.mimetype_id=f.mimetype_id JOIN url cu ON cu.url_id=f.canonical_url_id
					JOIN file_text t ON t.file_id=f.file_id JOIN file_body b ON b.file_id=f.file_id
					WHERE l.crawl_uuid=?`, cr.Log.CrawlUUID).Scan(&agent, &url, &ctypeN, &exit, &reqID, &status, &approved,
					&reqOfFile, &size, &mime, &canon, &text, &bodyKey, &charset, &ctype, &clang, &robots)
				if err != nil {
					t.Fatalf("read rows: %v", err)
				}
				f := cr.File
				got := []any{agent, url, ctypeN, exit, status, approved, reqOfFile, size, mime, canon, text, bodyKey, charset, ctype, clang, robots}
				want := []any{agentUUID, u, int(crawl.CrawlFirst), int(crawl.ExitComplete), 200, 1, reqID, int(*f.FileSize),
					"text/html", *f.CanonicalURL, *cr.FileText, f.BodyKey, "utf-8", f.ContentType, "en", "noarchive"}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("rows:\ngot  %v\nwant %v", got, want)
				}
			},
		},
		{
			name: "redirect",
			cr:   redirectCrawl(u, "https://example.com/page", "crawl-2"),
			want: map[string]int{"crawl_log": 1, "request": 1, "file": 0, "file_text": 0, "file_body": 0, "redirect": 1},
			check: func(t *testing.T, db *sqlite.DB, cr crawl.Crawl) {
				var from, to, msg string
				var src, perm, sec, reqID, reqOfRedirect int
				err := db.SQL().QueryRowContext(ctx, `SELECT fu.url, tu.url, rd.information_source, rd.is_permanent,
					rd.by_security_policy, rd.request_id, r.request_id, l.message
					FROM crawl_log l JOIN redirect rd ON rd.crawl_log_id=l.crawl_log_id JOIN request r ON r.crawl_log_id=l.crawl_log_id
					JOIN url fu ON fu.url_id=rd.url_id JOIN url tu ON tu.url_id=rd.to_url_id WHERE l.crawl_uuid=?`,
					cr.Log.CrawlUUID).Scan(&from, &to, &src, &perm, &sec, &reqOfRedirect, &reqID, &msg)
				if err != nil {
					t.Fatalf("read rows: %v", err)
				}
				got := []any{from, to, src, perm, sec, reqOfRedirect, msg}
				want := []any{u, "https://example.com/page", int(crawl.SourceHTTPHeader), 1, 0, reqID, *cr.Log.Message}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("rows:\ngot  %v\nwant %v", got, want)
				}
			},
		},
		{
			name: "failed crawl: log and request only",
			cr:   failedCrawl(u, "crawl-3"),
			want: map[string]int{"crawl_log": 1, "request": 1, "file": 0, "file_text": 0, "file_body": 0, "redirect": 0},
			check: func(t *testing.T, db *sqlite.DB, cr crawl.Crawl) {
				var exit, taken int
				var status, dur any
				err := db.SQL().QueryRowContext(ctx, `SELECT l.exit_code, l.time_taken_ms, r.http_status_code, r.request_duration_ms
					FROM crawl_log l JOIN request r ON r.crawl_log_id=l.crawl_log_id WHERE l.crawl_uuid=?`, cr.Log.CrawlUUID).
					Scan(&exit, &taken, &status, &dur)
				if err != nil {
					t.Fatalf("read rows: %v", err)
				}
				if exit != int(crawl.ExitTimeout) || taken != 30000 || status != nil || dur != nil {
					t.Errorf("got exit %d taken %d status %v duration %v", exit, taken, status, dur)
				}
			},
		},
		{
			name: "several requests: file points at the last",
			cr: func() crawl.Crawl {
				cr := completeCrawl(u, "crawl-4")
				cr.Requests = append([]crawl.Request{{URL: u, TimeSent: 1700000099, RobotsTxtApproved: true,
					ExitCode: crawl.ExitHTTPServerError, HTTPStatusCode: ptr(503)}}, cr.Requests...)
				cr.File.CanonicalURL, cr.FileText = nil, nil
				return cr
			}(),
			want: map[string]int{"crawl_log": 1, "request": 2, "file": 1, "file_text": 0, "file_body": 1, "redirect": 0},
			check: func(t *testing.T, db *sqlite.DB, cr crawl.Crawl) {
				var status int
				var canon any
				err := db.SQL().QueryRowContext(ctx, `SELECT r.http_status_code, f.canonical_url_id FROM file f
					JOIN request r ON r.request_id=f.request_id JOIN crawl_log l ON l.crawl_log_id=f.crawl_log_id
					WHERE l.crawl_uuid=?`, cr.Log.CrawlUUID).Scan(&status, &canon)
				if err != nil {
					t.Fatalf("read rows: %v", err)
				}
				if status != 200 || canon != nil {
					t.Errorf("file's request has status %d (want 200), canonical %v (want NULL)", status, canon)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			registerAgent(t, db)
			c := queuedCandidate(t, db, u, tt.cr.Log.CrawlUUID)
			next := crawledAs(c, tt.cr)
			fresh, err := db.RecordCrawl(ctx, tt.cr, &next)
			if err != nil || !fresh {
				t.Fatalf("RecordCrawl = %v, %v; want true, nil", fresh, err)
			}
			if got := tableCounts(t, db); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rows by table = %v, want %v", got, tt.want)
			}
			tt.check(t, db, tt.cr)
			got := mustGet(t, db, u)
			next.Version++
			if !reflect.DeepEqual(got, next) {
				t.Errorf("candidate after RecordCrawl:\ngot  %+v\nwant %+v", got, next)
			}

			// Recording the same crawl again writes nothing, not even the candidate.
			again := got
			again.Priority = 99
			fresh, err = db.RecordCrawl(ctx, tt.cr, &again)
			if err != nil || fresh {
				t.Fatalf("second RecordCrawl = %v, %v; want false, nil", fresh, err)
			}
			if got := tableCounts(t, db); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rows after second RecordCrawl = %v, want %v", got, tt.want)
			}
			if c := mustGet(t, db, u); !reflect.DeepEqual(c, got) {
				t.Errorf("second RecordCrawl changed the candidate:\nbefore %+v\nafter  %+v", got, c)
			}
		})
	}
}

func TestRecordCrawlAtomic(t *testing.T) {
	ctx := context.Background()
	const u = "http://example.com/page"
	tests := []struct {
		name      string
		register  bool
		candidate func(stored crawl.Candidate) *crawl.Candidate
		wantErr   error // nil: any error
	}{
		{"stale candidate version", true, func(c crawl.Candidate) *crawl.Candidate { c.Version--; return &c }, crawl.ErrConflict},
		{"candidate written meanwhile by someone else", true, func(c crawl.Candidate) *crawl.Candidate { c.Version = 0; return &c }, crawl.ErrConflict},
		{"unregistered agent rolls back the candidate", false, func(c crawl.Candidate) *crawl.Candidate { return &c }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			if tt.register {
				registerAgent(t, db)
			}
			c := queuedCandidate(t, db, u, "crawl-1")
			// Someone else updates the candidate (version 1 -> 2).
			c.Priority = 1
			if err := db.PutCandidate(ctx, c); err != nil {
				t.Fatal(err)
			}
			stored := mustGet(t, db, u)
			cr := completeCrawl(u, "crawl-1")
			next := crawledAs(*tt.candidate(stored), cr)
			urls := count(t, db, `SELECT count(*) FROM url`)
			fresh, err := db.RecordCrawl(ctx, cr, &next)
			if err == nil || fresh {
				t.Fatalf("RecordCrawl = %v, %v; want an error", fresh, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v, want %v", err, tt.wantErr)
			}
			want := map[string]int{"crawl_log": 0, "request": 0, "file": 0, "file_text": 0, "file_body": 0, "redirect": 0}
			if got := tableCounts(t, db); !reflect.DeepEqual(got, want) {
				t.Errorf("rows after failed RecordCrawl = %v, want none", got)
			}
			if n := count(t, db, `SELECT count(*) FROM url`); n != urls {
				t.Errorf("url rows %d -> %d: a failed RecordCrawl added URLs", urls, n)
			}
			if got := mustGet(t, db, u); !reflect.DeepEqual(got, stored) {
				t.Errorf("candidate changed:\nbefore %+v\nafter  %+v", stored, got)
			}
			if _, err := db.GetCrawl(ctx, "crawl-1"); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("GetCrawl after failed RecordCrawl: %v, want ErrNotFound", err)
			}
		})
	}
}

func TestRecordCrawlWithoutCandidate(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	registerAgent(t, db)
	cr := failedCrawl("http://example.com/x", "crawl-x")
	fresh, err := db.RecordCrawl(ctx, cr, nil)
	if err != nil || !fresh {
		t.Fatalf("RecordCrawl(nil candidate) = %v, %v", fresh, err)
	}
	if _, err := db.GetCandidate(ctx, cr.Log.URL); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("a crawl recorded without a candidate created one: %v", err)
	}
	if n := count(t, db, `SELECT count(*) FROM crawl_log`); n != 1 {
		t.Errorf("crawl_log rows = %d, want 1", n)
	}
}

func TestGetCrawl(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		cr   crawl.Crawl
	}{
		{"complete", completeCrawl("http://example.com/a", "c-complete")},
		{"complete, no optional file fields", func() crawl.Crawl {
			cr := completeCrawl("http://example.com/b", "c-bare")
			cr.File = &crawl.File{URL: cr.Log.URL, MIMEType: "application/pdf", BodyKey: "raw/ab/cdef"}
			cr.FileText = nil
			cr.Requests[0].DurationMS, cr.Requests[0].ServerLastModified, cr.Requests[0].HTTPETag = nil, nil, nil
			return cr
		}()},
		{"redirect", redirectCrawl("http://example.com/r", "http://example.org/", "c-redirect")},
		{"failed", failedCrawl("http://example.com/f", "c-failed")},
		{"no requests", func() crawl.Crawl {
			cr := failedCrawl("http://example.com/n", "c-none")
			cr.Requests = nil
			cr.Log.ExitCode = crawl.ExitRobotsDisallowed
			return cr
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			registerAgent(t, db)
			if _, err := db.RecordCrawl(ctx, tt.cr, nil); err != nil {
				t.Fatal(err)
			}
			got, err := db.GetCrawl(ctx, tt.cr.Log.CrawlUUID)
			if err != nil {
				t.Fatalf("GetCrawl: %v", err)
			}
			want := tt.cr
			want.FileText = nil // not read back
			want.Requests = append([]crawl.Request(nil), tt.cr.Requests...)
			// Ids are assigned by the store: take them from what was read.
			want.Log.ID = got.Log.ID
			if got.Log.ID == 0 {
				t.Error("crawl log id not set")
			}
			if len(got.Requests) == len(want.Requests) {
				for i := range want.Requests {
					want.Requests[i].ID = got.Requests[i].ID
				}
			}
			if want.File != nil && got.File != nil {
				f := *want.File
				f.ID = got.File.ID
				want.File = &f
			}
			if want.Redirect != nil && got.Redirect != nil {
				r := *want.Redirect
				r.ID = got.Redirect.ID
				want.Redirect = &r
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("GetCrawl:\ngot  %+v\nwant %+v", got, want)
			}
		})
	}

	t.Run("unknown crawl", func(t *testing.T) {
		db := openDB(t)
		_, err := db.GetCrawl(ctx, "no-such-crawl")
		if !errors.Is(err, crawl.ErrNotFound) {
			t.Errorf("GetCrawl(unknown) = %v, want ErrNotFound", err)
		}
	})
}

func TestSetCanonicalURL(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	registerAgent(t, db)
	cr := completeCrawl("http://example.com/a", "c1")
	cr.File.CanonicalURL = nil
	if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.SetCanonicalURL(ctx, "c1", "http://example.com/canon"); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetCrawl(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	if got.File == nil || got.File.CanonicalURL == nil || *got.File.CanonicalURL != "http://example.com/canon" {
		t.Errorf("canonical URL not set: %+v", got.File)
	}
}
