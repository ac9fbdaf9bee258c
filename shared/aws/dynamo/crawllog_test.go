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

	"github.com/serverless-crawler/crawler/shared/aws/itemsize"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// logQueuedCandidate stores a candidate released as crawlUUID and returns it.
func logQueuedCandidate(t *testing.T, db *DB, u, crawlUUID string) crawl.Candidate {
	t.Helper()
	return putNewCandidate(t, db, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateQueued, CrawlUUID: crawlUUID,
		QueuedAt: 1700000000, CrawlType: crawl.CrawlFirst, DiscoveredAt: 1699999999})
}

// withoutText is cr as GetCrawl reads it back.
func withoutText(cr crawl.Crawl) crawl.Crawl {
	cr.FileText = nil
	return cr
}

func crawlKey(crawlUUID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{clCrawlUUID: fxS(crawlUUID)}
}

// TestCrawlLogItem: a crawl log item expires after the retention
// (DynamoDB's TTL attribute) and keeps the file's text, whole when it is
// short. (The contract reads the crawl back through GetCrawl.)
func TestCrawlLogItem(t *testing.T) {
	ctx := context.Background()
	const u = "http://example.com/page"
	// Now, not a fixed date: DynamoDB Local applies TTL, and would delete
	// items whose expires_at is in the past in the middle of the test.
	clock := time.Now().Truncate(time.Second)
	db := testDB(t, WithClock(func() time.Time { return clock }), WithCrawlLogRetention(48*time.Hour))
	for _, cr := range []crawl.Crawl{contract.CompleteCrawl(u+"/complete", "crawl-1"), contract.FailedCrawl(u+"/failed", "crawl-2")} {
		t.Run(cr.Log.CrawlUUID, func(t *testing.T) {
			next := contract.CrawledAs(logQueuedCandidate(t, db, cr.Log.URL, cr.Log.CrawlUUID), cr)
			if fresh, err := db.RecordCrawl(ctx, cr, &next); err != nil || !fresh {
				t.Fatalf("RecordCrawl = %v, %v; want true, nil", fresh, err)
			}
			item := readRawItem(t, db, db.t.CrawlLog, crawlKey(cr.Log.CrawlUUID))
			if want := fxN(clock.Add(48 * time.Hour).Unix()); !reflect.DeepEqual(item[TTLAttribute], want) {
				t.Errorf("%s = %#v, want %#v", TTLAttribute, item[TTLAttribute], want)
			}
			if cr.FileText != nil && !reflect.DeepEqual(item[clFileText], fxS(*cr.FileText)) {
				t.Errorf("file_text = %#v, want %q", item[clFileText], *cr.FileText)
			}
			if _, ok := item[clFileTextCut]; ok {
				t.Errorf("short file_text marked truncated")
			}
		})
	}
}

func TestRecordCrawlTruncatesFileText(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	// 3-byte characters, so that the bound falls inside one.
	long := strings.Repeat("€", MaxFileText/3+100)
	cr := contract.CompleteCrawl("http://example.com/big", "crawl-big")
	cr.FileText = &long
	if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
		t.Fatalf("RecordCrawl: %v", err)
	}
	item := readRawItem(t, db, db.t.CrawlLog, crawlKey("crawl-big"))
	text := item[clFileText].(*types.AttributeValueMemberS).Value
	if size := itemsize.Of(item); size > writeUnitBytes || size < writeUnitBytes-3 {
		t.Errorf("the item is %d bytes, want the text to fill one write unit (%d bytes) but not pass it", size, writeUnitBytes)
	}
	if len(text) > MaxFileText || len(text) < 100 || !utf8.ValidString(text) || !strings.HasPrefix(long, text) {
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

// failingLogAPI fails the crawl log table's PutItems, as a process
// killed between RecordCrawl's two writes leaves them.
type failingLogAPI struct {
	API
	table string
}

func (f failingLogAPI) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if aws.ToString(in.TableName) == f.table {
		return nil, errors.New("killed before the crawl log write")
	}
	return f.API.PutItem(ctx, in, opts...)
}

// TestRecordCrawlKilledBetweenWrites: RecordCrawl writes the candidate,
// then the crawl log item. When the second write never happens, the
// candidate shows the crawl and the log has none; recording the crawl
// again (the fetch stage's redelivered task fetches again) writes the
// log item alone, once, and counts the crawl once.
func TestRecordCrawlKilledBetweenWrites(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	const u = "http://example.com/page"
	if err := db.PutSite(ctx, crawl.Site{ID: "docs", Roots: []string{"http://example.com/"}, State: crawl.SiteActive}, true); err != nil {
		t.Fatal(err)
	}
	c := logQueuedCandidate(t, db, u, "crawl-1")
	c.SiteID = "docs"
	first := contract.CompleteCrawl(u, "crawl-1")
	next := contract.CrawledAs(c, first)
	killed := New(failingLogAPI{API: db.api, table: db.t.CrawlLog}, db.t)
	if fresh, err := killed.RecordCrawl(ctx, first, &next); err == nil || fresh || errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("RecordCrawl with the log write failing = %v, %v; want an error, not a conflict", fresh, err)
	}
	if _, err := db.GetCrawl(ctx, "crawl-1"); !errors.Is(err, crawl.ErrNotFound) {
		t.Fatalf("GetCrawl after the failed log write = %v, want not found", err)
	}
	half, err := db.GetCandidate(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if half.State != crawl.StateCrawled || half.CrawlUUID != "crawl-1" || half.Version != c.Version+1 {
		t.Fatalf("candidate after the first write: %+v", half)
	}

	// The redelivered task: fetched again, recorded against the
	// candidate as it now reads.
	again := contract.CompleteCrawl(u, "crawl-1")
	again.Log.TimeStarted++
	for i, want := range []bool{true, false} {
		next := contract.CrawledAs(half, again)
		fresh, err := db.RecordCrawl(ctx, again, &next)
		if err != nil || fresh != want {
			t.Fatalf("RecordCrawl #%d after the kill = %v, %v; want %v, nil", i+1, fresh, err, want)
		}
	}
	if got, err := db.GetCrawl(ctx, "crawl-1"); err != nil || got.Log.TimeStarted != again.Log.TimeStarted {
		t.Errorf("GetCrawl = %+v, %v; want the crawl recorded after the kill", got.Log, err)
	}
	if got, err := db.GetCandidate(ctx, u); err != nil || got.Version != half.Version {
		t.Errorf("candidate version %d (%v), want %d: written twice", got.Version, err, half.Version)
	}
	if n, err := db.CrawlCount(ctx, u); err != nil || n != 1 {
		t.Errorf("crawls = %d (%v), want 1", n, err)
	}
	if site, err := db.GetSite(ctx, "docs"); err != nil || site.Resources != 1 {
		t.Errorf("site's resources %d (%v), want the crawl counted once", site.Resources, err)
	}
}

// TestRecordCrawlRefused: what a refused candidate write means.
func TestRecordCrawlRefused(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	const u = "http://example.com/page"
	recorded := contract.FailedCrawl(u, "crawl-recorded")
	if _, err := db.RecordCrawl(ctx, recorded, nil); err != nil {
		t.Fatal(err)
	}
	c := logQueuedCandidate(t, db, u, "crawl-new")
	tests := []struct {
		name      string
		crawlUUID string
		version   int64
		wantErr   error
	}{
		{"candidate changed, crawl recorded before without it", "crawl-recorded", c.Version - 1, nil},
		{"candidate changed", "crawl-new", c.Version - 1, crawl.ErrConflict},
		{"candidate from the future", "crawl-new", c.Version + 2, crawl.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := contract.CompleteCrawl(u, tt.crawlUUID)
			next := contract.CrawledAs(c, cr)
			next.Version = tt.version
			fresh, err := db.RecordCrawl(ctx, cr, &next)
			if fresh || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("RecordCrawl = %v, %v; want false, %v", fresh, err, tt.wantErr)
			}
			if got, err := db.GetCandidate(ctx, u); err != nil || got.Version != c.Version {
				t.Errorf("candidate version %d (%v), want %d unchanged", got.Version, err, c.Version)
			}
		})
	}
}

// TestPackedBodyRecord: a body packed in a WARC file has a key naming
// the file and its span; the crawl keeps its SHA-256 beside it, so the
// content is still known by what it is (File.ContentID).
func TestPackedBodyRecord(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	cr := contract.CompleteCrawl("http://example.com/packed", "crawl-packed")
	body := []byte("<html>packed</html>")
	cr.File.BodyKey = "warc/2026/11/25/20261125083000-ab.warc.gz#344,766"
	cr.File.BodySHA256 = crawl.BodySHA256(body)
	next := contract.CrawledAs(logQueuedCandidate(t, db, cr.Log.URL, cr.Log.CrawlUUID), cr)
	if _, err := db.RecordCrawl(ctx, cr, &next); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetCrawl(ctx, cr.Log.CrawlUUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.File.BodyKey != cr.File.BodyKey || got.File.ContentID() != crawl.BodyKey(body) {
		t.Errorf("read back key %q, content %q; want %q and %q", got.File.BodyKey, got.File.ContentID(), cr.File.BodyKey, crawl.BodyKey(body))
	}
}
