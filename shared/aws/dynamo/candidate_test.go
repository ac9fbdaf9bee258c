package dynamo

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

func pointerTo[T any](v T) *T { return &v }

// putNew inserts c as a new candidate and returns it as stored.
func putNewCandidate(t *testing.T, db *DB, c crawl.Candidate) crawl.Candidate {
	t.Helper()
	c.Version = 0
	if err := db.PutCandidate(context.Background(), c); err != nil {
		t.Fatalf("put candidate %s: %v", c.URL, err)
	}
	return mustGetCandidate(t, db, c.URL)
}

func mustGetCandidate(t *testing.T, db *DB, u string) crawl.Candidate {
	t.Helper()
	c, err := db.GetCandidate(context.Background(), u)
	if err != nil {
		t.Fatalf("get candidate %s: %v", u, err)
	}
	return c
}

// rawItem reads an item as stored, to look at its attributes.
func readRawItem(t *testing.T, db *DB, table string, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	t.Helper()
	out, err := db.api.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("get item: %v", err)
	}
	return out.Item
}

// countTableItems counts the items of a table (tests only: a Scan).
func countTableItems(t *testing.T, db *DB, table string) int {
	t.Helper()
	in := &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount, ConsistentRead: aws.Bool(true)}
	n := 0
	for {
		out, err := db.api.Scan(context.Background(), in)
		if err != nil {
			t.Fatalf("scan %s: %v", table, err)
		}
		n += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return n
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func dueCandidate(u string, priority int, due int64) crawl.Candidate {
	return crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateDue, Priority: priority, DueAt: due,
		CrawlType: crawl.CrawlFirst, DiscoveredAt: 1}
}

// TestClearedAttributesRemoved: a field cleared by an update (a nil
// pointer, an empty string or chain) leaves no attribute behind.
func TestClearedAttributesRemoved(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	c := putNewCandidate(t, db, crawl.Candidate{URL: "https://example.com/a", Host: "example.com", State: crawl.StateQueued,
		LastCrawlTime: pointerTo(int64(1)), LastCrawlExitCode: pointerTo(crawl.ExitRedirect), LastContentfulCrawlTime: pointerTo(int64(1)),
		LastContentfulETag: pointerTo(`W/"abc"`), CrawlType: crawl.CrawlReenqueued, CrawlUUID: "u", LastContentfulModified: pointerTo(int64(1)),
		OrigURL: "http://example.com/start", RedirectChain: []string{"http://example.com/start"}, Parent: "https://example.com/",
		MaxDepth: pointerTo(0)})
	c.LastCrawlTime, c.LastCrawlExitCode, c.LastContentfulCrawlTime, c.LastContentfulETag = nil, nil, nil, nil
	c.LastContentfulModified, c.MaxDepth, c.RedirectChain = nil, nil, nil
	c.CrawlUUID, c.OrigURL, c.Parent = "", "", ""
	c.State = crawl.StateDue
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatalf("update: %v", err)
	}
	item := readRawItem(t, db, db.t.Candidates, map[string]types.AttributeValue{caURL: fxS(c.URL)})
	for _, a := range []string{caLastCrawlTime, caLastCrawlExit, caLastContentful, caLastContentfulTag,
		caLastCfModified, caMaxDepth, caRedirectChain, caCrawlUUID, caOrigURL, caParent} {
		if _, ok := item[a]; ok {
			t.Errorf("attribute %s still stored after it was cleared", a)
		}
	}
}

func TestCandidateItemLayout(t *testing.T) {
	// The seed 000 crawl_candidate columns are stored under their names.
	db := testDB(t)
	c := crawl.Candidate{URL: "http://example.com/p", Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlFirst,
		LastCrawlTime: pointerTo(int64(10)), LastCrawlExitCode: pointerTo(crawl.ExitComplete), LastContentfulCrawlTime: pointerTo(int64(10)),
		LastContentfulETag: pointerTo(`"e"`)}
	putNewCandidate(t, db, c)
	item := readRawItem(t, db, db.t.Candidates, map[string]types.AttributeValue{"url": fxS(c.URL)})
	want := map[string]types.AttributeValue{
		"url":                                 fxS(c.URL),
		"last_crawl_time_unix_utc":            fxN(10),
		"last_crawl_exit_code":                fxN(int64(crawl.ExitComplete)),
		"last_contentful_crawl_time_unix_utc": fxN(10),
		"last_contentful_http_etag":           fxS(`"e"`),
		"version":                             fxN(1),
	}
	for k, v := range want {
		if !reflect.DeepEqual(item[k], v) {
			t.Errorf("attribute %s = %#v, want %#v", k, item[k], v)
		}
	}
}

func candidateURLs(cs []crawl.Candidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.URL)
	}
	return out
}

func addScopeHosts(t *testing.T, db *DB, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		if err := db.AddScopeHost(context.Background(), h); err != nil {
			t.Fatalf("AddScopeHost(%s): %v", h, err)
		}
	}
}

func TestDueCandidatesFairAcrossHosts(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	addScopeHosts(t, db, "a.example", "b.example", "c.example", "idle.example")
	due := func(host string, i, priority int, at int64) crawl.Candidate {
		c := dueCandidate(fmt.Sprintf("http://%s/%02d", host, i), priority, at)
		c.Host = host
		return c
	}
	for i := range 10 {
		putNewCandidate(t, db, due("a.example", i, 0, int64(10+i)))
	}
	// Found late, but more urgent than a.example's backlog.
	putNewCandidate(t, db, due("a.example", 99, 7, 500))
	putNewCandidate(t, db, due("b.example", 0, 0, 300))
	putNewCandidate(t, db, due("b.example", 1, 0, 301))
	putNewCandidate(t, db, due("c.example", 0, 1, 400))
	// Outside the scope (a page a collect-all site's link leads to): a
	// share of its own, from the partition every such host shares.
	putNewCandidate(t, db, due("elsewhere.example", 0, 9, 1))

	tests := []struct {
		name  string
		limit int
		want  []string
	}{
		{"share of one each, the best hosts first", 3, []string{"http://elsewhere.example/00", "http://a.example/99", "http://c.example/00"}},
		{"share of one each", 4, []string{"http://elsewhere.example/00", "http://a.example/99", "http://c.example/00", "http://b.example/00"}},
		{"leftover goes to the hosts with more", 6, []string{
			"http://elsewhere.example/00", "http://a.example/99", "http://c.example/00",
			"http://a.example/00", "http://b.example/00", "http://b.example/01"}},
		{"everything", 100, append([]string{"http://elsewhere.example/00", "http://a.example/99", "http://c.example/00",
			"http://a.example/00", "http://a.example/01", "http://a.example/02", "http://a.example/03",
			"http://a.example/04", "http://a.example/05", "http://a.example/06", "http://a.example/07",
			"http://a.example/08", "http://a.example/09"}, "http://b.example/00", "http://b.example/01")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.DueCandidates(ctx, 1000, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if g := candidateURLs(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("DueCandidates(1000, %d) =\n%v\nwant\n%v", tt.limit, g, tt.want)
			}
		})
	}
}

// gsiCount counts a host's items in a GSI.
func gsiCount(t *testing.T, db *DB, index, hostAttr, host string) int {
	t.Helper()
	out, err := db.api.Query(context.Background(), &dynamodb.QueryInput{
		TableName: aws.String(db.t.Candidates), IndexName: aws.String(index), Select: types.SelectCount,
		KeyConditionExpression:    aws.String("#h = :h"),
		ExpressionAttributeNames:  map[string]string{"#h": hostAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": fxS(host)},
	})
	if err != nil {
		t.Fatalf("query %s: %v", index, err)
	}
	return int(out.Count)
}

func TestIndexAndReleaseRecordsFollowTheState(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	addScopeHosts(t, db, "example.com")
	const u = "http://example.com/p"
	c := putNewCandidate(t, db, dueCandidate(u, 0, 100))
	steps := []struct {
		state             crawl.CandidateState
		wantDue, wantQ    int
		wantAttrs, noneOf []string
	}{
		{crawl.StateDue, 1, 0, []string{caDueHost, caDueAt}, []string{"queued_host", "queued_at"}},
		{crawl.StateQueued, 0, 1, nil, []string{caDueHost, caDueAt, "queued_host", "queued_at"}},
		{crawl.StateCrawled, 0, 0, nil, []string{caDueHost, caDueAt, "queued_host", "queued_at"}},
		{crawl.StateDue, 1, 0, []string{caDueHost, caDueAt}, []string{"queued_host", "queued_at"}},
		{crawl.StateFiltered, 0, 0, nil, []string{caDueHost, caDueAt, "queued_host", "queued_at"}},
	}
	for i, st := range steps {
		t.Run(fmt.Sprintf("%d-%s", i, st.state), func(t *testing.T) {
			if i > 0 {
				c.State, c.QueuedAt, c.CrawlUUID = st.state, 200, "crawl-1"
				if err := db.PutCandidate(ctx, c); err != nil {
					t.Fatal(err)
				}
				c = mustGetCandidate(t, db, u)
			}
			item := readRawItem(t, db, db.t.Candidates, map[string]types.AttributeValue{caURL: fxS(u)})
			for _, a := range st.wantAttrs {
				if _, ok := item[a]; !ok {
					t.Errorf("state %s: attribute %s missing", st.state, a)
				}
			}
			for _, a := range st.noneOf {
				if _, ok := item[a]; ok {
					t.Errorf("state %s: attribute %s left behind", st.state, a)
				}
			}
			if n := gsiCount(t, db, IndexDueByHost, caDueHost, "example.com"); n != st.wantDue {
				t.Errorf("state %s: %d items in %s, want %d", st.state, n, IndexDueByHost, st.wantDue)
			}
			// A queued candidate is in no index: its release record
			// finds it.
			stale, err := db.StaleQueued(ctx, 1000, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(stale) != st.wantQ {
				t.Errorf("state %s: %d found through release records, want %d", st.state, len(stale), st.wantQ)
			}
		})
	}
}
