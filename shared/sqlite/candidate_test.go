package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/sqlite"
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

func TestPutCandidateInsertOnce(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
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
			got := mustGet(t, db, first.URL)
			if got.Version != 1 || got.Priority != 1 || got.State != crawl.StateDue || got.Host != "example.com" {
				t.Errorf("stored candidate changed: %+v", got)
			}
		})
	}
	if n := count(t, db, `SELECT count(*) FROM crawl_frontier`); n != 1 {
		t.Errorf("crawl_frontier rows = %d, want 1", n)
	}
}

func TestPutCandidateConditionalUpdate(t *testing.T) {
	ctx := context.Background()
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			c := putNew(t, db, dueCandidate("http://example.com/", 1, 100))
			// A second write so that a stale version (1) exists.
			c.Priority = 2
			if err := db.PutCandidate(ctx, c); err != nil {
				t.Fatalf("update: %v", err)
			}
			before := mustGet(t, db, c.URL)
			if before.Version != 2 {
				t.Fatalf("version after one update = %d, want 2", before.Version)
			}

			upd := before
			if tt.url != "" {
				upd.URL = tt.url
			}
			upd.Version = tt.version(before.Version)
			upd.State, upd.Priority, upd.LastCrawlTime = crawl.StateCrawled, 42, ptr(int64(500))
			upd.LastCrawlExitCode = ptr(crawl.ExitComplete)
			err := db.PutCandidate(ctx, upd)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("PutCandidate: got %v, want %v", err, tt.want)
			}
			after := mustGet(t, db, c.URL)
			if tt.want != nil {
				if !reflect.DeepEqual(after, before) {
					t.Errorf("a lost conditional write changed the candidate:\nbefore %+v\nafter  %+v", before, after)
				}
				if tt.url != "" {
					if _, err := db.GetCandidate(ctx, tt.url); !errors.Is(err, crawl.ErrNotFound) {
						t.Errorf("lost update created %s: %v", tt.url, err)
					}
					if n := count(t, db, `SELECT count(*) FROM url WHERE url=?`, tt.url); n != 0 {
						t.Errorf("lost update left a url row for %s", tt.url)
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

func TestCandidateRoundTrip(t *testing.T) {
	ctx := context.Background()
	full := crawl.Candidate{
		URL:                     "https://example.com/a?b=c",
		LastCrawlTime:           ptr(int64(1700000000)),
		LastCrawlExitCode:       ptr(crawl.ExitRedirect),
		LastContentfulCrawlTime: ptr(int64(1690000000)),
		LastContentfulETag:      ptr(`W/"abc"`),
		Host:                    "example.com",
		State:                   crawl.StateQueued,
		Hops:                    3,
		Priority:                -2,
		DueAt:                   1700000100,
		CrawlType:               crawl.CrawlReenqueued,
		CrawlUUID:               "4b8a2a8e-7c4c-4bd0-9c38-4b0f5f8cba01",
		QueuedAt:                1700000200,
		LastContentfulModified:  ptr(int64(1600000000)),
		NRedirs:                 2,
		OrigURL:                 "http://example.com/start",
		RedirectChain:           []string{"http://example.com/start", "https://example.com/start"},
		DiscoveredAt:            1650000000,
		Parent:                  "https://example.com/",
		MaxDepth:                ptr(0),
	}
	bare := crawl.Candidate{URL: "http://example.org/", Host: "example.org", State: crawl.StateDue, CrawlType: crawl.CrawlFirst}
	tests := []struct {
		name string
		c    crawl.Candidate
	}{
		{"every field set", full},
		{"nil pointers and empty strings", bare},
		{"zero max depth differs from nil", func() crawl.Candidate { c := bare; c.URL += "z"; c.MaxDepth = ptr(0); return c }()},
		{"one-element redirect chain", func() crawl.Candidate {
			c := bare
			c.URL += "r"
			c.RedirectChain = []string{"http://example.org/x"}
			return c
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			got := putNew(t, db, tt.c)
			want := tt.c
			want.Version = 1
			if !reflect.DeepEqual(got, want) {
				t.Errorf("round trip:\ngot  %+v\nwant %+v", got, want)
			}
		})
	}

	t.Run("update clears optional fields", func(t *testing.T) {
		db := openDB(t)
		c := putNew(t, db, full)
		c.LastCrawlTime, c.LastCrawlExitCode, c.LastContentfulCrawlTime, c.LastContentfulETag = nil, nil, nil, nil
		c.LastContentfulModified, c.MaxDepth, c.RedirectChain = nil, nil, nil
		c.CrawlUUID, c.OrigURL, c.Parent = "", "", ""
		c.State, c.Hops, c.NRedirs = crawl.StateDue, 1, 0
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatalf("update: %v", err)
		}
		got := mustGet(t, db, c.URL)
		c.Version++
		if !reflect.DeepEqual(got, c) {
			t.Errorf("after update:\ngot  %+v\nwant %+v", got, c)
		}
	})
}

func TestGetCandidateNotFound(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	putNew(t, db, dueCandidate("http://example.com/", 0, 0))
	// A url row without a candidate (as a crawl or a link leaves) is not a candidate.
	if _, err := db.SQL().ExecContext(ctx, `INSERT INTO url(url) VALUES('http://example.com/only-url')`); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://example.com/absent", "http://example.com", "http://example.com/only-url", ""} {
		t.Run(u, func(t *testing.T) {
			_, err := db.GetCandidate(ctx, u)
			if !errors.Is(err, crawl.ErrNotFound) {
				t.Fatalf("GetCandidate(%q) = %v, want ErrNotFound", u, err)
			}
			if k := crawl.KindOf(err); k != crawl.KindNotFound {
				t.Errorf("KindOf = %v, want KindNotFound", k)
			}
		})
	}
}

func urlsOf(cs []crawl.Candidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.URL)
	}
	return out
}

func TestDueCandidates(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
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
		putNew(t, db, c)
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.DueCandidates(ctx, tt.now, tt.limit)
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
			}
		})
	}
}

func TestStaleQueued(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	queued := func(u string, at int64) crawl.Candidate {
		return crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateQueued, QueuedAt: at, CrawlUUID: "uuid-" + u, CrawlType: crawl.CrawlFirst}
	}
	for _, c := range []crawl.Candidate{
		queued("http://example.com/q300", 300),
		queued("http://example.com/q100", 100),
		queued("http://example.com/q200", 200),
		dueCandidate("http://example.com/due", 0, 50),
		{URL: "http://example.com/crawled", Host: "example.com", State: crawl.StateCrawled, QueuedAt: 10, CrawlType: crawl.CrawlFirst},
		{URL: "http://example.com/filtered", Host: "example.com", State: crawl.StateFiltered, CrawlType: crawl.CrawlFirst},
	} {
		putNew(t, db, c)
	}
	tests := []struct {
		name   string
		before int64
		limit  int
		want   []string
	}{
		{"all queued, oldest first", 1000, 10, []string{"http://example.com/q100", "http://example.com/q200", "http://example.com/q300"}},
		{"released at or before", 200, 10, []string{"http://example.com/q100", "http://example.com/q200"}},
		{"limit", 1000, 1, []string{"http://example.com/q100"}},
		{"none that old", 99, 10, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.StaleQueued(ctx, tt.before, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if g := urlsOf(got); !reflect.DeepEqual(g, tt.want) {
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
		{"earliest due wins over priority and other states", []crawl.Candidate{
			dueCandidate("http://example.com/a", 9, 300),
			dueCandidate("http://example.com/b", 0, 200),
			dueCandidate("http://example.com/c", 0, 400),
			{URL: "http://example.com/q", Host: "example.com", State: crawl.StateQueued, DueAt: 50, CrawlType: crawl.CrawlFirst},
		}, 200, true},
		{"due at zero", []crawl.Candidate{dueCandidate("http://example.com/z", 0, 0)}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			for _, c := range tt.cands {
				putNew(t, db, c)
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

func TestScope(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	for _, h := range []string{"example.com", "example.com", "example.org:8080"} {
		if err := db.AddScopeHost(ctx, h); err != nil {
			t.Fatalf("AddScopeHost(%s): %v", h, err)
		}
	}
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
	if n := count(t, db, `SELECT count(*) FROM crawl_scope`); n != 2 {
		t.Errorf("crawl_scope rows = %d, want 2", n)
	}
}
