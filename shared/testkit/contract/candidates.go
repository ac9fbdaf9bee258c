package contract

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// candidates: a candidate is written once (version 0), then only by a
// writer holding the version it read; a lost write changes nothing.
func candidates(t *testing.T, open Opener) {
	run(t, []testCase{
		{"InsertOnce", func(t *testing.T) {
			s := open(t)
			first := dueCandidate("http://example.com/", 1, 100)
			if err := s.PutCandidate(t.Context(), first); err != nil {
				t.Fatalf("first insert: %v", err)
			}
			before := snapshot(t, s)
			for _, c := range []crawl.Candidate{
				first, // the same candidate again
				{URL: first.URL, Host: "other", State: crawl.StateFiltered, Priority: 9, DueAt: 7, CrawlType: crawl.CrawlForced},
			} {
				err := s.PutCandidate(t.Context(), c)
				if !errors.Is(err, crawl.ErrConflict) || crawl.KindOf(err) != crawl.KindConflict {
					t.Fatalf("second version-0 insert of %+v: %v (kind %v), want ErrConflict", c, err, crawl.KindOf(err))
				}
				got := mustGet(t, s, first.URL)
				if got.Version != 1 || got.Priority != 1 || got.State != crawl.StateDue || got.Host != "example.com" {
					t.Errorf("stored candidate changed: %+v", got)
				}
			}
			unchanged(t, s, before, "a second insert")
		}},
		{"ConditionalUpdate", func(t *testing.T) { conditionalUpdate(t, open(t)) }},
		{"RoundTrip", func(t *testing.T) { candidateRoundTrip(t, open(t)) }},
		{"NotFound", func(t *testing.T) {
			s := open(t)
			putNew(t, s, dueCandidate("http://example.com/", 0, 0))
			// Longer than any candidate's URL (a canonical link, a URL a
			// user asks about): found nowhere, in no store refused.
			long := "http://example.com/" + strings.Repeat("a", crawl.MaxKeptURLLength)
			for _, u := range []string{"http://example.com/absent", "http://example.com", "", long} {
				if _, err := s.GetCandidate(t.Context(), u); !errors.Is(err, crawl.ErrNotFound) || crawl.KindOf(err) != crawl.KindNotFound {
					t.Errorf("GetCandidate(%q) = %v, want ErrNotFound", crawl.Truncate(u, 40), err)
				}
				if _, err := s.Status(t.Context(), u); !errors.Is(err, crawl.ErrNotFound) {
					t.Errorf("Status(%q) = %v, want ErrNotFound", crawl.Truncate(u, 40), err)
				}
				if _, err := s.OpenGeneration(t.Context(), u); !errors.Is(err, crawl.ErrNotFound) {
					t.Errorf("OpenGeneration(%q) = %v, want ErrNotFound", crawl.Truncate(u, 40), err)
				}
			}
		}},
		{"Invalid", func(t *testing.T) {
			s := open(t)
			before := snapshot(t, s)
			for _, c := range []crawl.Candidate{
				{Host: "example.com", State: crawl.StateDue},                    // no URL
				{URL: "http://example.com/", State: crawl.StateDue},             // due without a host
				{URL: "http://example.com/", State: crawl.StateQueued},          // queued without a host
				{URL: "http://example.com/", Version: 1, State: crawl.StateDue}, // an update too
			} {
				if err := s.PutCandidate(t.Context(), c); crawl.KindOf(err) != crawl.KindInvalid {
					t.Errorf("PutCandidate(%+v) = %v, want a KindInvalid error", c, err)
				}
			}
			if _, err := s.GetCandidate(t.Context(), "http://example.com/"); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("an invalid candidate was stored: %v", err)
			}
			unchanged(t, s, before, "refused candidates")
			// A filtered candidate needs no host (an invalid URL found in a page).
			c := crawl.Candidate{URL: "http://exa mple.com/", State: crawl.StateFiltered, CrawlType: crawl.CrawlFirst,
				LastCrawlExitCode: ptr(crawl.ExitInvalidURL)}
			if got := putNew(t, s, c); got.Host != "" || got.State != crawl.StateFiltered {
				t.Errorf("filtered candidate without a host: %+v", got)
			}
		}},
		{"Transitions", func(t *testing.T) { transitions(t, open(t)) }},
		{"PutMany", func(t *testing.T) { putMany(t, open(t)) }},
	})
}

// putMany: PutCandidates writes each candidate as PutCandidate would; one
// refused or lost changes nothing, and does not stop the others.
func putMany(t *testing.T, s Metadata) {
	putSite(t, s, docsSite(), true)
	base := "http://example.com/docs/"
	stored := putNew(t, s, dueCandidate(base+"stored", 1, 100))
	filtered := putNew(t, s, crawl.Candidate{URL: base + "filtered", Host: "example.com", State: crawl.StateFiltered,
		CrawlType: crawl.CrawlFirst, SiteID: "docs", LastCrawlExitCode: ptr(crawl.ExitExcluded)})
	filtered.Hops = 3 // a second version, so that a stale one is an update, not an insert
	if err := s.PutCandidate(t.Context(), filtered); err != nil {
		t.Fatal(err)
	}
	filtered = mustGet(t, s, filtered.URL)
	collected := mustSite(t, s, "docs").CollectedURLs

	update := stored
	update.Priority = 7
	stale := filtered // admitted after all, but from a version that is gone
	stale.Version--
	stale.State, stale.DueAt, stale.LastCrawlExitCode = crawl.StateDue, 5, nil
	fresh := dueCandidate(base+"new", 2, 200)
	fresh.SiteID = "docs"
	again := dueCandidate(base+"stored", 9, 900) // version 0 of a stored one
	errs := s.PutCandidates(t.Context(), []crawl.Candidate{
		fresh,
		again,
		{URL: base + "hostless", State: crawl.StateDue},
		stale,
		update,
	})
	if len(errs) != 5 {
		t.Fatalf("PutCandidates returned %d errors for 5 candidates", len(errs))
	}
	for i, want := range []struct {
		conflict, invalid bool
	}{{}, {conflict: true}, {invalid: true}, {conflict: true}, {}} {
		err := errs[i]
		switch {
		case want.conflict && !errors.Is(err, crawl.ErrConflict),
			want.invalid && crawl.KindOf(err) != crawl.KindInvalid,
			!want.conflict && !want.invalid && err != nil:
			t.Errorf("candidate %d: %v, want conflict %v, invalid %v", i, err, want.conflict, want.invalid)
		}
	}
	if got := mustGet(t, s, fresh.URL); got.Version != 1 || got.Priority != 2 || got.State != crawl.StateDue {
		t.Errorf("new candidate: %+v", got)
	}
	if got := mustGet(t, s, stored.URL); got.Version != stored.Version+1 || got.Priority != 7 {
		t.Errorf("updated candidate: %+v, want priority 7 at version %d", got, stored.Version+1)
	}
	if got := mustGet(t, s, filtered.URL); !reflect.DeepEqual(got, filtered) {
		t.Errorf("a lost write changed the candidate:\nbefore %+v\nafter  %+v", filtered, got)
	}
	if _, err := s.GetCandidate(t.Context(), base+"hostless"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("a refused candidate was stored: %v", err)
	}
	// The new one counts for its site; the lost admission does not.
	if got := mustSite(t, s, "docs").CollectedURLs; got != collected+1 {
		t.Errorf("site collected %d URLs, want %d", got, collected+1)
	}
	if errs := s.PutCandidates(t.Context(), nil); len(errs) != 0 {
		t.Errorf("PutCandidates(nil) = %v", errs)
	}
}

func conditionalUpdate(t *testing.T, s Metadata) {
	for i, tt := range []struct {
		name    string
		version func(stored int64) int64
		url     string // "": the stored candidate's URL
		want    error
	}{
		{"current version", func(v int64) int64 { return v }, "", nil},
		{"stale version", func(v int64) int64 { return v - 1 }, "", crawl.ErrConflict},
		{"version from the future", func(v int64) int64 { return v + 5 }, "", crawl.ErrConflict},
		{"update of an absent candidate", func(int64) int64 { return 1 }, "http://example.com/absent", crawl.ErrConflict},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := putNew(t, s, dueCandidate(fmt.Sprintf("http://example.com/%d", i), 1, 100))
			// A second write, so that a stale version (1) exists.
			c.Priority = 2
			if err := s.PutCandidate(t.Context(), c); err != nil {
				t.Fatalf("update: %v", err)
			}
			before := mustGet(t, s, c.URL)
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
			snap := snapshot(t, s)
			err := s.PutCandidate(t.Context(), upd)
			if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
				t.Fatalf("PutCandidate: %v, want %v", err, tt.want)
			}
			after := mustGet(t, s, c.URL)
			if tt.want != nil {
				if crawl.KindOf(err) != crawl.KindConflict || !crawl.IsTransient(err) {
					t.Errorf("KindOf(%v) = %v, want KindConflict (retryable)", err, crawl.KindOf(err))
				}
				if !reflect.DeepEqual(after, before) {
					t.Errorf("a lost conditional write changed the candidate:\nbefore %+v\nafter  %+v", before, after)
				}
				unchanged(t, s, snap, "a lost conditional write")
				if tt.url != "" {
					if _, err := s.GetCandidate(t.Context(), tt.url); !errors.Is(err, crawl.ErrNotFound) {
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

func candidateRoundTrip(t *testing.T, s Metadata) {
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
		SiteID:                  "docs.example",
		MRate:                   0.375,
		MRateCounter:            9,
		RecrawlEvery:            86400,
	}
	bare := crawl.Candidate{URL: "http://example.org/", Host: "example.org", State: crawl.StateDue, CrawlType: crawl.CrawlFirst}
	with := func(suffix string, f func(c *crawl.Candidate)) crawl.Candidate {
		c := bare
		c.URL += suffix
		f(&c)
		return c
	}
	for _, tt := range []struct {
		name string
		c    crawl.Candidate
	}{
		{"every field set", full},
		{"nil pointers and empty strings", bare},
		{"zero max depth differs from nil", with("z", func(c *crawl.Candidate) { c.MaxDepth = ptr(0) })},
		{"empty ETag differs from nil", with("e", func(c *crawl.Candidate) { c.LastContentfulETag = ptr("") })},
		{"one-element redirect chain", with("r", func(c *crawl.Candidate) { c.RedirectChain = []string{"http://example.org/x"} })},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := putNew(t, s, tt.c)
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
		c = putNew(t, s, c)
		c.LastCrawlTime, c.LastCrawlExitCode, c.LastContentfulCrawlTime, c.LastContentfulETag = nil, nil, nil, nil
		c.LastContentfulModified, c.MaxDepth, c.RedirectChain = nil, nil, nil
		c.CrawlUUID, c.OrigURL, c.Parent = "", "", ""
		c.State, c.Hops, c.NRedirs = crawl.StateDue, 1, 0
		if err := s.PutCandidate(t.Context(), c); err != nil {
			t.Fatalf("update: %v", err)
		}
		c.Version++
		if got := mustGet(t, s, c.URL); !reflect.DeepEqual(got, c) {
			t.Errorf("after update:\ngot  %+v\nwant %+v", got, c)
		}
	})
}

// transitions walks a candidate through its state machine as the stages
// do (due -> queued by a release -> crawled by the fetch stage's crawl ->
// due again by a recrawl), with a second writer that read the same
// version at each step: exactly one of them wins, the loser gets
// crawl.ErrConflict, and only the candidate's current state shows in
// the due and stale-queued queries.
func transitions(t *testing.T, s Metadata) {
	registerAgent(t, s)
	addScope(t, s, "example.com")
	const u = "http://example.com/p"
	c := putNew(t, s, dueCandidate(u, 0, 100))
	inQueries := func(t *testing.T, wantDue, wantQueued int) {
		t.Helper()
		due, err := s.DueCandidates(t.Context(), 1000, 10)
		if err != nil {
			t.Fatal(err)
		}
		stale, err := s.StaleQueued(t.Context(), 1000, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(due) != wantDue || len(stale) != wantQueued {
			t.Errorf("state %s: %d due and %d stale queued, want %d and %d", mustGet(t, s, u).State, len(due), len(stale), wantDue, wantQueued)
		}
	}
	inQueries(t, 1, 0)

	// Two schedulers release the same due candidate as two crawls.
	release := func(c crawl.Candidate, crawlUUID string) crawl.Candidate {
		c.State, c.CrawlUUID, c.QueuedAt = crawl.StateQueued, crawlUUID, 200
		return c
	}
	if err := s.PutCandidate(t.Context(), release(c, "crawl-a")); err != nil {
		t.Fatalf("first release: %v", err)
	}
	snap := snapshot(t, s)
	if err := s.PutCandidate(t.Context(), release(c, "crawl-b")); !errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("second release of the version the first changed: %v, want ErrConflict", err)
	}
	unchanged(t, s, snap, "the losing release")
	queued := mustGet(t, s, u)
	if queued.State != crawl.StateQueued || queued.CrawlUUID != "crawl-a" || queued.Version != c.Version+1 {
		t.Fatalf("after the releases: %+v, want queued as crawl-a", queued)
	}
	inQueries(t, 0, 1)

	// The fetch stage records crawl-a; a stale writer of the queued
	// version loses, and so does a second fetch of crawl-b that read the
	// candidate before crawl-a was recorded.
	cra, crb := CompleteCrawl(u, "crawl-a"), CompleteCrawl(u, "crawl-b")
	next := CrawledAs(queued, cra)
	if fresh, err := s.RecordCrawl(t.Context(), cra, &next); err != nil || !fresh {
		t.Fatalf("record crawl-a: %v, %v", fresh, err)
	}
	late := CrawledAs(queued, crb)
	snap = snapshot(t, s)
	if fresh, err := s.RecordCrawl(t.Context(), crb, &late); !errors.Is(err, crawl.ErrConflict) || fresh {
		t.Fatalf("record crawl-b against the queued version: %v, %v; want ErrConflict", fresh, err)
	}
	if _, err := s.GetCrawl(t.Context(), "crawl-b"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("the losing crawl was recorded: %v", err)
	}
	stale := queued
	stale.Priority = 7
	if err := s.PutCandidate(t.Context(), stale); !errors.Is(err, crawl.ErrConflict) {
		t.Errorf("write of the queued version after the crawl: %v, want ErrConflict", err)
	}
	unchanged(t, s, snap, "the losing crawl and the stale write")
	crawled := mustGet(t, s, u)
	next.Version++
	if !reflect.DeepEqual(crawled, next) {
		t.Errorf("after the crawl:\ngot  %+v\nwant %+v", crawled, next)
	}
	inQueries(t, 0, 0)

	// Due again (a recrawl), then filtered: each from the version read.
	for _, st := range []crawl.CandidateState{crawl.StateDue, crawl.StateFiltered} {
		c := mustGet(t, s, u)
		c.State, c.DueAt = st, 300
		if err := s.PutCandidate(t.Context(), c); err != nil {
			t.Fatalf("to %s: %v", st, err)
		}
		snap := snapshot(t, s)
		if err := s.PutCandidate(t.Context(), c); !errors.Is(err, crawl.ErrConflict) {
			t.Errorf("the same write to %s again: %v, want ErrConflict", st, err)
		}
		unchanged(t, s, snap, "the repeated write")
		want := 0
		if st == crawl.StateDue {
			want = 1
		}
		inQueries(t, want, 0)
	}
}
