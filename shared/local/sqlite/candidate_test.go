package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// openDB opens a fresh database file in a temporary directory.
func openDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// count runs a count(*) style query and returns its single integer.
func count(t *testing.T, db *sqlite.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.SQL().QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func ptr[T any](v T) *T { return &v }

func TestOpenPath(t *testing.T) {
	ctx := context.Background()
	// A data directory may have any name; none of these is special to
	// the file system, but some are to a file: URI.
	for _, name := range []string{"plain", "with space", "a#b", "a?b", "a%41b", "100%", "a&b=c"} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "crawl.db")
			db, err := sqlite.Open(ctx, path)
			if err != nil {
				t.Fatalf("Open(%q): %v", path, err)
			}
			var mode string
			var fk int
			if err := db.SQL().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
				t.Fatal(err)
			}
			if err := db.SQL().QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil {
				t.Fatal(err)
			}
			if mode != "wal" || fk != 1 {
				t.Errorf("journal_mode %q foreign_keys %d, want wal and 1", mode, fk)
			}
			if err := db.AddScopeHost(ctx, "example.com"); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if _, err := os.Stat(path); err != nil {
				t.Errorf("database not at %s: %v", path, err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 1 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("files beside the data directory: %q, want only %q", names, name)
			}
			db, err = sqlite.Open(ctx, path)
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			defer db.Close()
			if in, err := db.InScope(ctx, "example.com"); err != nil || !in {
				t.Errorf("reopened database lost its data: %v, %v", in, err)
			}
		})
	}
}

// putNew inserts c as a new candidate and returns it as stored.
func putNew(t *testing.T, db *sqlite.DB, c crawl.Candidate) crawl.Candidate {
	t.Helper()
	ctx := context.Background()
	c.Version = 0
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatalf("put candidate %s: %v", c.URL, err)
	}
	got, err := db.GetCandidate(ctx, c.URL)
	if err != nil {
		t.Fatalf("get candidate %s: %v", c.URL, err)
	}
	return got
}

func mustGet(t *testing.T, db *sqlite.DB, u string) crawl.Candidate {
	t.Helper()
	c, err := db.GetCandidate(context.Background(), u)
	if err != nil {
		t.Fatalf("get candidate %s: %v", u, err)
	}
	return c
}

func dueCandidate(u string, priority int, due int64) crawl.Candidate {
	return crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateDue, Priority: priority, DueAt: due,
		CrawlType: crawl.CrawlFirst, DiscoveredAt: 1}
}

// TestURLRowIsNoCandidate: a url row (which a crawl, a link or a lost
// conditional write's rollback may leave) is not a candidate.
func TestURLRowIsNoCandidate(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if _, err := db.Exec(ctx, `INSERT INTO url(url) VALUES('http://example.com/only-url')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetCandidate(ctx, "http://example.com/only-url"); !errors.Is(err, crawl.ErrNotFound) {
		t.Fatalf("GetCandidate = %v, want ErrNotFound", err)
	}
	if _, err := db.Status(ctx, "http://example.com/only-url"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("Status = %v, want ErrNotFound", err)
	}
}

func urlsOf(cs []crawl.Candidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.URL)
	}
	return out
}

func TestMarkAllDue(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const now = 5000
	cands := []crawl.Candidate{
		{URL: "http://example.com/crawled", Host: "example.com", State: crawl.StateCrawled, DueAt: 10, CrawlType: crawl.CrawlFirst,
			LastCrawlTime: ptr(int64(100)), LastCrawlExitCode: ptr(crawl.ExitComplete)},
		{URL: "http://example.com/due-later", Host: "example.com", State: crawl.StateDue, DueAt: 9000, CrawlType: crawl.CrawlRecrawl,
			LastCrawlTime: ptr(int64(100)), LastCrawlExitCode: ptr(crawl.ExitComplete)},
		{URL: "http://example.com/never-crawled", Host: "example.com", State: crawl.StateDue, DueAt: 4000, CrawlType: crawl.CrawlFirst},
		{URL: "http://example.com/never-crawled-forced", Host: "example.com", State: crawl.StateDue, DueAt: 4000, CrawlType: crawl.CrawlForced},
		{URL: "http://example.com/queued", Host: "example.com", State: crawl.StateQueued, DueAt: 10, QueuedAt: 20, CrawlUUID: "u1", CrawlType: crawl.CrawlFirst},
		{URL: "http://example.com/filtered", Host: "example.com", State: crawl.StateFiltered, CrawlType: crawl.CrawlFirst, LastCrawlExitCode: ptr(crawl.ExitOutOfScope)},
	}
	before := map[string]crawl.Candidate{}
	for _, c := range cands {
		before[c.URL] = putNew(t, db, c)
	}
	n, err := db.MarkAllDue(ctx, now, crawl.CrawlReenqueued)
	if err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Errorf("MarkAllDue = %d, want 4 (crawled and due)", n)
	}
	tests := []struct {
		url     string
		changed bool
		typ     crawl.CrawlType // the crawl type after
	}{
		{"http://example.com/crawled", true, crawl.CrawlReenqueued},
		{"http://example.com/due-later", true, crawl.CrawlReenqueued},
		{"http://example.com/never-crawled", true, crawl.CrawlFirst},
		{"http://example.com/never-crawled-forced", true, crawl.CrawlForced},
		{"http://example.com/queued", false, crawl.CrawlFirst},
		{"http://example.com/filtered", false, crawl.CrawlFirst},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got := mustGet(t, db, tt.url)
			if !tt.changed {
				if !reflect.DeepEqual(got, before[tt.url]) {
					t.Errorf("changed:\nbefore %+v\nafter  %+v", before[tt.url], got)
				}
				return
			}
			want := before[tt.url]
			want.State, want.DueAt, want.CrawlType, want.Version = crawl.StateDue, now, tt.typ, want.Version+1
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after MarkAllDue:\ngot  %+v\nwant %+v", got, want)
			}
		})
	}
	due, err := db.DueCandidates(ctx, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	if g := urlsOf(due); len(g) != 4 {
		t.Errorf("due after MarkAllDue: %v", g)
	}
	// A writer holding the version read before MarkAllDue loses.
	stale := before["http://example.com/crawled"]
	stale.Priority = 3
	if err := db.PutCandidate(ctx, stale); !errors.Is(err, crawl.ErrConflict) {
		t.Errorf("write with the version read before MarkAllDue: %v, want ErrConflict", err)
	}
}

// TestDueCandidatesFairShare: each pick goes to the host with the fewest
// candidates released and not yet recorded (queued), so a host whose
// tasks already wait for its turn gets fewer, even when its candidates
// are due first; a host outside the seeds' scope (a site's) shares
// like any other, and its priority counts.
func TestDueCandidatesFairShare(t *testing.T) {
	for _, tt := range []struct {
		name   string
		queued map[string]int // released candidates per host
		site   bool           // a due candidate of priority 10 on a host outside the scope
		limit  int
		want   []string
	}{
		{"none released: in turn", nil, false, 4, []string{"b/0", "b/1", "a/0", "a/1"}},
		{"b has two released", map[string]int{"b.example": 2}, false, 4, []string{"b/0", "a/0", "a/1", "a/2"}},
		{"b has five released", map[string]int{"b.example": 5}, false, 4, []string{"a/0", "a/1", "a/2", "a/3"}},
		{"b has five released, and a has too few for its share", map[string]int{"b.example": 5}, false, 9,
			[]string{"b/0", "b/1", "b/2", "a/0", "a/1", "a/2", "a/3", "a/4", "a/5"}},
		{"a site's host outside the scope", nil, true, 4, []string{"c/0", "b/0", "b/1", "a/0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			ctx := context.Background()
			for _, h := range []string{"a.example", "b.example"} {
				if err := db.AddScopeHost(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			put := func(host string, n int, due int64, state crawl.CandidateState, path string, priority int) {
				for i := range n {
					c := dueCandidate(fmt.Sprintf("http://%s/%s%d", host, path, i), priority, due+int64(i))
					c.Host, c.State = host, state
					if state == crawl.StateQueued {
						c.CrawlUUID, c.QueuedAt = fmt.Sprintf("%s-%d", host, i), 5
					}
					putNew(t, db, c)
				}
			}
			put("a.example", 6, 100, crawl.StateDue, "", 0)
			put("b.example", 3, 10, crawl.StateDue, "", 0)
			for h, n := range tt.queued {
				put(h, n, 1, crawl.StateQueued, "q", 0)
			}
			if tt.site {
				put("c.example", 1, 500, crawl.StateDue, "", 10)
			}
			got, err := db.DueCandidates(ctx, 1000, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var g []string
			for _, c := range got {
				g = append(g, strings.TrimSuffix(c.Host, ".example")+strings.TrimPrefix(c.URL, "http://"+c.Host))
			}
			if !slices.Equal(g, tt.want) {
				t.Errorf("DueCandidates(1000, %d) = %v, want %v", tt.limit, g, tt.want)
			}
		})
	}
}

// TestDueCandidatesShareUpTo64Hosts: a release is shared among up to 64
// hosts with candidates due; past that it is in release order, one
// host's backlog first.
func TestDueCandidatesShareUpTo64Hosts(t *testing.T) {
	for _, tt := range []struct {
		hosts   int
		fromBig int // of a release of 16
	}{
		{64, 1},
		{65, 16},
	} {
		t.Run(fmt.Sprint(tt.hosts), func(t *testing.T) {
			db := openDB(t)
			ctx := context.Background()
			var cs []crawl.Candidate
			for i := range 20 {
				c := dueCandidate(fmt.Sprintf("http://big.example/%d", i), 0, int64(i))
				c.Host = "big.example"
				cs = append(cs, c)
			}
			for h := range tt.hosts - 1 {
				host := fmt.Sprintf("h%d.example", h)
				c := dueCandidate("http://"+host+"/", 0, 100)
				c.Host = host
				cs = append(cs, c)
			}
			if err := errors.Join(db.PutCandidates(ctx, cs)...); err != nil {
				t.Fatal(err)
			}
			got, err := db.DueCandidates(ctx, 1000, 16)
			if err != nil {
				t.Fatal(err)
			}
			big := 0
			for _, c := range got {
				if c.Host == "big.example" {
					big++
				}
			}
			if len(got) != 16 || big != tt.fromBig {
				t.Errorf("%d hosts: %d candidates, %d of them from the big host; want 16, %d", tt.hosts, len(got), big, tt.fromBig)
			}
		})
	}
}

// TestDueURLOfAHoldingSiteIsHeld: a URL made due by a scheduler that has
// not yet read its site's state (a link admitted just after the site
// was suspended, or while it is disabled) is held in the same write, as
// the site's other URLs are; a URL the site's state does not hold stays
// due.
func TestDueURLOfAHoldingSiteIsHeld(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	for _, s := range []crawl.Site{
		{ID: "on", State: crawl.SiteActive, Roots: []string{"http://on.example/"}},
		{ID: "off", State: crawl.SiteDisabled, Roots: []string{"http://off.example/"}},
		{ID: "paused", State: crawl.SiteSuspended, Roots: []string{"http://paused.example/"}},
	} {
		if err := db.PutSite(ctx, s, true); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		site, parent string
		want         crawl.CandidateState
	}{
		{"on", "http://on.example/", crawl.StateDue},
		{"off", "", crawl.StateHeld},
		{"off", "http://off.example/", crawl.StateHeld},
		{"paused", "", crawl.StateDue}, // enqueued by hand: a suspended site crawls it
		{"paused", "http://paused.example/", crawl.StateHeld},
	}
	for i, tt := range tests {
		u := fmt.Sprintf("http://%s.example/p%d", tt.site, i)
		c := dueCandidate(u, 0, 1)
		c.SiteID, c.Parent = tt.site, tt.parent
		putNew(t, db, c)
		if got := mustGet(t, db, u); got.State != tt.want {
			t.Errorf("%s (site %s, parent %q): state %s, want %s", u, tt.site, tt.parent, got.State, tt.want)
		}
		// Made due again later (a recrawl date): the same.
		got := mustGet(t, db, u)
		got.State = crawl.StateDue
		if err := db.PutCandidate(ctx, got); err != nil {
			t.Fatal(err)
		}
		if again := mustGet(t, db, u); again.State != tt.want {
			t.Errorf("%s made due again: state %s, want %s", u, again.State, tt.want)
		}
	}
}

// TestSiteFiltersJudged: the key of the filters a site's URLs were
// last judged by is kept, and read back.
func TestSiteFiltersJudged(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if err := db.PutSite(ctx, crawl.Site{ID: "docs", State: crawl.SiteActive, Roots: []string{"http://docs.example/"}}, true); err != nil {
		t.Fatal(err)
	}
	if key, err := db.SiteFiltersJudged(ctx, "docs"); err != nil || key != "" {
		t.Fatalf("never judged: %q, %v", key, err)
	}
	for _, key := range []string{"k1", "k2"} {
		if err := db.SiteJudged(ctx, "docs", key, 100); err != nil {
			t.Fatal(err)
		}
		if got, err := db.SiteFiltersJudged(ctx, "docs"); err != nil || got != key {
			t.Errorf("judged by %s: read back %q, %v", key, got, err)
		}
	}
}

// TestContinuedRecrawlPassTakesInWhatItDidNotMark: a --recrawl pass
// continued after a site it left alone (suspended, disabled) became
// active makes that site's URLs due too; what the pass marked is left
// as it is, crawled since or put off.
func TestContinuedRecrawlPassTakesInWhatItDidNotMark(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	sites := []crawl.Site{
		{ID: "paused", State: crawl.SiteSuspended, Roots: []string{"http://paused.example/"}},
		{ID: "off", State: crawl.SiteDisabled, Roots: []string{"http://off.example/"}},
	}
	for _, s := range sites {
		if err := db.PutSite(ctx, s, true); err != nil {
			t.Fatal(err)
		}
	}
	crawled := func(u, site string, state crawl.CandidateState, due int64, typ crawl.CrawlType) {
		putNew(t, db, crawl.Candidate{URL: u, Host: strings.Split(u, "/")[2], SiteID: site, State: state, DueAt: due, CrawlType: typ,
			LastCrawlTime: ptr(int64(100)), LastCrawlExitCode: ptr(crawl.ExitComplete)})
	}
	crawled("http://example.com/crawled-again", "", crawl.StateCrawled, 10, crawl.CrawlFirst)
	crawled("http://example.com/put-off", "", crawl.StateCrawled, 10, crawl.CrawlFirst)
	crawled("http://paused.example/a", "paused", crawl.StateCrawled, 10, crawl.CrawlFirst)
	crawled("http://off.example/a", "off", crawl.StateDue, 9000, crawl.CrawlRecrawl) // held: its site is disabled

	const began, later = 5000, 5100
	n, cont, err := db.BeginRecrawlPass(ctx, began, crawl.CrawlReenqueued)
	if err != nil || n != 2 || cont != 0 {
		t.Fatalf("BeginRecrawlPass = %d, %d, %v; want the 2 URLs of no site, a new pass", n, cont, err)
	}
	// The pass crawls one URL and puts the other off.
	c := mustGet(t, db, "http://example.com/crawled-again")
	c.State, c.LastCrawlTime = crawl.StateCrawled, ptr(int64(began+1))
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatal(err)
	}
	c = mustGet(t, db, "http://example.com/put-off")
	c.DueAt = 9999
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatal(err)
	}
	// Forced meanwhile (crawler enqueue --enqueue-type forced): it stays so.
	crawled("http://example.com/forced", "", crawl.StateDue, began+1, crawl.CrawlForced)
	before := map[string]crawl.Candidate{}
	for _, u := range []string{"http://example.com/crawled-again", "http://example.com/put-off", "http://example.com/forced"} {
		before[u] = mustGet(t, db, u)
	}
	for _, s := range sites {
		s.State = crawl.SiteActive
		if err := db.PutSite(ctx, s, false); err != nil {
			t.Fatal(err)
		}
	}
	n, cont, err = db.BeginRecrawlPass(ctx, later, crawl.CrawlReenqueued)
	if err != nil || n != 2 || cont != began {
		t.Fatalf("BeginRecrawlPass again = %d, %d, %v; want the 2 URLs of the sites now active, the pass begun at %d", n, cont, err, began)
	}
	for _, u := range []string{"http://paused.example/a", "http://off.example/a"} {
		if got := mustGet(t, db, u); got.State != crawl.StateDue || got.DueAt != later || got.CrawlType != crawl.CrawlReenqueued {
			t.Errorf("%s: %s at %d as %v; want due now as re-enqueued", u, got.State, got.DueAt, got.CrawlType)
		}
	}
	for u, want := range before {
		if got := mustGet(t, db, u); !reflect.DeepEqual(got, want) {
			t.Errorf("%s changed by the pass's continuation:\nbefore %+v\nafter  %+v", u, want, got)
		}
	}
}

// TestRecrawlPassWaitsForAHeldSite: a site disabled during a --recrawl
// pass holds the URLs the pass made due, and the pass stays open for
// them: enabled again, they are crawled by the pass continued, not by a
// new pass that would crawl everything again. A site disabled before
// the pass began keeps none open.
func TestRecrawlPassWaitsForAHeldSite(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	sites := map[string]crawl.Site{
		"m":      {ID: "m", State: crawl.SiteActive, Roots: []string{"http://m.example/"}},
		"before": {ID: "before", State: crawl.SiteDisabled, Roots: []string{"http://before.example/"}},
	}
	for _, s := range sites {
		if err := db.PutSite(ctx, s, true); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range []string{"http://m.example/a", "http://m.example/b", "http://before.example/a"} {
		putNew(t, db, crawl.Candidate{URL: u, Host: strings.Split(u, "/")[2], SiteID: strings.Split(strings.Split(u, "/")[2], ".")[0],
			State: crawl.StateCrawled, CrawlType: crawl.CrawlFirst, LastCrawlTime: ptr(int64(100)), LastCrawlExitCode: ptr(crawl.ExitComplete)})
	}
	const began = 5000
	open := func(when string, want bool) {
		t.Helper()
		if err := db.EndRecrawlPass(ctx, crawl.CrawlReenqueued); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.SQL().QueryRow(`SELECT count(*) FROM recrawl_pass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if (n == 1) != want {
			t.Errorf("%s: pass open %v, want %v", when, n == 1, want)
		}
	}
	if _, _, err := db.BeginRecrawlPass(ctx, began, crawl.CrawlReenqueued); err != nil {
		t.Fatal(err)
	}
	crawled := func(u string) {
		c := mustGet(t, db, u)
		c.State, c.LastCrawlTime = crawl.StateCrawled, ptr(int64(began+1))
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	crawled("http://m.example/a")
	set := func(id string, st crawl.SiteState, at int64) {
		s := sites[id]
		s.State, s.UDate = st, at
		if err := db.PutSite(ctx, s, false); err != nil {
			t.Fatal(err)
		}
	}
	set("m", crawl.SiteDisabled, began+2)
	open("site m disabled with /b not crawled", true)
	set("m", crawl.SiteActive, began+3)
	open("site m enabled, /b due", true)
	crawled("http://m.example/b")
	open("every URL the pass made due crawled", false)

	// Disabled during this pass and left so: the next pass, begun
	// later, ends without its URLs.
	const next = began + 100
	if _, _, err := db.BeginRecrawlPass(ctx, next, crawl.CrawlReenqueued); err != nil {
		t.Fatal(err)
	}
	set("m", crawl.SiteDisabled, next+1)
	if err := db.EndRecrawlPass(ctx, crawl.CrawlReenqueued); err != nil {
		t.Fatal(err)
	}
	if _, cont, err := db.BeginRecrawlPass(ctx, next+2*int64(sqlite.RecrawlPassLife/time.Second), crawl.CrawlReenqueued); err != nil || cont != 0 {
		t.Fatalf("a pass begun two days later: continued %d, %v; want a new one", cont, err)
	}
	open("a later pass, site m disabled since the pass before", false)
}

// TestClaimedURLCounted: a URL known before its site was added counts
// as the site's collected URL once the site claims it, and filtered
// after, it is uncounted: the count never goes below what is collected.
func TestClaimedURLCounted(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const u = "http://docs.example/old"
	putNew(t, db, dueCandidate(u, 0, 1))
	if err := db.PutSite(ctx, crawl.Site{ID: "docs", State: crawl.SiteActive, Roots: []string{"http://docs.example/"}}, true); err != nil {
		t.Fatal(err)
	}
	collected := func() int64 {
		s, err := db.GetSite(ctx, "docs")
		if err != nil {
			t.Fatal(err)
		}
		return s.CollectedURLs
	}
	step := func(when string, f func(*crawl.Candidate), want int64) {
		t.Helper()
		c := mustGet(t, db, u)
		f(&c)
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatal(err)
		}
		if got := collected(); got != want {
			t.Errorf("%s: %d URLs collected, want %d", when, got, want)
		}
	}
	step("claimed by the site at its release", func(c *crawl.Candidate) { c.SiteID, c.State, c.CrawlUUID = "docs", crawl.StateQueued, "c1" }, 1)
	step("released again", func(c *crawl.Candidate) { c.CrawlUUID = "c2" }, 1)
	step("filtered by the site's filters", func(c *crawl.Candidate) {
		c.State, c.CrawlUUID, c.LastCrawlExitCode = crawl.StateFiltered, "", ptr(crawl.ExitExcluded)
	}, 0)
}
