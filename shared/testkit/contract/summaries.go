package contract

import (
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// summaries: ApplySummary folds a crawl into its URL's entity
// generations in one step, keyed by crawl_uuid (a redelivered summary
// changes nothing) and conditional on the open generation it was
// planned against (else crawl.ErrConflict, and nothing changes).
// Duplicates and the hand-over of the original's role are seen through
// OpenGeneration, FindOriginal, Status and Search; how each store keeps
// them (duplicate_summary rows, history attributes) is its own test's.
func summaries(t *testing.T, open Opener) {
	run(t, []testCase{
		{"Generations", func(t *testing.T) { generations(t, open(t)) }},
		{"FailedFirstCrawl", func(t *testing.T) {
			s := open(t)
			const u = "http://example.com/down"
			seen(t, s, u)
			su := SummaryUpdate(u, "c1", 100, crawl.GenerationAttach, 0, nil)
			su.Crawl.ExitCode, su.HTTP = crawl.ExitNetworkError, nil
			if !apply(t, s, su) {
				t.Fatal("not fresh")
			}
			// An extend with nothing open attaches too.
			if !apply(t, s, SummaryUpdate(u, "c2", 200, crawl.GenerationExtend, 0, nil)) {
				t.Fatal("not fresh")
			}
			for _, u := range []string{u, "http://example.com/never"} {
				if _, err := s.OpenGeneration(t.Context(), u); !errors.Is(err, crawl.ErrNotFound) || crawl.KindOf(err) != crawl.KindNotFound {
					t.Errorf("OpenGeneration(%s) = %v, want ErrNotFound", u, err)
				}
			}
			if g := mustStatus(t, s, u).Generation; g != nil {
				t.Errorf("status shows generation %+v, want none", g)
			}
		}},
		{"NotModified", func(t *testing.T) { notModified(t, open(t)) }},
		{"NotModifiedRecorded", func(t *testing.T) { notModifiedRecorded(t, open(t)) }},
		{"Idempotent", func(t *testing.T) { summaryIdempotent(t, open(t)) }},
		{"Conflict", func(t *testing.T) { summaryConflict(t, open(t)) }},
		{"Concurrent", func(t *testing.T) { summaryConcurrent(t, open(t)) }},
		{"FindOriginal", func(t *testing.T) { findOriginal(t, open(t)) }},
		{"NearDuplicates", func(t *testing.T) { nearDuplicates(t, open(t)) }},
		{"NearAfterPromotion", func(t *testing.T) { nearAfterPromotion(t, open(t)) }},
		{"TextPileShared", func(t *testing.T) {
			s := open(t)
			const a, b = "http://example.com/a", "http://example.com/b"
			seen(t, s, a, b)
			same, other := TextPile("the same words"), TextPile("other words")
			apply(t, s, SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, TextGen(a, 100, same, "A")))
			g1 := openGen(t, s, a).Generation.ID
			apply(t, s, SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, DupGen(b, 110, same, "B", g1)))
			// a changes, then changes back: its third generation has the first's pile.
			apply(t, s, SummaryUpdate(a, "c3", 200, crawl.GenerationReplace, g1, TextGen(a, 200, other, "A2")))
			g2 := openGen(t, s, a).Generation
			apply(t, s, SummaryUpdate(a, "c4", 300, crawl.GenerationReplace, g2.ID, TextGen(a, 300, same, "A3")))
			g3, gb := openGen(t, s, a).Generation, openGen(t, s, b).Generation
			if g3.TextPileID == nil || gb.TextPileID == nil || *g3.TextPileID != *gb.TextPileID {
				t.Errorf("text pile ids: a's third generation %v, b's copy %v; want the same", g3.TextPileID, gb.TextPileID)
			}
			if g2.TextPileID == nil || *g2.TextPileID == *g3.TextPileID {
				t.Errorf("text pile ids: other text %v, same text %v; want different", g2.TextPileID, g3.TextPileID)
			}
			// When a's first generation (the original) closed at 200, b's
			// copy took over as the original.
			if gb.MarkedDuplicate {
				t.Error("the copy is still marked duplicate after its original closed")
			}
			if got := mustStatus(t, s, b); got.ExactDuplicate || got.Status != crawl.StatusComplete {
				t.Errorf("status of the copy: exact-duplicate %v, status %q", got.ExactDuplicate, got.Status)
			}
		}},
		{"RepointedCopyShowsItsOriginal", func(t *testing.T) {
			s := open(t)
			const a, b, c = "http://example.com/a", "http://example.com/b", "http://example.com/c"
			seen(t, s, a, b, c)
			same := TextPile("copied thrice")
			apply(t, s, SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, TextGen(a, 100, same, "A")))
			ga := openGen(t, s, a).Generation.ID
			apply(t, s, SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, DupGen(b, 110, same, "B", ga)))
			apply(t, s, SummaryUpdate(c, "c3", 120, crawl.GenerationReplace, 0, DupGen(c, 120, same, "C", ga)))
			// a changes: b, the earliest copy, takes over, and c is
			// re-pointed to it (its status of a ends, one of b opens).
			apply(t, s, SummaryUpdate(a, "c4", 200, crawl.GenerationReplace, ga, TextGen(a, 200, TextPile("moved on"), "A2")))
			if got := mustStatus(t, s, c); got.Generation == nil || !got.Generation.MarkedDuplicate || got.Generation.DuplicateOf != b {
				t.Errorf("status of the re-pointed copy: generation %+v; want a duplicate of %s, its original now", got.Generation, b)
			}
		}},
		{"ClosedCopyNotPromoted", func(t *testing.T) {
			s := open(t)
			const a, b = "http://example.com/a", "http://example.com/b"
			same := TextPile("copied")
			apply(t, s, SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, TextGen(a, 100, same, "A")))
			ga := openGen(t, s, a).Generation.ID
			apply(t, s, SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, DupGen(b, 110, same, "B", ga)))
			gb := openGen(t, s, b).Generation.ID
			// The copy changes: its duplicate status ends with it.
			apply(t, s, SummaryUpdate(b, "c3", 250, crawl.GenerationReplace, gb, TextGen(b, 250, TextPile("own text"), "B2")))
			if g := openGen(t, s, b).Generation; g.MarkedDuplicate {
				t.Errorf("b's new generation is marked duplicate")
			}
			// Then the original changes: there is no open copy to hand on to.
			apply(t, s, SummaryUpdate(a, "c4", 300, crawl.GenerationReplace, ga, TextGen(a, 300, TextPile("moved on"), "A2")))
			if got, err := s.FindOriginal(t.Context(), same.Digest, "http://example.com/new"); err != nil || got != 0 {
				t.Errorf("FindOriginal = %d, %v; want none: the copy closed before its original", got, err)
			}
		}},
		{"DuplicatesPromoted", func(t *testing.T) { duplicatesPromoted(t, open(t)) }},
		{"PromotionWithoutIndexableCopy", func(t *testing.T) {
			s := open(t)
			const a, n = "http://example.com/a", "http://example.com/n"
			seen(t, s, a, n)
			same := TextPile("members only")
			apply(t, s, SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, TextGen(a, 100, same, "A")))
			ga := openGen(t, s, a).Generation.ID
			g := DupGen(n, 110, same, "N", ga)
			g.NoIndex = true
			apply(t, s, SummaryUpdate(n, "c2", 110, crawl.GenerationReplace, 0, g))
			apply(t, s, SummaryUpdate(a, "c3", 200, crawl.GenerationReplace, ga, TextGen(a, 200, TextPile("public"), "A2")))
			// The noindex copy is a duplicate no more, and no original either.
			if gn := openGen(t, s, n).Generation; gn.MarkedDuplicate {
				t.Errorf("noindex copy still marked duplicate: %+v", gn)
			}
			if got, err := s.FindOriginal(t.Context(), same.Digest, "http://example.com/new"); err != nil || got != 0 {
				t.Errorf("FindOriginal = %d, %v; want none (noindex)", got, err)
			}
			if got := mustStatus(t, s, n); got.ExactDuplicate {
				t.Errorf("status of the noindex copy: exact-duplicate")
			}
		}},
	})
}

func apply(t *testing.T, s Metadata, su crawl.SummaryUpdate) bool {
	t.Helper()
	fresh, err := s.ApplySummary(t.Context(), su)
	if err != nil {
		t.Fatalf("apply summary of %s: %v", su.Crawl.CrawlUUID, err)
	}
	return fresh
}

func openGen(t *testing.T, s Metadata, u string) crawl.OpenGeneration {
	t.Helper()
	o, err := s.OpenGeneration(t.Context(), u)
	if err != nil {
		t.Fatalf("open generation of %s: %v", u, err)
	}
	return o
}

// seen stores crawled candidates for URLs, so that Status shows them.
func seen(t *testing.T, s Metadata, urls ...string) {
	t.Helper()
	for _, u := range urls {
		putNew(t, s, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlFirst,
			LastCrawlTime: ptr(int64(100)), LastCrawlExitCode: ptr(crawl.ExitComplete), LastContentfulCrawlTime: ptr(int64(100))})
	}
}

// summaryView is what a store shows of URLs' generations: their open
// generations and statuses (the latest generation, how many there are),
// the original a text would duplicate, and a search.
type summaryView struct {
	Open     map[string]*crawl.OpenGeneration
	Status   map[string]crawl.URLStatus
	Original map[string]int64 // by text
	Hits     []crawl.SearchHit
}

func view(t *testing.T, s Metadata, urls []string, texts []string, query string) summaryView {
	t.Helper()
	v := summaryView{Open: map[string]*crawl.OpenGeneration{}, Status: map[string]crawl.URLStatus{}, Original: map[string]int64{}}
	for _, u := range urls {
		o, err := s.OpenGeneration(t.Context(), u)
		switch {
		case err == nil:
			v.Open[u] = &o
		case !errors.Is(err, crawl.ErrNotFound):
			t.Fatalf("open generation of %s: %v", u, err)
		}
		v.Status[u] = mustStatus(t, s, u)
	}
	for _, text := range texts {
		id, err := s.FindOriginal(t.Context(), TextPile(text).Digest, "http://example.com/elsewhere")
		if err != nil {
			t.Fatal(err)
		}
		v.Original[text] = id
	}
	hits, err := s.Search(t.Context(), query, 10)
	if err != nil {
		t.Fatal(err)
	}
	v.Hits = hits
	return v
}

func generations(t *testing.T, s Metadata) {
	const u = "http://example.com/"
	seen(t, s, u)
	alpha, beta := TextPile("alpha"), TextPile("beta")
	type want struct {
		gens        int // generations of u
		first, last int64
		content     string
	}
	for _, st := range []struct {
		name   string
		crawl  string
		at     int64
		action crawl.GenerationAction
		ng     *crawl.NewGeneration
		want   want
	}{
		{"first crawl opens a generation", "c1", 100, crawl.GenerationReplace, TextGen(u, 100, alpha, "A"),
			want{1, 100, 100, "text:" + hex.EncodeToString(alpha.Digest)}},
		{"same content extends", "c2", 200, crawl.GenerationExtend, nil, want{1, 100, 200, "text:" + hex.EncodeToString(alpha.Digest)}},
		{"a late crawl does not move last_seen back", "c3", 150, crawl.GenerationExtend, nil,
			want{1, 100, 200, "text:" + hex.EncodeToString(alpha.Digest)}},
		{"new content replaces", "c4", 300, crawl.GenerationReplace, TextGen(u, 300, beta, "B"),
			want{2, 300, 300, "text:" + hex.EncodeToString(beta.Digest)}},
		{"failed crawl attaches", "c5", 400, crawl.GenerationAttach, nil, want{2, 300, 300, "text:" + hex.EncodeToString(beta.Digest)}},
	} {
		t.Run(st.name, func(t *testing.T) {
			var openID int64
			if o, err := s.OpenGeneration(t.Context(), u); err == nil {
				openID = o.Generation.ID
			} else if !errors.Is(err, crawl.ErrNotFound) {
				t.Fatal(err)
			}
			su := SummaryUpdate(u, st.crawl, st.at, st.action, openID, st.ng)
			if st.action == crawl.GenerationAttach {
				su.Crawl.ExitCode, su.HTTP = crawl.ExitTimeout, nil
			}
			if !apply(t, s, su) {
				t.Fatal("ApplySummary reported the crawl as already summarized")
			}
			o := openGen(t, s, u)
			g := mustStatus(t, s, u).Generation
			if g == nil {
				t.Fatal("status shows no generation")
			}
			got := want{g.Generations, o.Generation.FirstSeen, o.Generation.LastSeen, o.ContentKey}
			if got != st.want {
				t.Errorf("after %s: %+v, want %+v", st.crawl, got, st.want)
			}
			if !o.Generation.Open() || o.Generation.URL != u || o.Generation.ID == 0 {
				t.Errorf("open generation: %+v", o.Generation)
			}
			if g.UUID != o.Generation.UUID || g.FirstSeen != o.Generation.FirstSeen || g.LastSeen != o.Generation.LastSeen || g.ConfirmedEnd != nil {
				t.Errorf("status shows generation %+v, want the open one %+v", g, o.Generation)
			}
			if st.ng != nil && o.Generation.UUID != st.ng.Generation.UUID {
				t.Errorf("open generation %s, want the new one %s", o.Generation.UUID, st.ng.Generation.UUID)
			}
		})
	}
}

// notModified: a 304 (crawl.GenerationExtendOpen) extends whatever
// generation is open when it is applied, which the summarizer does not
// read first: last_seen never moves back, a generation first seen after
// the crawl is not extended, a URL with nothing open is left as it is,
// and a redelivery changes nothing.
func notModified(t *testing.T, s Metadata) {
	const u, none = "http://example.com/", "http://example.com/none"
	seen(t, s, u, none)
	at := func(url, crawlUUID string, seenAt int64) crawl.SummaryUpdate {
		su := SummaryUpdate(url, crawlUUID, seenAt, crawl.GenerationExtendOpen, 0, nil)
		su.Crawl.ExitCode, su.HTTP = crawl.ExitUnchanged, &crawl.HTTPSummary{StatusCode: 304, ETag: ptr(`"e"`)}
		return su
	}
	apply(t, s, SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, TextGen(u, 100, TextPile("alpha"), "A")))
	first := openGen(t, s, u).Generation
	type seenTimes struct{ gens, first, last int64 }
	check := func(t *testing.T, want seenTimes) {
		t.Helper()
		o := openGen(t, s, u).Generation
		g := mustStatus(t, s, u).Generation
		if g == nil {
			t.Fatal("status shows no generation")
		}
		if got := (seenTimes{int64(g.Generations), o.FirstSeen, o.LastSeen}); got != want || g.LastSeen != o.LastSeen {
			t.Errorf("generations, first and last seen %+v (status last seen %d), want %+v", got, g.LastSeen, want)
		}
	}
	for _, st := range []struct {
		name string
		su   crawl.SummaryUpdate
		want seenTimes
	}{
		{"a 304 extends the open generation", at(u, "n1", 200), seenTimes{1, 100, 200}},
		{"a late 304 does not move last_seen back", at(u, "n2", 150), seenTimes{1, 100, 200}},
		{"a later 304 moves it on", at(u, "n3", 300), seenTimes{1, 100, 300}},
		{"new content opens a generation", SummaryUpdate(u, "c4", 400, crawl.GenerationReplace, first.ID, TextGen(u, 400, TextPile("beta"), "B")),
			seenTimes{2, 400, 400}},
		{"a 304 older than the open generation leaves it", at(u, "n5", 350), seenTimes{2, 400, 400}},
		{"and one newer extends it", at(u, "n6", 500), seenTimes{2, 400, 500}},
	} {
		t.Run(st.name, func(t *testing.T) {
			apply(t, s, st.su)
			check(t, st.want)
		})
	}
	t.Run("redelivered", func(t *testing.T) {
		held := snapshot(t, s)
		for _, su := range []crawl.SummaryUpdate{at(u, "n6", 500), at(u, "n3", 300)} {
			apply(t, s, su)
		}
		check(t, seenTimes{2, 400, 500})
		unchanged(t, s, held, "a redelivered 304")
	})
	t.Run("nothing open", func(t *testing.T) {
		apply(t, s, at(none, "n8", 200))
		if _, err := s.OpenGeneration(t.Context(), none); !errors.Is(err, crawl.ErrNotFound) {
			t.Errorf("OpenGeneration = %v, want ErrNotFound", err)
		}
		if g := mustStatus(t, s, none).Generation; g != nil {
			t.Errorf("status shows generation %+v, want none", g)
		}
	})
}

// notModifiedRecorded: a 304 as the fetch stage and the summarizer
// handle it (RecordCrawl of the crawl with the candidate it leaves, then
// its summary) extends the open generation as notModified's do, whichever
// of the two writes it: OpenGeneration and status show it, and a
// redelivery of either changes nothing. A 304 that confirmed content
// whose summary is still to come does not extend the generation open
// before it (the summarizer would take the new content for a late crawl
// of the old), and extends the one that summary opens.
func notModifiedRecorded(t *testing.T, s Metadata) {
	const u = "http://example.com/"
	registerAgent(t, s)
	seen(t, s, u)
	apply(t, s, SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, TextGen(u, 100, TextPile("alpha"), "A")))
	// release queues the candidate for a crawl; record records cr as the
	// fetch stage does, which sends no summarize task for a 304: the
	// store settles it. summaryTask is the summary the task would have
	// carried, which a redelivered fetch task still sends.
	release := func(crawlUUID string, at int64) {
		t.Helper()
		c := mustGet(t, s, u)
		c.State, c.CrawlUUID, c.QueuedAt = crawl.StateQueued, crawlUUID, at-1
		if err := s.PutCandidate(t.Context(), c); err != nil {
			t.Fatalf("release %s: %v", crawlUUID, err)
		}
	}
	record := func(cr crawl.Crawl) {
		t.Helper()
		release(cr.Log.CrawlUUID, cr.Log.TimeStarted)
		next := CrawledAs(mustGet(t, s, u), cr)
		if fresh, err := s.RecordCrawl(t.Context(), cr, &next); err != nil || !fresh {
			t.Fatalf("record %s: %v, %v", cr.Log.CrawlUUID, fresh, err)
		}
	}
	summaryTask := func(cr crawl.Crawl) crawl.SummaryUpdate {
		su := crawl.SummaryOf(cr)
		if su.Action != crawl.GenerationExtendOpen || su.HTTP == nil || su.HTTP.StatusCode != 304 {
			t.Fatalf("the summary of a 304: %+v", su)
		}
		return su
	}
	check := func(t *testing.T, gens int, first, last int64) {
		t.Helper()
		o := openGen(t, s, u).Generation
		g := mustStatus(t, s, u).Generation
		if g == nil {
			t.Fatal("status shows no generation")
		}
		if g.Generations != gens || o.FirstSeen != first || o.LastSeen != last || g.LastSeen != last {
			t.Errorf("%d generations, open one first seen %d, last seen %d (status: %d); want %d, %d, %d",
				g.Generations, o.FirstSeen, o.LastSeen, g.LastSeen, gens, first, last)
		}
	}
	n1 := UnchangedCrawl(u, "n1", 200)
	record(n1)
	check(t, 1, 100, 200)
	t.Run("redelivered", func(t *testing.T) {
		held := snapshot(t, s)
		next := CrawledAs(mustGet(t, s, u), n1)
		if fresh, err := s.RecordCrawl(t.Context(), n1, &next); err != nil || fresh {
			t.Fatalf("redelivered RecordCrawl = %v, %v; want false, nil", fresh, err)
		}
		// The redelivered fetch task sends the 304 on to be summarized.
		apply(t, s, summaryTask(n1))
		check(t, 1, 100, 200)
		unchanged(t, s, held, "a redelivered 304")
	})
	record(UnchangedCrawl(u, "n2", 300))
	check(t, 1, 100, 300)

	// New content at 400, and a 304 at 500 that confirms it, both
	// recorded before the content's summary: the 304 extends the
	// generation the content opens, not the one open when it came.
	first := openGen(t, s, u).Generation
	c3 := CompleteCrawl(u, "c3")
	c3.Log.TimeStarted, c3.Requests[0].TimeSent = 400, 400
	record(c3)
	n4 := UnchangedCrawl(u, "n4", 500)
	record(n4)
	check(t, 1, 100, 300)
	apply(t, s, SummaryUpdate(u, "c3", 400, crawl.GenerationReplace, first.ID, TextGen(u, 400, TextPile("beta"), "B")))
	check(t, 2, 400, 500)
	held := snapshot(t, s)
	apply(t, s, summaryTask(n4))
	check(t, 2, 400, 500)
	unchanged(t, s, held, "the summary of a settled 304")

	// The same content fetched again at 600 (a 200 whose summary extends
	// the generation), and a 304 at 700 recorded before that summary.
	c5 := CompleteCrawl(u, "c5")
	c5.Log.TimeStarted, c5.Requests[0].TimeSent = 600, 600
	record(c5)
	record(UnchangedCrawl(u, "n6", 700))
	second := openGen(t, s, u).Generation
	apply(t, s, SummaryUpdate(u, "c5", 600, crawl.GenerationExtend, second.ID, nil))
	check(t, 2, 400, 700)

	// The URL then redirects, and a 304 at 900 confirms the content
	// fetched at 600 again: it does not extend the redirect.
	r8 := RedirectCrawl(u, "http://example.com/moved", "r8")
	r8.Log.TimeStarted, r8.Requests[0].TimeSent = 800, 800
	record(r8)
	moved := &crawl.NewGeneration{Generation: crawl.EntityGeneration{URL: u, FirstSeen: 800, LastSeen: 800},
		ContentKey: "redirect:http://example.com/moved", Redirect: &crawl.RedirectSummary{ToURL: "http://example.com/moved"}}
	apply(t, s, SummaryUpdate(u, "r8", 800, crawl.GenerationReplace, second.ID, moved))
	record(UnchangedCrawl(u, "n9", 900))
	check(t, 3, 800, 800)
}

func summaryIdempotent(t *testing.T, s Metadata) {
	const u, v = "http://example.com/", "http://example.com/copy"
	seen(t, s, u, v)
	first := SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, TextGen(u, 100, TextPile("one"), "T"))
	apply(t, s, first)
	g1 := openGen(t, s, u).Generation.ID
	apply(t, s, SummaryUpdate(u, "c2", 200, crawl.GenerationExtend, g1, nil))
	dup := SummaryUpdate(v, "c3", 150, crawl.GenerationReplace, 0, DupGen(v, 150, TextPile("one"), "C", g1))
	apply(t, s, dup)
	before := view(t, s, []string{u, v}, []string{"one"}, "one")
	held := snapshot(t, s)

	for _, tt := range []struct {
		name string
		su   crawl.SummaryUpdate
	}{
		{"first crawl again", first},
		{"extend again, later", SummaryUpdate(u, "c2", 900, crawl.GenerationExtend, g1, nil)},
		{"duplicate again", dup},
		{"same crawl uuid with a stale open id", SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 12345, TextGen(u, 100, TextPile("x"), "X"))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fresh, err := s.ApplySummary(t.Context(), tt.su)
			if err != nil || fresh {
				t.Fatalf("ApplySummary = %v, %v; want false, nil", fresh, err)
			}
			if got := view(t, s, []string{u, v}, []string{"one"}, "one"); !reflect.DeepEqual(got, before) {
				t.Errorf("redelivery changed what the store shows:\nbefore %+v\nafter  %+v", before, got)
			}
			unchanged(t, s, held, "a redelivered summary")
		})
	}
	if g := before.Status[u].Generation; g == nil || g.Generations != 1 || g.LastSeen != 200 {
		t.Errorf("status of %s: generation %+v, want one, last seen at 200", u, g)
	}
	if !before.Status[v].ExactDuplicate || before.Original["one"] != g1 || len(before.Hits) != 1 || before.Hits[0].URL != u {
		t.Errorf("copy %+v, original %d, hits %+v; want an exact duplicate of %d, found at %s only",
			before.Status[v], before.Original["one"], before.Hits, g1, u)
	}
	// The copy is still counted once: when the original closes, it is
	// handed on to the copy, and nothing is left marked duplicate.
	apply(t, s, SummaryUpdate(u, "c4", 300, crawl.GenerationReplace, g1, TextGen(u, 300, TextPile("two"), "T2")))
	if g := openGen(t, s, v).Generation; g.MarkedDuplicate {
		t.Errorf("copy still a duplicate after its original closed")
	}
	// The first crawl once more, now planned as a late attach to the
	// generation that replaced the one it opened: still nothing changes.
	held = snapshot(t, s)
	if fresh, err := s.ApplySummary(t.Context(), SummaryUpdate(u, "c1", 100, crawl.GenerationAttach, openGen(t, s, u).Generation.ID, nil)); err != nil || fresh {
		t.Errorf("the first crawl after a replace: ApplySummary = %v, %v; want false, nil", fresh, err)
	}
	unchanged(t, s, held, "the first crawl redelivered after a replace")
	if id, err := s.FindOriginal(t.Context(), TextPile("one").Digest, u); err != nil || id != openGen(t, s, v).Generation.ID {
		t.Errorf("FindOriginal = %d, %v; want the copy", id, err)
	}
}

func summaryConflict(t *testing.T, s Metadata) {
	const u, fresh = "http://example.com/", "http://example.com/no-generation"
	seen(t, s, u, fresh)
	apply(t, s, SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, TextGen(u, 100, TextPile("one"), "T")))
	g1 := openGen(t, s, u).Generation.ID
	apply(t, s, SummaryUpdate(u, "c2", 200, crawl.GenerationReplace, g1, TextGen(u, 200, TextPile("two"), "T")))
	g2 := openGen(t, s, u).Generation.ID
	urls, texts := []string{u, fresh}, []string{"one", "two", "three"}
	before := view(t, s, urls, texts, "three")
	held := snapshot(t, s)

	for _, tt := range []struct {
		name   string
		url    string
		openID int64
		action crawl.GenerationAction
		ng     *crawl.NewGeneration
	}{
		{"replace as if there were none", u, 0, crawl.GenerationReplace, TextGen(u, 300, TextPile("three"), "T")},
		{"replace against the closed generation", u, g1, crawl.GenerationReplace, TextGen(u, 300, TextPile("three"), "T")},
		{"extend the closed generation", u, g1, crawl.GenerationExtend, nil},
		{"attach to an unknown generation", u, g2 + 100, crawl.GenerationAttach, nil},
		{"attach as if there were none", u, 0, crawl.GenerationAttach, nil},
		{"URL without generations", fresh, g2, crawl.GenerationReplace, TextGen(fresh, 300, TextPile("three"), "T")},
		{"duplicate of a closed generation", fresh, 0, crawl.GenerationReplace, DupGen(fresh, 300, TextPile("one"), "T", g1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := s.ApplySummary(t.Context(), SummaryUpdate(tt.url, "c-conflict", 300, tt.action, tt.openID, tt.ng))
			if !errors.Is(err, crawl.ErrConflict) || ok {
				t.Fatalf("ApplySummary = %v, %v; want ErrConflict", ok, err)
			}
			if crawl.KindOf(err) != crawl.KindConflict || !crawl.IsTransient(err) {
				t.Errorf("kind %v: a conflict must be retryable", crawl.KindOf(err))
			}
			if got := view(t, s, urls, texts, "three"); !reflect.DeepEqual(got, before) {
				t.Errorf("a lost summary changed what the store shows:\nbefore %+v\nafter  %+v", before, got)
			}
			unchanged(t, s, held, "a lost summary")
		})
	}
	// None of them recorded the crawl: planned again, it is fresh.
	if !apply(t, s, SummaryUpdate(u, "c-conflict", 300, crawl.GenerationReplace, g2, TextGen(u, 300, TextPile("three"), "T"))) {
		t.Error("the crawl of the lost summaries was recorded")
	}
}

// summaryConcurrent: summaries planned against the same open generation
// race; one wins, the others lose with a conflict, and a crawl
// delivered several times at once is summarized once.
func summaryConcurrent(t *testing.T, s Metadata) {
	const u = "http://example.com/"
	seen(t, s, u)
	apply(t, s, SummaryUpdate(u, "c0", 100, crawl.GenerationReplace, 0, TextGen(u, 100, TextPile("zero"), "Z")))
	g0 := openGen(t, s, u).Generation.ID
	const n = 6
	var lost []int // the racers that lost with a conflict
	race := func(mk func(i int) crawl.SummaryUpdate) (won, already, conflicts int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				fresh, err := s.ApplySummary(t.Context(), mk(i))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, crawl.ErrConflict):
					conflicts++
					lost = append(lost, i)
				case err != nil:
					t.Errorf("ApplySummary: %v", err)
				case fresh:
					won++
				default:
					already++
				}
			})
		}
		wg.Wait()
		return
	}
	won, _, conflicts := race(func(i int) crawl.SummaryUpdate {
		return SummaryUpdate(u, fmt.Sprintf("r%d", i), 200, crawl.GenerationReplace, g0, TextGen(u, 200, TextPile(fmt.Sprintf("text %d", i)), "R"))
	})
	if won != 1 || conflicts != n-1 {
		t.Errorf("racing replaces: %d won, %d conflicts; want 1 and %d", won, conflicts, n-1)
	}
	if g := mustStatus(t, s, u).Generation; g == nil || g.Generations != 2 {
		t.Errorf("status shows %+v, want 2 generations", g)
	}
	open := openGen(t, s, u)
	// A loser recorded nothing: planned again, its crawl is fresh.
	if len(lost) > 0 {
		i := lost[0]
		if !apply(t, s, SummaryUpdate(u, fmt.Sprintf("r%d", i), 200, crawl.GenerationExtend, open.Generation.ID, nil)) {
			t.Errorf("the losing crawl r%d was recorded", i)
		}
	}
	won, already, conflicts := race(func(int) crawl.SummaryUpdate {
		return SummaryUpdate(u, "same", 300, crawl.GenerationExtend, open.Generation.ID, nil)
	})
	if won != 1 || won+already+conflicts != n {
		t.Errorf("one crawl delivered %d times at once: %d fresh, %d already, %d conflicts; want 1 fresh", n, won, already, conflicts)
	}
	if got := openGen(t, s, u); got.Generation.ID != open.Generation.ID || got.Generation.LastSeen != 300 {
		t.Errorf("after the extends: %+v, want %d last seen at 300", got.Generation, open.Generation.ID)
	}
}

// findOriginal: the open, indexable, non-duplicate generation of another
// URL with a text, the earliest first. (Of the empty text, the DynamoDB
// store finds none and the SQLite store may find one: the summarizer
// never asks, empty texts are not compared.)
func findOriginal(t *testing.T, s Metadata) {
	const a, b, c, n = "http://example.com/a", "http://example.com/b", "http://example.com/c", "http://example.com/n"
	shared, gone, current, hidden := TextPile("shared text"), TextPile("gone text"), TextPile("current text"), TextPile("hidden text")

	apply(t, s, SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, TextGen(a, 100, shared, "A")))
	ga := openGen(t, s, a).Generation.ID
	apply(t, s, SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, DupGen(b, 110, shared, "B", ga)))
	apply(t, s, SummaryUpdate(c, "c3", 120, crawl.GenerationReplace, 0, TextGen(c, 120, gone, "C")))
	gcOld := openGen(t, s, c).Generation.ID
	apply(t, s, SummaryUpdate(c, "c4", 130, crawl.GenerationReplace, gcOld, TextGen(c, 130, current, "C2")))
	gc := openGen(t, s, c).Generation.ID
	ng := TextGen(n, 90, hidden, "N")
	ng.NoIndex = true
	apply(t, s, SummaryUpdate(n, "c5", 90, crawl.GenerationReplace, 0, ng))
	// A later original of the current text at another URL: the earliest wins.
	apply(t, s, SummaryUpdate("http://example.com/d", "c6", 140, crawl.GenerationReplace, 0, TextGen("http://example.com/d", 140, current, "D")))
	gd := openGen(t, s, "http://example.com/d").Generation.ID

	for _, tt := range []struct {
		name   string
		digest []byte
		url    string
		want   int64
	}{
		{"another URL's open original", shared.Digest, "http://example.com/new", ga},
		{"the duplicate finds the original", shared.Digest, b, ga},
		{"not the URL itself, nor a duplicate", shared.Digest, a, 0},
		{"closed generation is no original", gone.Digest, "http://example.com/new", 0},
		{"open generation after a change, the earliest", current.Digest, "http://example.com/new", gc},
		{"the earliest of another URL", current.Digest, c, gd},
		{"noindex page is no original", hidden.Digest, "http://example.com/new", 0},
		{"unknown digest", TextPile("never seen").Digest, "http://example.com/new", 0},
		{"no digest", nil, "http://example.com/new", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.FindOriginal(t.Context(), tt.digest, tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("FindOriginal = %d, want %d", got, tt.want)
			}
		})
	}

	t.Run("original closed: its copy takes over", func(t *testing.T) {
		apply(t, s, SummaryUpdate(a, "c7", 200, crawl.GenerationReplace, ga, TextGen(a, 200, TextPile("a moved on"), "A2")))
		got, err := s.FindOriginal(t.Context(), shared.Digest, "http://example.com/new")
		if err != nil {
			t.Fatal(err)
		}
		if gb := openGen(t, s, b).Generation.ID; got != gb {
			t.Errorf("FindOriginal = %d, want %d: the promoted copy", got, gb)
		}
	})
}

// duplicatesPromoted: an original with three copies, the earliest a
// noindex page. When the original changes, the earliest indexable copy
// becomes the original and the others are re-pointed to it; search
// finds the text again. When that one changes too, the next takes over.
func duplicatesPromoted(t *testing.T, s Metadata) {
	const a, n, b, c = "http://example.com/a", "http://example.com/n", "http://example.com/b", "http://example.com/c"
	seen(t, s, a, n, b, c)
	same := TextPile("beacon keepers handbook")
	apply(t, s, SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, TextGen(a, 100, same, "A")))
	ga := openGen(t, s, a).Generation.ID
	g := DupGen(n, 105, same, "N", ga)
	g.NoIndex = true
	apply(t, s, SummaryUpdate(n, "c2", 105, crawl.GenerationReplace, 0, g))
	for i, u := range []string{b, c} {
		apply(t, s, SummaryUpdate(u, fmt.Sprintf("c%d", 3+i), int64(110+i), crawl.GenerationReplace, 0, DupGen(u, int64(110+i), same, u, ga)))
	}
	for _, u := range []string{n, b, c} {
		if st := mustStatus(t, s, u); !st.ExactDuplicate || st.Generation.DuplicateOf != a {
			t.Errorf("%s before: exact-duplicate %v of %q, want of %s", u, st.ExactDuplicate, st.Generation.DuplicateOf, a)
		}
	}

	apply(t, s, SummaryUpdate(a, "c9", 200, crawl.GenerationReplace, ga, TextGen(a, 200, TextPile("moved on"), "A2")))
	gb := openGen(t, s, b).Generation
	if gb.MarkedDuplicate {
		t.Errorf("heir b still marked duplicate")
	}
	for _, u := range []string{n, c} {
		st := mustStatus(t, s, u)
		if !st.ExactDuplicate || !st.Generation.MarkedDuplicate || st.Generation.DuplicateOf != b {
			t.Errorf("%s: exact-duplicate %v, duplicate of %q; want re-pointed to %s", u, st.ExactDuplicate, st.Generation.DuplicateOf, b)
		}
	}
	if st := mustStatus(t, s, b); st.ExactDuplicate || st.Status != crawl.StatusComplete {
		t.Errorf("heir's status: exact-duplicate %v, status %q", st.ExactDuplicate, st.Status)
	}
	hits, err := s.Search(t.Context(), "beacon", 10)
	if err != nil || len(hits) != 1 || hits[0].URL != b {
		t.Errorf("search after promotion: %+v (%v), want b only", hits, err)
	}
	if got, err := s.FindOriginal(t.Context(), same.Digest, "http://example.com/new"); err != nil || got != gb.ID {
		t.Errorf("FindOriginal = %d, %v; want the heir %d", got, err, gb.ID)
	}

	// The heir changes too: c (indexable) takes over, n follows.
	apply(t, s, SummaryUpdate(b, "c10", 300, crawl.GenerationReplace, gb.ID, TextGen(b, 300, TextPile("b moved on"), "B2")))
	gc := openGen(t, s, c).Generation
	if gc.MarkedDuplicate {
		t.Errorf("second heir c still marked duplicate")
	}
	if st := mustStatus(t, s, n); !st.ExactDuplicate || st.Generation.DuplicateOf != c {
		t.Errorf("n: exact-duplicate %v, duplicate of %q; want re-pointed to %s", st.ExactDuplicate, st.Generation.DuplicateOf, c)
	}
	if got, err := s.FindOriginal(t.Context(), same.Digest, "http://example.com/new"); err != nil || got != gc.ID {
		t.Errorf("FindOriginal = %d, %v; want the second heir %d", got, err, gc.ID)
	}
}
