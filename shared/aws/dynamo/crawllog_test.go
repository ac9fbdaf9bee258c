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
	recorded := contract.FailedCrawl(u, "crawl-recorded")
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
			cr := contract.CompleteCrawl(u, tt.crawlUUID)
			next := contract.CrawledAs(c, cr)
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
