package dynamo

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/fetch"
	"github.com/serverless-crawler/crawler/shared/parse"
)

var (
	_ fetch.Store = (*DB)(nil)
	_ parse.Store = (*DB)(nil)
)

const logAgentUUID = "0d6a1f5e-2a43-4c1e-9d3b-6f1f0c1d2e3f"

func logRegisterAgent(t *testing.T, db *DB) {
	t.Helper()
	a := crawl.Agent{TimeStarted: 1700000000, UUID: logAgentUUID, Name: "test", HTTPUserAgent: pointerTo("crawler-test/1.0")}
	if err := db.RegisterAgent(context.Background(), a); err != nil {
		t.Fatalf("register agent: %v", err)
	}
}

// logQueuedCandidate stores a candidate released as crawlUUID and returns it.
func logQueuedCandidate(t *testing.T, db *DB, u, crawlUUID string) crawl.Candidate {
	t.Helper()
	return putNewCandidate(t, db, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateQueued, CrawlUUID: crawlUUID,
		QueuedAt: 1700000000, CrawlType: crawl.CrawlFirst, DiscoveredAt: 1699999999})
}

// logCrawledAs is the candidate as the fetch stage leaves it after cr.
func logCrawledAs(c crawl.Candidate, cr crawl.Crawl) crawl.Candidate {
	code, at := cr.Log.ExitCode, cr.Log.TimeStarted
	c.State, c.LastCrawlTime, c.LastCrawlExitCode = crawl.StateCrawled, &at, &code
	if code.Contentful() {
		c.LastContentfulCrawlTime = &at
		c.LastContentfulETag = cr.Requests[len(cr.Requests)-1].HTTPETag
	}
	return c
}

func logCrawlComplete(u, crawlUUID string) crawl.Crawl {
	text := "<html><title>Lamps</title></html>"
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: logAgentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			TimeStarted: 1700000100, TimeTakenMS: 42, ExitCode: crawl.ExitComplete},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000100, DurationMS: pointerTo(int64(40)), RobotsTxtApproved: true,
			ExitCode: crawl.ExitComplete, ServerLastModified: pointerTo(int64(1690000000)), HTTPStatusCode: pointerTo(200),
			HTTPETag: pointerTo(`"v1"`)}},
		File: &crawl.File{URL: u, LastModified: pointerTo(int64(1690000000)), FileSize: pointerTo(int64(len(text))),
			MIMEType: "text/html", CanonicalURL: pointerTo("http://example.com/canonical"), BodyKey: crawl.BodyKey([]byte(text)),
			Charset: "utf-8", ContentType: "text/html; charset=utf-8", ContentLanguage: "en", RobotsTag: "noarchive"},
		FileText: &text,
	}
}

func logCrawlRedirect(u, to, crawlUUID string) crawl.Crawl {
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: logAgentUUID, URL: u, CrawlType: crawl.CrawlReenqueued, CrawlUUID: crawlUUID,
			TimeStarted: 1700000200, TimeTakenMS: 7, ExitCode: crawl.ExitRedirect, Message: pointerTo("301 to " + to)},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000200, DurationMS: pointerTo(int64(6)), RobotsTxtApproved: true,
			ExitCode: crawl.ExitRedirect, HTTPStatusCode: pointerTo(301)}},
		Redirect: &crawl.Redirect{URL: u, ToURL: to, InformationSource: crawl.SourceHTTPHeader, IsPermanent: true,
			LastModified: pointerTo(int64(1690000001))},
	}
}

func logCrawlFailed(u, crawlUUID string) crawl.Crawl {
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: logAgentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			TimeStarted: 1700000300, TimeTakenMS: 30000, ExitCode: crawl.ExitTimeout, Message: pointerTo("timeout after 30s")},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000300, RobotsTxtApproved: true, ExitCode: crawl.ExitTimeout}},
	}
}

// withoutText is cr as GetCrawl reads it back.
func withoutText(cr crawl.Crawl) crawl.Crawl {
	cr.FileText = nil
	return cr
}

func crawlKey(crawlUUID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{clCrawlUUID: fxS(crawlUUID)}
}

func TestRecordCrawl(t *testing.T) {
	ctx := context.Background()
	const u = "http://example.com/page"
	// Now, not a fixed date: DynamoDB Local applies TTL, and would delete
	// items whose expires_at is in the past in the middle of the test.
	clock := time.Now().Truncate(time.Second)
	db := testDB(t, WithClock(func() time.Time { return clock }), WithCrawlLogRetention(48*time.Hour))
	logRegisterAgent(t, db)
	tests := []struct {
		name string
		cr   crawl.Crawl
	}{
		{"complete crawl with file and text", logCrawlComplete(u+"/complete", "crawl-1")},
		{"redirect", logCrawlRedirect(u+"/redirect", "https://example.com/page", "crawl-2")},
		{"failed crawl: log and request only", logCrawlFailed(u+"/failed", "crawl-3")},
		{"several requests", func() crawl.Crawl {
			cr := logCrawlComplete(u+"/retried", "crawl-4")
			cr.Requests = append([]crawl.Request{{URL: cr.Log.URL, TimeSent: 1700000099, RobotsTxtApproved: true,
				ExitCode: crawl.ExitHTTPServerError, HTTPStatusCode: pointerTo(503)}}, cr.Requests...)
			cr.File.CanonicalURL, cr.FileText = nil, nil
			return cr
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := logQueuedCandidate(t, db, tt.cr.Log.URL, tt.cr.Log.CrawlUUID)
			next := logCrawledAs(c, tt.cr)
			fresh, err := db.RecordCrawl(ctx, tt.cr, &next)
			if err != nil || !fresh {
				t.Fatalf("RecordCrawl = %v, %v; want true, nil", fresh, err)
			}
			got, err := db.GetCrawl(ctx, tt.cr.Log.CrawlUUID)
			if err != nil {
				t.Fatalf("GetCrawl: %v", err)
			}
			if want := withoutText(tt.cr); !reflect.DeepEqual(got, want) {
				t.Errorf("GetCrawl:\ngot  %+v\nwant %+v", got, want)
			}
			cand := mustGetCandidate(t, db, tt.cr.Log.URL)
			next.Version++
			if !reflect.DeepEqual(cand, next) {
				t.Errorf("candidate after RecordCrawl:\ngot  %+v\nwant %+v", cand, next)
			}
			if n, err := db.CrawlCount(ctx, tt.cr.Log.URL); err != nil || n != 1 {
				t.Errorf("CrawlCount = %d, %v; want 1", n, err)
			}
			item := readRawItem(t, db, db.t.CrawlLog, crawlKey(tt.cr.Log.CrawlUUID))
			if want := fxN(clock.Add(48 * time.Hour).Unix()); !reflect.DeepEqual(item[TTLAttribute], want) {
				t.Errorf("%s = %#v, want %#v", TTLAttribute, item[TTLAttribute], want)
			}
			if tt.cr.FileText != nil && !reflect.DeepEqual(item[clFileText], fxS(*tt.cr.FileText)) {
				t.Errorf("file_text = %#v, want %q", item[clFileText], *tt.cr.FileText)
			}
			if _, ok := item[clFileTextCut]; ok {
				t.Errorf("short file_text marked truncated")
			}

			// Recording the same crawl again writes nothing, not even the
			// candidate, whether its version is current or not.
			// (A stale version: both items' conditions fail.)
			for _, v := range []int64{cand.Version, cand.Version - 1} {
				again := cand
				again.Priority, again.Version = 99, v
				fresh, err = db.RecordCrawl(ctx, tt.cr, &again)
				if err != nil || fresh {
					t.Fatalf("second RecordCrawl = %v, %v; want false, nil", fresh, err)
				}
				if c := mustGetCandidate(t, db, tt.cr.Log.URL); !reflect.DeepEqual(c, cand) {
					t.Errorf("second RecordCrawl changed the candidate:\nbefore %+v\nafter  %+v", cand, c)
				}
				if n, err := db.CrawlCount(ctx, tt.cr.Log.URL); err != nil || n != 1 {
					t.Errorf("CrawlCount after redelivery = %d, %v; want 1", n, err)
				}
			}
		})
	}
	if n := countTableItems(t, db, db.t.CrawlLog); n != len(tests) {
		t.Errorf("crawl log items = %d, want %d", n, len(tests))
	}
}

func TestRecordCrawlCountsCrawls(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	const u = "http://example.com/page"
	c := logQueuedCandidate(t, db, u, "crawl-1")
	for i, id := range []string{"crawl-1", "crawl-2", "crawl-3"} {
		cr := logCrawlComplete(u, id)
		next := logCrawledAs(c, cr)
		if fresh, err := db.RecordCrawl(ctx, cr, &next); err != nil || !fresh {
			t.Fatalf("RecordCrawl %s = %v, %v", id, fresh, err)
		}
		c = mustGetCandidate(t, db, u)
		if n, err := db.CrawlCount(ctx, u); err != nil || n != i+1 {
			t.Errorf("after %s: CrawlCount = %d, %v; want %d", id, n, err, i+1)
		}
	}
	// A later PutCandidate keeps the count.
	c.State = crawl.StateDue
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatal(err)
	}
	if n, err := db.CrawlCount(ctx, u); err != nil || n != 3 {
		t.Errorf("after PutCandidate: CrawlCount = %d, %v; want 3", n, err)
	}
}

func TestRecordCrawlConflict(t *testing.T) {
	ctx := context.Background()
	const u = "http://example.com/page"
	tests := []struct {
		name      string
		candidate func(stored crawl.Candidate) crawl.Candidate
	}{
		{"stale candidate version", func(c crawl.Candidate) crawl.Candidate { c.Version--; return c }},
		{"candidate written meanwhile by someone else", func(c crawl.Candidate) crawl.Candidate { c.Version = 0; return c }},
		{"version from the future", func(c crawl.Candidate) crawl.Candidate { c.Version += 3; return c }},
		{"candidate deleted meanwhile", func(c crawl.Candidate) crawl.Candidate { c.URL += "/gone"; return c }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testDB(t)
			logRegisterAgent(t, db)
			c := logQueuedCandidate(t, db, u, "crawl-1")
			// Someone else updates the candidate (version 1 -> 2).
			c.Priority = 1
			if err := db.PutCandidate(ctx, c); err != nil {
				t.Fatal(err)
			}
			stored := mustGetCandidate(t, db, u)
			cr := logCrawlComplete(u, "crawl-1")
			next := logCrawledAs(tt.candidate(stored), cr)
			fresh, err := db.RecordCrawl(ctx, cr, &next)
			if !errors.Is(err, crawl.ErrConflict) || fresh {
				t.Fatalf("RecordCrawl = %v, %v; want false, ErrConflict", fresh, err)
			}
			if k := crawl.KindOf(err); k != crawl.KindConflict {
				t.Errorf("KindOf = %v, want KindConflict", k)
			}
			if n := countTableItems(t, db, db.t.CrawlLog); n != 0 {
				t.Errorf("crawl log items after failed RecordCrawl = %d, want 0", n)
			}
			if n := countTableItems(t, db, db.t.Candidates); n != 1 {
				t.Errorf("candidate items after failed RecordCrawl = %d, want 1", n)
			}
			if got := mustGetCandidate(t, db, u); !reflect.DeepEqual(got, stored) {
				t.Errorf("candidate changed:\nbefore %+v\nafter  %+v", stored, got)
			}
			if n, err := db.CrawlCount(ctx, u); err != nil || n != 0 {
				t.Errorf("CrawlCount = %d, %v; want 0", n, err)
			}
			if _, err := db.GetCrawl(ctx, "crawl-1"); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("GetCrawl after failed RecordCrawl: %v, want ErrNotFound", err)
			}
			// Re-read and retry, as the fetch stage does: it goes through.
			next = logCrawledAs(stored, cr)
			if fresh, err := db.RecordCrawl(ctx, cr, &next); err != nil || !fresh {
				t.Errorf("retry after re-read = %v, %v; want true, nil", fresh, err)
			}
		})
	}
}

func TestRecordCrawlWithoutCandidate(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	cr := logCrawlFailed("http://example.com/x", "crawl-x")
	for i, want := range []bool{true, false} {
		fresh, err := db.RecordCrawl(ctx, cr, nil)
		if err != nil || fresh != want {
			t.Fatalf("RecordCrawl(nil candidate) #%d = %v, %v; want %v, nil", i+1, fresh, err, want)
		}
	}
	if _, err := db.GetCandidate(ctx, cr.Log.URL); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("a crawl recorded without a candidate created one: %v", err)
	}
	if n := countTableItems(t, db, db.t.CrawlLog); n != 1 {
		t.Errorf("crawl log items = %d, want 1", n)
	}
	if _, err := db.RecordCrawl(ctx, crawl.Crawl{}, nil); crawl.KindOf(err) != crawl.KindInvalid {
		t.Errorf("RecordCrawl without a crawl_uuid = %v, want a KindInvalid error", err)
	}
}

func TestRecordCrawlTruncatesFileText(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	// 3-byte characters, so that the bound falls inside one.
	long := strings.Repeat("€", MaxFileText/3+100)
	cr := logCrawlComplete("http://example.com/big", "crawl-big")
	cr.FileText = &long
	if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
		t.Fatalf("RecordCrawl: %v", err)
	}
	item := readRawItem(t, db, db.t.CrawlLog, crawlKey("crawl-big"))
	text := item[clFileText].(*types.AttributeValueMemberS).Value
	if len(text) > MaxFileText || len(text) < MaxFileText-3 || !utf8.ValidString(text) || !strings.HasPrefix(long, text) {
		t.Errorf("stored text: %d bytes, valid UTF-8 %v; want a prefix of at most %d bytes", len(text), utf8.ValidString(text), MaxFileText)
	}
	if !reflect.DeepEqual(item[clFileTextCut], fxBool(true)) {
		t.Errorf("file_text_truncated = %#v, want true", item[clFileTextCut])
	}
	got, err := db.GetCrawl(ctx, "crawl-big")
	if err != nil {
		t.Fatal(err)
	}
	if want := withoutText(cr); !reflect.DeepEqual(got, want) {
		t.Errorf("GetCrawl:\ngot  %+v\nwant %+v", got, want)
	}
}

func TestGetCrawl(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	tests := []struct {
		name string
		cr   crawl.Crawl
	}{
		{"complete", logCrawlComplete("http://example.com/a", "c-complete")},
		{"complete, no optional file fields", func() crawl.Crawl {
			cr := logCrawlComplete("http://example.com/b", "c-bare")
			cr.File = &crawl.File{URL: cr.Log.URL, MIMEType: "application/pdf", BodyKey: "raw/ab/cdef"}
			cr.FileText = nil
			cr.Requests[0].DurationMS, cr.Requests[0].ServerLastModified, cr.Requests[0].HTTPETag = nil, nil, nil
			return cr
		}()},
		{"empty ETag and message kept", func() crawl.Crawl {
			cr := logCrawlComplete("http://example.com/e", "c-empty")
			cr.Requests[0].HTTPETag, cr.Log.Message = pointerTo(""), pointerTo("")
			return cr
		}()},
		{"redirect", logCrawlRedirect("http://example.com/r", "http://example.org/", "c-redirect")},
		{"redirect by security policy, from a meta tag", func() crawl.Crawl {
			cr := logCrawlRedirect("http://example.com/m", "https://example.com/m", "c-meta")
			cr.Redirect.InformationSource, cr.Redirect.IsPermanent, cr.Redirect.BySecurityPolicy = crawl.SourceHTMLMeta, false, true
			cr.Redirect.LastModified = nil
			return cr
		}()},
		{"failed", logCrawlFailed("http://example.com/f", "c-failed")},
		{"no requests", func() crawl.Crawl {
			cr := logCrawlFailed("http://example.com/n", "c-none")
			cr.Requests = nil
			cr.Log.ExitCode = crawl.ExitRobotsDisallowed
			return cr
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := db.RecordCrawl(ctx, tt.cr, nil); err != nil {
				t.Fatal(err)
			}
			got, err := db.GetCrawl(ctx, tt.cr.Log.CrawlUUID)
			if err != nil {
				t.Fatalf("GetCrawl: %v", err)
			}
			if want := withoutText(tt.cr); !reflect.DeepEqual(got, want) {
				t.Errorf("GetCrawl:\ngot  %+v\nwant %+v", got, want)
			}
		})
	}
	for _, id := range []string{"no-such-crawl", ""} {
		if _, err := db.GetCrawl(ctx, id); !errors.Is(err, crawl.ErrNotFound) {
			t.Errorf("GetCrawl(%q) = %v, want ErrNotFound", id, err)
		}
	}
}

func TestSetCanonicalURL(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	cr := logCrawlComplete("http://example.com/a", "c1")
	cr.File.CanonicalURL = nil
	noFile := logCrawlFailed("http://example.com/f", "c2")
	for _, c := range []crawl.Crawl{cr, noFile} {
		if _, err := db.RecordCrawl(ctx, c, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetCanonicalURL(ctx, "c1", "http://example.com/canon"); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetCrawl(ctx, "c1")
	if err != nil {
		t.Fatal(err)
	}
	want := withoutText(cr)
	f := *cr.File
	f.CanonicalURL = pointerTo("http://example.com/canon")
	want.File = &f
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after SetCanonicalURL:\ngot  %+v\nwant %+v", got, want)
	}

	// Like the SQLite store's UPDATE of no row: nothing happens.
	for _, id := range []string{"c2", "no-such-crawl", ""} {
		if err := db.SetCanonicalURL(ctx, id, "http://example.com/canon"); err != nil {
			t.Errorf("SetCanonicalURL(%q) = %v, want nil", id, err)
		}
	}
	if got, err := db.GetCrawl(ctx, "c2"); err != nil || !reflect.DeepEqual(got, noFile) {
		t.Errorf("crawl without a file changed: %+v, %v", got, err)
	}
	if n := countTableItems(t, db, db.t.CrawlLog); n != 2 {
		t.Errorf("crawl log items = %d, want 2 (no item made up)", n)
	}
}

// cancellingAPI fails every TransactWriteItems with the given reasons.
type cancellingAPI struct {
	API
	reasons []string
}

func (c cancellingAPI) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	var rs []types.CancellationReason
	for _, r := range c.reasons {
		rs = append(rs, types.CancellationReason{Code: aws.String(r)})
	}
	return nil, &types.TransactionCanceledException{Message: aws.String("cancelled"), CancellationReasons: rs}
}

func TestRecordCrawlCancellationReasons(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	const u = "http://example.com/page"
	recorded := logCrawlFailed(u, "crawl-recorded")
	if _, err := db.RecordCrawl(ctx, recorded, nil); err != nil {
		t.Fatal(err)
	}
	c := logQueuedCandidate(t, db, u, "crawl-new")
	tests := []struct {
		name      string
		reasons   []string
		crawlUUID string
		wantFresh bool
		wantErr   error // nil: no error; errAnyFailure: an error but not a conflict
	}{
		{"crawl recorded before", []string{"ConditionalCheckFailed", "None"}, "crawl-new", false, nil},
		{"both failed, reported as the candidate only; crawl recorded", []string{"None", "ConditionalCheckFailed"}, "crawl-recorded", false, nil},
		{"candidate changed", []string{"None", "ConditionalCheckFailed"}, "crawl-new", false, crawl.ErrConflict},
		{"another transaction on an item", []string{"TransactionConflict", "None"}, "crawl-new", false, crawl.ErrConflict},
		{"throttled", []string{"None", "ThrottlingError"}, "crawl-new", false, errAnyFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := New(cancellingAPI{API: db.api, reasons: tt.reasons}, db.t)
			cr := logCrawlComplete(u, tt.crawlUUID)
			next := logCrawledAs(c, cr)
			fresh, err := fake.RecordCrawl(ctx, cr, &next)
			if fresh != tt.wantFresh {
				t.Errorf("fresh = %v, want %v", fresh, tt.wantFresh)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("RecordCrawl: %v, want no error", err)
			case tt.wantErr == errAnyFailure && (err == nil || errors.Is(err, crawl.ErrConflict)):
				t.Errorf("RecordCrawl: %v, want an error other than a conflict", err)
			case tt.wantErr != nil && tt.wantErr != errAnyFailure && !errors.Is(err, tt.wantErr):
				t.Errorf("RecordCrawl: %v, want %v", err, tt.wantErr)
			}
		})
	}
}

var errAnyFailure = errors.New("any error")
