package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/schedule"
)

var _ schedule.Store = (*DB)(nil)

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

func TestPutCandidateInsertOnce(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	first := dueCandidate("http://example.com/", 1, 100)
	if err := db.PutCandidate(ctx, first); err != nil {
		t.Fatalf("first insert: %v", err)
	}
	tests := []struct {
		name string
		c    crawl.Candidate
	}{
		{"same candidate again", first},
		{"different fields, same URL", crawl.Candidate{URL: first.URL, Host: "other", State: crawl.StateFiltered, Priority: 9, DueAt: 7, CrawlType: crawl.CrawlForced}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.PutCandidate(ctx, tt.c)
			if !errors.Is(err, crawl.ErrConflict) {
				t.Fatalf("second version-0 insert: got %v, want ErrConflict", err)
			}
			if k := crawl.KindOf(err); k != crawl.KindConflict {
				t.Errorf("KindOf = %v, want KindConflict", k)
			}
			got := mustGetCandidate(t, db, first.URL)
			if got.Version != 1 || got.Priority != 1 || got.State != crawl.StateDue || got.Host != "example.com" {
				t.Errorf("stored candidate changed: %+v", got)
			}
		})
	}
	if n := countTableItems(t, db, db.t.Candidates); n != 1 {
		t.Errorf("candidate items = %d, want 1", n)
	}
}

func TestPutCandidateConditionalUpdate(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	tests := []struct {
		name    string
		version func(stored int64) int64
		url     string // "" : the stored candidate's URL
		want    error
	}{
		{"current version", func(v int64) int64 { return v }, "", nil},
		{"stale version", func(v int64) int64 { return v - 1 }, "", crawl.ErrConflict},
		{"version from the future", func(v int64) int64 { return v + 5 }, "", crawl.ErrConflict},
		{"update of an absent candidate", func(int64) int64 { return 1 }, "http://example.com/absent", crawl.ErrConflict},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := putNewCandidate(t, db, dueCandidate(fmt.Sprintf("http://example.com/%d", i), 1, 100))
			// A second write so that a stale version (1) exists.
			c.Priority = 2
			if err := db.PutCandidate(ctx, c); err != nil {
				t.Fatalf("update: %v", err)
			}
			before := mustGetCandidate(t, db, c.URL)
			if before.Version != 2 {
				t.Fatalf("version after one update = %d, want 2", before.Version)
			}

			upd := before
			if tt.url != "" {
				upd.URL = tt.url
			}
			upd.Version = tt.version(before.Version)
			upd.State, upd.Priority, upd.LastCrawlTime = crawl.StateCrawled, 42, pointerTo(int64(500))
			upd.LastCrawlExitCode = pointerTo(crawl.ExitComplete)
			err := db.PutCandidate(ctx, upd)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("PutCandidate: got %v, want %v", err, tt.want)
			}
			after := mustGetCandidate(t, db, c.URL)
			if tt.want != nil {
				if crawl.KindOf(err) != crawl.KindConflict {
					t.Errorf("KindOf(%v) = %v, want KindConflict", err, crawl.KindOf(err))
				}
				if !reflect.DeepEqual(after, before) {
					t.Errorf("a lost conditional write changed the candidate:\nbefore %+v\nafter  %+v", before, after)
				}
				if tt.url != "" {
					if _, err := db.GetCandidate(ctx, tt.url); !errors.Is(err, crawl.ErrNotFound) {
						t.Errorf("lost update created %s: %v", tt.url, err)
					}
				}
				return
			}
			upd.Version++
			if !reflect.DeepEqual(after, upd) {
				t.Errorf("after update:\ngot  %+v\nwant %+v", after, upd)
			}
		})
	}
}

func TestPutCandidateInvalid(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	tests := []struct {
		name string
		c    crawl.Candidate
	}{
		{"no URL", crawl.Candidate{Host: "example.com", State: crawl.StateDue}},
		{"due without a host", crawl.Candidate{URL: "http://example.com/", State: crawl.StateDue}},
		{"queued without a host", crawl.Candidate{URL: "http://example.com/", State: crawl.StateQueued}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.PutCandidate(ctx, tt.c)
			if crawl.KindOf(err) != crawl.KindInvalid {
				t.Errorf("PutCandidate(%+v) = %v, want a KindInvalid error", tt.c, err)
			}
		})
	}
	// A filtered candidate needs no host: it is in no index.
	if err := db.PutCandidate(ctx, crawl.Candidate{URL: "mailto:x", State: crawl.StateFiltered}); err != nil {
		t.Errorf("filtered candidate without a host: %v", err)
	}
}

func TestCandidateRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	full := crawl.Candidate{
		URL:                     "https://example.com/a?b=c",
		LastCrawlTime:           pointerTo(int64(1700000000)),
		LastCrawlExitCode:       pointerTo(crawl.ExitRedirect),
		LastContentfulCrawlTime: pointerTo(int64(1690000000)),
		LastContentfulETag:      pointerTo(`W/"abc"`),
		Host:                    "example.com",
		State:                   crawl.StateQueued,
		Hops:                    3,
		Priority:                -2,
		DueAt:                   1700000100,
		CrawlType:               crawl.CrawlReenqueued,
		CrawlUUID:               "4b8a2a8e-7c4c-4bd0-9c38-4b0f5f8cba01",
		QueuedAt:                1700000200,
		LastContentfulModified:  pointerTo(int64(1600000000)),
		NRedirs:                 2,
		OrigURL:                 "http://example.com/start",
		RedirectChain:           []string{"http://example.com/start", "https://example.com/start"},
		DiscoveredAt:            1650000000,
		Parent:                  "https://example.com/",
		MaxDepth:                pointerTo(0),
	}
	bare := crawl.Candidate{URL: "http://example.org/", Host: "example.org", State: crawl.StateDue, CrawlType: crawl.CrawlFirst}
	tests := []struct {
		name string
		c    crawl.Candidate
	}{
		{"every field set", full},
		{"nil pointers and empty strings", bare},
		{"zero max depth differs from nil", func() crawl.Candidate { c := bare; c.URL += "z"; c.MaxDepth = pointerTo(0); return c }()},
		{"empty ETag differs from nil", func() crawl.Candidate { c := bare; c.URL += "e"; c.LastContentfulETag = pointerTo(""); return c }()},
		{"one-element redirect chain", func() crawl.Candidate {
			c := bare
			c.URL += "r"
			c.RedirectChain = []string{"http://example.org/x"}
			return c
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := putNewCandidate(t, db, tt.c)
			want := tt.c
			want.Version = 1
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip:\ngot  %+v\nwant %+v", got, want)
			}
		})
	}

	t.Run("update clears optional fields", func(t *testing.T) {
		c := full
		c.URL += "&clear"
		c = putNewCandidate(t, db, c)
		c.LastCrawlTime, c.LastCrawlExitCode, c.LastContentfulCrawlTime, c.LastContentfulETag = nil, nil, nil, nil
		c.LastContentfulModified, c.MaxDepth, c.RedirectChain = nil, nil, nil
		c.CrawlUUID, c.OrigURL, c.Parent = "", "", ""
		c.State, c.Hops, c.NRedirs = crawl.StateDue, 1, 0
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatalf("update: %v", err)
		}
		got := mustGetCandidate(t, db, c.URL)
		c.Version++
		if !reflect.DeepEqual(got, c) {
			t.Errorf("after update:\ngot  %+v\nwant %+v", got, c)
		}
		item := readRawItem(t, db, db.t.Candidates, map[string]types.AttributeValue{caURL: fxS(c.URL)})
		for _, a := range []string{caLastCrawlTime, caLastCrawlExit, caLastContentful, caLastContentfulTag,
			caLastCfModified, caMaxDepth, caRedirectChain, caCrawlUUID, caOrigURL, caParent} {
			if _, ok := item[a]; ok {
				t.Errorf("attribute %s still stored after it was cleared", a)
			}
		}
	})
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

func TestGetCandidateNotFound(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	putNewCandidate(t, db, dueCandidate("http://example.com/", 0, 0))
	for _, u := range []string{"http://example.com/absent", "http://example.com", ""} {
		t.Run(u, func(t *testing.T) {
			_, err := db.GetCandidate(ctx, u)
			if !errors.Is(err, crawl.ErrNotFound) {
				t.Fatalf("GetCandidate(%q) = %v, want ErrNotFound", u, err)
			}
			if k := crawl.KindOf(err); k != crawl.KindNotFound {
				t.Errorf("KindOf = %v, want KindNotFound", k)
			}
			if _, err := db.CrawlCount(ctx, u); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("CrawlCount(%q) = %v, want ErrNotFound", u, err)
			}
		})
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

func TestDueCandidates(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	addScopeHosts(t, db, "example.com")
	const now = 1000
	for _, c := range []crawl.Candidate{
		dueCandidate("http://example.com/low-early", 0, 100),
		dueCandidate("http://example.com/high-late", 5, 900),
		dueCandidate("http://example.com/high-early", 5, 200),
		dueCandidate("http://example.com/low-late", 0, 1000), // due exactly now
		dueCandidate("http://example.com/negative", -1, 1),
		dueCandidate("http://example.com/future", 10, 1001),
		{URL: "http://example.com/queued", Host: "example.com", State: crawl.StateQueued, Priority: 10, DueAt: 1, CrawlType: crawl.CrawlFirst},
		{URL: "http://example.com/crawled", Host: "example.com", State: crawl.StateCrawled, Priority: 10, DueAt: 1, CrawlType: crawl.CrawlFirst},
		{URL: "http://example.com/filtered", Host: "example.com", State: crawl.StateFiltered, Priority: 10, DueAt: 1, CrawlType: crawl.CrawlFirst},
	} {
		putNewCandidate(t, db, c)
	}
	all := []string{
		"http://example.com/high-early", "http://example.com/high-late",
		"http://example.com/low-early", "http://example.com/low-late", "http://example.com/negative",
	}
	tests := []struct {
		name  string
		now   int64
		limit int
		want  []string
	}{
		{"all due, priority then due time", now, 100, all},
		{"limit", now, 2, all[:2]},
		{"earlier now", 200, 100, []string{"http://example.com/high-early", "http://example.com/low-early", "http://example.com/negative"}},
		{"nothing due yet", 0, 100, []string{}},
		{"future one becomes due", 1001, 1, []string{"http://example.com/future"}},
		{"zero limit", now, 0, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.DueCandidates(ctx, tt.now, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if g := candidateURLs(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("DueCandidates(%d, %d) = %v, want %v", tt.now, tt.limit, g, tt.want)
			}
			for _, c := range got {
				if c.State != crawl.StateDue || c.DueAt > tt.now || c.Version != 1 {
					t.Errorf("returned %+v", c)
				}
				if stored := mustGetCandidate(t, db, c.URL); !reflect.DeepEqual(c, stored) {
					t.Errorf("candidate from the index differs from the table:\nindex %+v\ntable %+v", c, stored)
				}
			}
		})
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
	// Not in scope: never released (the scheduler files such URLs as filtered).
	putNewCandidate(t, db, due("elsewhere.example", 0, 9, 1))

	tests := []struct {
		name  string
		limit int
		want  []string
	}{
		{"share of one each", 3, []string{"http://a.example/99", "http://c.example/00", "http://b.example/00"}},
		{"leftover goes to the host with more", 6, []string{
			"http://a.example/99", "http://c.example/00",
			"http://a.example/00", "http://a.example/01", "http://b.example/00", "http://b.example/01"}},
		{"everything", 100, append([]string{"http://a.example/99", "http://c.example/00",
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

func TestSparseIndexesFollowTheState(t *testing.T) {
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
		{crawl.StateDue, 1, 0, []string{caDueHost, caDueAt}, []string{caQueuedHost, caQueuedAt}},
		{crawl.StateQueued, 0, 1, []string{caQueuedHost, caQueuedAt}, []string{caDueHost, caDueAt}},
		{crawl.StateCrawled, 0, 0, nil, []string{caDueHost, caDueAt, caQueuedHost, caQueuedAt}},
		{crawl.StateDue, 1, 0, []string{caDueHost, caDueAt}, []string{caQueuedHost, caQueuedAt}},
		{crawl.StateFiltered, 0, 0, nil, []string{caDueHost, caDueAt, caQueuedHost, caQueuedAt}},
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
			if n := gsiCount(t, db, IndexQueuedByHost, caQueuedHost, "example.com"); n != st.wantQ {
				t.Errorf("state %s: %d items in %s, want %d", st.state, n, IndexQueuedByHost, st.wantQ)
			}
			due, err := db.DueCandidates(ctx, 1000, 10)
			if err != nil {
				t.Fatal(err)
			}
			stale, err := db.StaleQueued(ctx, 1000, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(due) != st.wantDue || len(stale) != st.wantQ {
				t.Errorf("state %s: %d due and %d stale queued, want %d and %d", st.state, len(due), len(stale), st.wantDue, st.wantQ)
			}
		})
	}
}

func TestStaleQueued(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	addScopeHosts(t, db, "example.com", "example.org")
	queued := func(u, host string, at int64) crawl.Candidate {
		return crawl.Candidate{URL: u, Host: host, State: crawl.StateQueued, QueuedAt: at, CrawlUUID: "uuid-" + u, CrawlType: crawl.CrawlFirst}
	}
	for _, c := range []crawl.Candidate{
		queued("http://example.com/q300", "example.com", 300),
		queued("http://example.com/q100", "example.com", 100),
		queued("http://example.org/q200", "example.org", 200),
		queued("http://example.org/q150", "example.org", 150),
		dueCandidate("http://example.com/due", 0, 50),
		{URL: "http://example.com/crawled", Host: "example.com", State: crawl.StateCrawled, QueuedAt: 10, CrawlType: crawl.CrawlFirst},
		{URL: "http://example.com/filtered", Host: "example.com", State: crawl.StateFiltered, CrawlType: crawl.CrawlFirst},
	} {
		putNewCandidate(t, db, c)
	}
	tests := []struct {
		name   string
		before int64
		limit  int
		want   []string
	}{
		{"all queued, oldest first", 1000, 10, []string{"http://example.com/q100", "http://example.org/q150", "http://example.org/q200", "http://example.com/q300"}},
		{"released at or before", 200, 10, []string{"http://example.com/q100", "http://example.org/q150", "http://example.org/q200"}},
		{"limit across hosts", 1000, 2, []string{"http://example.com/q100", "http://example.org/q150"}},
		{"none that old", 99, 10, []string{}},
		{"zero limit", 1000, 0, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.StaleQueued(ctx, tt.before, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if g := candidateURLs(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("StaleQueued(%d, %d) = %v, want %v", tt.before, tt.limit, g, tt.want)
			}
			for _, c := range got {
				if c.CrawlUUID != "uuid-"+c.URL {
					t.Errorf("%s: crawl uuid %q", c.URL, c.CrawlUUID)
				}
			}
		})
	}
}

func TestNextDue(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		cands  []crawl.Candidate
		want   int64
		wantOK bool
	}{
		{"empty frontier", nil, 0, false},
		{"only queued, crawled and filtered", []crawl.Candidate{
			{URL: "http://example.com/q", Host: "example.com", State: crawl.StateQueued, DueAt: 5, CrawlType: crawl.CrawlFirst},
			{URL: "http://example.com/c", Host: "example.com", State: crawl.StateCrawled, DueAt: 5, CrawlType: crawl.CrawlFirst},
			{URL: "http://example.com/f", Host: "example.com", State: crawl.StateFiltered, DueAt: 5, CrawlType: crawl.CrawlFirst},
		}, 0, false},
		{"earliest due wins over priority, other states and hosts", []crawl.Candidate{
			dueCandidate("http://example.com/a", 9, 300),
			dueCandidate("http://example.com/b", 0, 200),
			dueCandidate("http://example.com/c", 0, 400),
			{URL: "http://example.org/o", Host: "example.org", State: crawl.StateDue, DueAt: 250, CrawlType: crawl.CrawlFirst},
			{URL: "http://example.com/q", Host: "example.com", State: crawl.StateQueued, DueAt: 50, CrawlType: crawl.CrawlFirst},
		}, 200, true},
		{"another host first", []crawl.Candidate{
			dueCandidate("http://example.com/b", 0, 200),
			{URL: "http://example.org/o", Host: "example.org", State: crawl.StateDue, DueAt: 150, CrawlType: crawl.CrawlFirst},
		}, 150, true},
		{"due at zero", []crawl.Candidate{dueCandidate("http://example.com/z", 0, 0)}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testDB(t)
			addScopeHosts(t, db, "example.com", "example.org")
			for _, c := range tt.cands {
				putNewCandidate(t, db, c)
			}
			got, ok, err := db.NextDue(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("NextDue = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestScope(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	addScopeHosts(t, db, "example.org:8080", "example.com", "example.com")
	tests := []struct {
		host string
		want bool
	}{
		{"example.com", true},
		{"example.org:8080", true},
		{"example.org", false},
		{"www.example.com", false},
		{"", false},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			got, err := db.InScope(ctx, tt.host)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("InScope(%q) = %v, want %v", tt.host, got, tt.want)
			}
		})
	}
	hosts, err := db.ScopeHosts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"example.com", "example.org:8080"}; !reflect.DeepEqual(hosts, want) {
		t.Errorf("ScopeHosts = %v, want %v", hosts, want)
	}
	if err := db.AddScopeHost(ctx, ""); crawl.KindOf(err) != crawl.KindInvalid {
		t.Errorf("AddScopeHost(\"\") = %v, want a KindInvalid error", err)
	}
}
