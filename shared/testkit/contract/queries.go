package contract

import (
	"fmt"
	"net/url"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// queries: the due and stale-queued candidates, in order, within a
// limit, and nothing not yet due.
//
// The DynamoDB store reads the due candidates per partition of a GSI
// keyed by host: one per scope host and site root host, and one that
// holds every other host's (DueOutsideScope); the SQLite store reads
// them whatever their host. Both share a small limit among the hosts
// (DueSharedAmongHosts: the SQLite store when 2 to 64 hosts have
// candidates due); how each chooses within that is its own test's.
func queries(t *testing.T, open Opener) {
	run(t, []testCase{
		{"DueCandidates", func(t *testing.T) { dueCandidates(t, open(t)) }},
		{"DueByHost", func(t *testing.T) { dueByHost(t, open(t)) }},
		{"DueSharedAmongHosts", func(t *testing.T) { dueSharedAmongHosts(t, open(t)) }},
		{"DueOutsideScope", func(t *testing.T) { dueOutsideScope(t, open(t)) }},
		{"StaleQueued", func(t *testing.T) { staleQueued(t, open(t)) }},
		{"NextDue", func(t *testing.T) { nextDue(t, open) }},
	})
}

func dueCandidates(t *testing.T, s Metadata) {
	addScope(t, s, "example.com")
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
		putNew(t, s, c)
	}
	all := []string{
		"http://example.com/high-early", "http://example.com/high-late",
		"http://example.com/low-early", "http://example.com/low-late", "http://example.com/negative",
	}
	for _, tt := range []struct {
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
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.DueCandidates(t.Context(), tt.now, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if g := urlsOf(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("DueCandidates(%d, %d) = %v, want %v", tt.now, tt.limit, g, tt.want)
			}
			for _, c := range got {
				if c.State != crawl.StateDue || c.DueAt > tt.now || c.Version != 1 {
					t.Errorf("returned %+v", c)
				}
				// What a query returns is what a conditional write is
				// checked against: the stored candidate, version included.
				if stored := mustGet(t, s, c.URL); !reflect.DeepEqual(c, stored) {
					t.Errorf("candidate from the query differs from the stored one:\nquery  %+v\nstored %+v", c, stored)
				}
			}
		})
	}
}

// dueByHost: several scope hosts' due candidates come back together,
// ordered across hosts; what is due later, or not due, at none of them.
func dueByHost(t *testing.T, s Metadata) {
	addScope(t, s, "a.example", "b.example", "c.example", "idle.example")
	due := func(host, path string, priority int, at int64) crawl.Candidate {
		c := dueCandidate("http://"+host+"/"+path, priority, at)
		c.Host = host
		return c
	}
	for _, c := range []crawl.Candidate{
		due("a.example", "1", 0, 10),
		due("a.example", "2", 0, 20),
		due("a.example", "urgent", 7, 500),
		due("b.example", "1", 0, 15),
		due("b.example", "later", 9, 2000),
		due("c.example", "1", 1, 400),
		{URL: "http://c.example/queued", Host: "c.example", State: crawl.StateQueued, QueuedAt: 5, CrawlUUID: "q", CrawlType: crawl.CrawlFirst},
	} {
		putNew(t, s, c)
	}
	got, err := s.DueCandidates(t.Context(), 1000, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://a.example/urgent", "http://c.example/1", "http://a.example/1", "http://b.example/1", "http://a.example/2"}
	if g := urlsOf(got); !reflect.DeepEqual(g, want) {
		t.Errorf("DueCandidates(1000, 100) =\n%v\nwant\n%v", g, want)
	}
	for _, c := range got {
		if u, err := url.Parse(c.URL); err != nil || c.Host != u.Host {
			t.Errorf("%s: host %q", c.URL, c.Host)
		}
	}
}

// dueSharedAmongHosts: a limit smaller than the due candidates is
// shared among the scope's hosts, so that one host's backlog, due first,
// does not fill a release while another host's candidates wait (a host
// takes one request at a time); the picks come back in release order.
func dueSharedAmongHosts(t *testing.T, s Metadata) {
	addScope(t, s, "a.example", "b.example")
	for i := range 6 {
		c := dueCandidate(fmt.Sprintf("http://a.example/%d", i), 0, int64(10+i))
		c.Host = "a.example"
		putNew(t, s, c)
	}
	for i := range 3 {
		c := dueCandidate(fmt.Sprintf("http://b.example/%d", i), 0, int64(100+i))
		c.Host = "b.example"
		putNew(t, s, c)
	}
	got, err := s.DueCandidates(t.Context(), 1000, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://a.example/0", "http://a.example/1", "http://b.example/0", "http://b.example/1"}
	if g := urlsOf(got); !reflect.DeepEqual(g, want) {
		t.Errorf("DueCandidates(1000, 4) = %v, want %v", g, want)
	}
}

// dueOutsideScope: a URL due on a host that is neither a scope host nor
// a site root's (a collect-all site crawls the pages its links lead to
// off every site) is released like any other, whether due when admitted
// or due again once its crawl is recorded (its recrawl, or its retry
// once robots.txt answers), and NextDue sees it. A host that joins the
// scope afterwards, or stops being a site root's, leaves none of its due
// URLs behind.
func dueOutsideScope(t *testing.T, s Metadata) {
	registerAgent(t, s)
	addScope(t, s, "a.example")
	putSite(t, s, crawl.Site{ID: "links", Roots: []string{"http://b.example/"}, State: crawl.SiteActive,
		URLType: crawl.URLCollectAll, CDate: 10, UDate: 10}, true)
	due := func(host, path string, at int64) crawl.Candidate {
		c := dueCandidate("http://"+host+"/"+path, 0, at)
		c.Host = host
		return c
	}
	putNew(t, s, due("a.example", "1", 30))
	putNew(t, s, due("b.example", "1", 20))
	putNew(t, s, due("elsewhere.example", "page", 10))
	putNew(t, s, due("other.example", "later", 3000))
	check := func(name string, now int64, want []string, next int64) {
		t.Helper()
		got, err := s.DueCandidates(t.Context(), now, 100)
		if err != nil {
			t.Fatal(err)
		}
		if g := urlsOf(got); !reflect.DeepEqual(g, want) {
			t.Errorf("%s: DueCandidates(%d, 100) = %v, want %v", name, now, g, want)
		}
		if at, ok, err := s.NextDue(t.Context()); err != nil || !ok || at != next {
			t.Errorf("%s: NextDue = %d, %v, %v; want %d, true", name, at, ok, err, next)
		}
	}
	check("admitted", 1000, []string{"http://elsewhere.example/page", "http://b.example/1", "http://a.example/1"}, 10)

	// Released, fetched, and due again later.
	const u, crawlUUID = "http://elsewhere.example/page", "crawl-outside"
	c := mustGet(t, s, u)
	c.State, c.CrawlUUID, c.QueuedAt = crawl.StateQueued, crawlUUID, 1000
	if err := s.PutCandidate(t.Context(), c); err != nil {
		t.Fatalf("release %s: %v", u, err)
	}
	cr := FailedCrawl(u, crawlUUID)
	next := CrawledAs(mustGet(t, s, u), cr)
	next.State, next.DueAt, next.CrawlType = crawl.StateDue, 2000, crawl.CrawlRecrawl
	if fresh, err := s.RecordCrawl(t.Context(), cr, &next); err != nil || !fresh {
		t.Fatalf("RecordCrawl = %v, %v; want true, nil", fresh, err)
	}
	check("recorded, not yet due", 1999, []string{"http://b.example/1", "http://a.example/1"}, 20)
	check("recorded, due again", 2000, []string{"http://b.example/1", "http://a.example/1", u}, 20)

	// The site's roots move to another host: its URLs due on the old
	// one are still released.
	putSite(t, s, crawl.Site{ID: "links", Roots: []string{"http://c.example/"}, State: crawl.SiteActive,
		URLType: crawl.URLCollectAll, CDate: 10, UDate: 20}, false)
	check("the site's roots moved", 2000, []string{"http://b.example/1", "http://a.example/1", u}, 20)

	// The host joins the scope; its URL due before, and one due since,
	// are both released.
	addScope(t, s, "elsewhere.example")
	putNew(t, s, due("elsewhere.example", "since", 2500))
	check("joined the scope", 3000, []string{"http://b.example/1", "http://a.example/1", u,
		"http://elsewhere.example/since", "http://other.example/later"}, 20)
}

func staleQueued(t *testing.T, s Metadata) {
	addScope(t, s, "example.com", "example.org")
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
		putNew(t, s, c)
	}
	for _, tt := range []struct {
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
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.StaleQueued(t.Context(), tt.before, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if g := urlsOf(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("StaleQueued(%d, %d) = %v, want %v", tt.before, tt.limit, g, tt.want)
			}
			for _, c := range got {
				if c.CrawlUUID != "uuid-"+c.URL || c.State != crawl.StateQueued {
					t.Errorf("%s: state %s, crawl uuid %q", c.URL, c.State, c.CrawlUUID)
				}
			}
		})
	}
}

func nextDue(t *testing.T, open Opener) {
	other := func(u string, state crawl.CandidateState, due int64) crawl.Candidate {
		return crawl.Candidate{URL: u, Host: "example.org", State: state, DueAt: due, CrawlType: crawl.CrawlFirst}
	}
	for _, tt := range []struct {
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
			other("http://example.org/o", crawl.StateDue, 250),
			{URL: "http://example.com/q", Host: "example.com", State: crawl.StateQueued, DueAt: 50, CrawlType: crawl.CrawlFirst},
		}, 200, true},
		{"another host first", []crawl.Candidate{
			dueCandidate("http://example.com/b", 0, 200),
			other("http://example.org/o", crawl.StateDue, 150),
		}, 150, true},
		{"due at zero", []crawl.Candidate{dueCandidate("http://example.com/z", 0, 0)}, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			addScope(t, s, "example.com", "example.org")
			for _, c := range tt.cands {
				putNew(t, s, c)
			}
			got, ok, err := s.NextDue(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("NextDue = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
