package dynamo

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// releaseRecords counts the release records in the control table.
func releaseRecords(t *testing.T, db *DB) int {
	t.Helper()
	out, err := db.api.Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(db.t.Control), Select: types.SelectCount, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": ctlPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": fxS(ctlReleased)},
	})
	if err != nil {
		t.Fatalf("count release records: %v", err)
	}
	return int(out.Count)
}

// TestReleaseRecords follows a release of three URLs through its one
// release record: what StaleQueued finds from it as the crawls are
// recorded or lost, a URL released again, and when the record goes.
func TestReleaseRecords(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	addScopeHosts(t, db, "example.com")
	urls := []string{"http://example.com/a", "http://example.com/b", "http://example.com/c", "http://example.com/lost-race"}
	var cs []crawl.Candidate
	for _, u := range urls {
		cs = append(cs, putNewCandidate(t, db, dueCandidate(u, 0, 100)))
	}
	release := func(c crawl.Candidate, at int64) crawl.Candidate {
		c.State, c.QueuedAt, c.CrawlUUID = crawl.StateQueued, at, "crawl-"+c.URL
		return c
	}
	batch := make([]crawl.Candidate, len(cs))
	for i, c := range cs {
		batch[i] = release(c, 200)
	}
	batch[3].Version = 7 // lost to another writer
	errs := db.PutCandidates(ctx, batch)
	for i, err := range errs[:3] {
		if err != nil {
			t.Fatalf("release %s: %v", urls[i], err)
		}
	}
	if !errors.Is(errs[3], crawl.ErrConflict) {
		t.Fatalf("release with a stale version: %v, want a conflict", errs[3])
	}
	if n := releaseRecords(t, db); n != 1 {
		t.Fatalf("a release of three URLs left %d release records, want 1", n)
	}
	stale := func(before int64, want ...string) {
		t.Helper()
		got, err := db.StaleQueued(ctx, before, 10)
		if err != nil {
			t.Fatal(err)
		}
		var g []string
		for _, c := range got {
			g = append(g, c.URL)
		}
		if !reflect.DeepEqual(g, want) {
			t.Errorf("StaleQueued(%d) = %v, want %v", before, g, want)
		}
	}
	stale(199)
	stale(1000, urls[0], urls[1], urls[2])

	// Two crawls recorded: the third is still queued from the release.
	for _, u := range urls[:2] {
		c := mustGetCandidate(t, db, u)
		c.State, c.DueAt = crawl.StateDue, 5000
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	stale(1000, urls[2])
	if n := releaseRecords(t, db); n != 1 {
		t.Errorf("%d release records with one URL still queued from it, want 1", n)
	}

	// Released again (Requeue): found through the new record; the old
	// one, which nothing is queued from any more, is deleted when read.
	if err := db.PutCandidate(ctx, release(mustGetCandidate(t, db, urls[2]), 300)); err != nil {
		t.Fatal(err)
	}
	stale(250)
	stale(1000, urls[2])
	if n := releaseRecords(t, db); n != 1 {
		t.Errorf("%d release records after the requeue was swept, want 1", n)
	}
	if got := mustGetCandidate(t, db, urls[2]); got.QueuedAt != 300 {
		t.Errorf("queued at %d, want 300", got.QueuedAt)
	}

	// Its crawl recorded: nothing is stale, and the last record goes.
	c := mustGetCandidate(t, db, urls[2])
	c.State = crawl.StateCrawled
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatal(err)
	}
	stale(1000)
	if n := releaseRecords(t, db); n != 0 {
		t.Errorf("%d release records once every crawl was recorded, want 0", n)
	}

	// A release that lost every write leaves no record.
	lost := release(mustGetCandidate(t, db, urls[3]), 400)
	lost.Version = 9
	if err := db.PutCandidate(ctx, lost); !errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("release with a stale version: %v, want a conflict", err)
	}
	if n := releaseRecords(t, db); n != 0 {
		t.Errorf("a lost release left %d release records, want 0", n)
	}

	// A process killed after the record and before any candidate write:
	// the record names nothing queued, and the first read deletes it.
	if _, err := db.recordRelease(ctx, []crawl.Candidate{release(mustGetCandidate(t, db, urls[3]), 500)}); err != nil {
		t.Fatal(err)
	}
	stale(1000)
	if n := releaseRecords(t, db); n != 0 {
		t.Errorf("a record of a release killed before its writes is still there (%d), want it deleted", n)
	}
	if got := mustGetCandidate(t, db, urls[3]); got.State != crawl.StateDue {
		t.Errorf("the candidate of a release killed before its write is %s, want due", got.State)
	}
}

// failingSiteCount refuses the update that counts a URL toward its
// site (the site item's ADD), as a throttled hot item would.
type failingSiteCount struct {
	API
	table string
}

func (f failingSiteCount) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if aws.ToString(in.TableName) == f.table && strings.Contains(aws.ToString(in.UpdateExpression), "ADD ") {
		return nil, errors.New("injected: throughput exceeded")
	}
	return f.API.UpdateItem(ctx, in, opts...)
}

// TestReleaseRecordKeptWhenTheSiteCountFails: a site's new URL released
// as it is admitted is written queued, and then counted toward its site.
// Should the count fail, the write reports the error, but the candidate
// is written: its release record stays, so StaleQueued finds it if its
// fetch task is never sent. (The record used to be dropped with it, and
// the URL stayed queued with nothing to send it.)
func TestReleaseRecordKeptWhenTheSiteCountFails(t *testing.T) {
	ctx := t.Context()
	base := testDB(t)
	if err := base.PutSite(ctx, crawl.Site{ID: "docs", Roots: []string{"http://example.com/"}, State: crawl.SiteActive}, true); err != nil {
		t.Fatal(err)
	}
	db := New(failingSiteCount{API: base.api, table: base.t.Control}, base.t)
	c := crawl.Candidate{URL: "http://example.com/new", Host: "example.com", State: crawl.StateQueued, SiteID: "docs",
		CrawlUUID: "crawl-1", QueuedAt: 100, CrawlType: crawl.CrawlFirst, DiscoveredAt: 100}
	if err := db.PutCandidate(ctx, c); err == nil || !strings.Contains(err.Error(), "throughput exceeded") {
		t.Fatalf("PutCandidate = %v, want the count's error", err)
	}
	if got, err := db.GetCandidate(ctx, c.URL); err != nil || got.State != crawl.StateQueued {
		t.Fatalf("candidate after the write: %+v, %v; want queued", got, err)
	}
	if n := releaseRecords(t, db); n != 1 {
		t.Errorf("%d release records, want 1", n)
	}
	stale, err := db.StaleQueued(ctx, 1000, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(stale) != 1 || stale[0].URL != c.URL {
		t.Errorf("StaleQueued = %v, want %s", candidateURLs(stale), c.URL)
	}
}
