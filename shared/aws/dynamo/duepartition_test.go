package dynamo

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// controlReads counts the reads of the control table (the scope and the
// sites).
type controlReads struct {
	API
	table string
	n     atomic.Int64
}

func (c *controlReads) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if *in.TableName == c.table {
		c.n.Add(1)
	}
	return c.API.GetItem(ctx, in, opts...)
}

func (c *controlReads) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if *in.TableName == c.table {
		c.n.Add(1)
	}
	return c.API.Query(ctx, in, opts...)
}

// TestDuePartition: a due URL is written under its host when a release
// reads that host by name (a scope host, a site root's host), else under
// the partition every other host shares. A store asks once per host: for
// good when the host is one a release reads by name, for releaseHostTTL
// when it is not.
func TestDuePartition(t *testing.T) {
	ctx := t.Context()
	api := testClient(t)
	tb := testTables(t, api)
	now := time.Unix(1_700_000_000, 0)
	reads := &controlReads{API: api, table: tb.Control}
	db := New(reads, tb, WithClock(func() time.Time { return now }))
	addScopeHosts(t, db, "scope.example")
	if err := db.PutSite(ctx, crawl.Site{ID: "docs", Roots: []string{"http://site.example/docs/"}, State: crawl.SiteActive}, true); err != nil {
		t.Fatal(err)
	}
	check := func(name, host, want string, wantReads int64) {
		t.Helper()
		reads.n.Store(0)
		got, err := db.duePartition(ctx, host)
		if err != nil {
			t.Fatal(err)
		}
		if got != want || reads.n.Load() != wantReads {
			t.Errorf("%s: duePartition(%s) = %q after %d control reads; want %q after %d", name, host, got, reads.n.Load(), want, wantReads)
		}
	}
	check("a scope host", "scope.example", "scope.example", 1)
	check("a site root's host", "site.example", "site.example", 2)
	check("any other host", "other.example", outsidePartition, 2)
	for _, h := range []string{"scope.example", "site.example"} {
		check("asked again", h, h, 0)
	}
	check("asked again", "other.example", outsidePartition, 0)

	addScopeHosts(t, db, "other.example")
	now = now.Add(releaseHostTTL - time.Second)
	check("in the scope, not yet asked again", "other.example", outsidePartition, 0)
	now = now.Add(time.Second)
	check("in the scope, asked again", "other.example", "other.example", 1)
	now = now.Add(24 * time.Hour)
	check("a host for good", "other.example", "other.example", 0)

	// A host that has been a site root's stays one when the roots move:
	// the release still reads its partition.
	if err := db.PutSite(ctx, crawl.Site{ID: "docs", Roots: []string{"http://moved.example/"}, State: crawl.SiteActive}, false); err != nil {
		t.Fatal(err)
	}
	parts, err := db.duePartitions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"other.example", "scope.example", "moved.example", "site.example", outsidePartition}
	if !reflect.DeepEqual(parts, want) {
		t.Errorf("duePartitions = %v, want %v", parts, want)
	}

	// What a candidate write puts in the GSI.
	for _, c := range []crawl.Candidate{
		{URL: "http://scope.example/a", Host: "scope.example", State: crawl.StateDue, DueAt: 5, CrawlType: crawl.CrawlFirst},
		{URL: "http://elsewhere.example/a", Host: "elsewhere.example", State: crawl.StateDue, DueAt: 5, CrawlType: crawl.CrawlFirst},
	} {
		putNewCandidate(t, db, c)
	}
	if n := gsiCount(t, db, IndexDueByHost, caDueHost, "scope.example"); n != 1 {
		t.Errorf("scope.example's partition holds %d, want 1", n)
	}
	if n := gsiCount(t, db, IndexDueByHost, caDueHost, outsidePartition); n != 1 {
		t.Errorf("the outside partition holds %d, want 1", n)
	}
	if n := gsiCount(t, db, IndexDueByHost, caDueHost, "elsewhere.example"); n != 0 {
		t.Errorf("elsewhere.example's partition holds %d, want 0", n)
	}
}
