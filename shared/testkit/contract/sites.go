package contract

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// sites: a site (seed 001) is written whole and read back; its URLs
// follow its state (held, due again); the crawl's writes count its URLs,
// resources and errors and suspend it at MaxErrors; its periodic recrawl
// starts once at its RecrawlDate.
func sites(t *testing.T, open Opener) {
	run(t, []testCase{
		{"RoundTrip", func(t *testing.T) { siteRoundTrip(t, open(t)) }},
		{"StateHoldsURLs", func(t *testing.T) { siteHolds(t, open(t)) }},
		{"Counters", func(t *testing.T) { siteCounters(t, open(t)) }},
		{"Recrawl", func(t *testing.T) { siteRecrawl(t, open(t)) }},
		{"AdaptiveRecrawl", func(t *testing.T) { adaptiveRecrawl(t, open(t)) }},
	})
}

// adaptiveRecrawl: each revisit's summary folds into the URL's MRate
// whether its content changed, once, and moves its due date
// (crawl/revisit.go); a first visit is no observation, nor is a 304's
// summary (the fetch observed it).
func adaptiveRecrawl(t *testing.T, s Metadata) {
	const u = "http://example.com/news"
	const every = int64(3600)
	putNew(t, s, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlFirst,
		LastCrawlTime: ptr(int64(100))})
	apply(t, s, SummaryUpdate(u, "v1", 100, crawl.GenerationReplace, 0, TextGen(u, 100, TextPile("edition one"), "News")))
	revisit := func(at int64) {
		t.Helper()
		c := mustGet(t, s, u)
		c.State, c.LastCrawlTime, c.RecrawlEvery = crawl.StateDue, ptr(at), every
		c.DueAt = crawl.NextVisit(at, time.Duration(every)*time.Second, c.MRate, c.MRateCounter)
		if err := s.PutCandidate(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string, at int64, seen ...bool) {
		t.Helper()
		m, n := 0.0, int64(0)
		for _, changed := range seen {
			m, n = crawl.ObserveChange(m, n, changed)
		}
		c := mustGet(t, s, u)
		if c.MRate != m || c.MRateCounter != n || c.DueAt != crawl.NextVisit(at, time.Duration(every)*time.Second, m, n) {
			t.Errorf("%s: MRate %.3f over %d, due %d; want %.3f over %d, due %d", when, c.MRate, c.MRateCounter, c.DueAt,
				m, n, crawl.NextVisit(at, time.Duration(every)*time.Second, m, n))
		}
	}
	if c := mustGet(t, s, u); c.MRateCounter != 0 {
		t.Errorf("a first visit counted as an observation: %+v", c)
	}
	revisit(200)
	apply(t, s, SummaryUpdate(u, "v2", 200, crawl.GenerationExtend, openGen(t, s, u).Generation.ID, nil))
	check("unchanged", 200, false)
	revisit(300)
	su := SummaryUpdate(u, "v3", 300, crawl.GenerationReplace, openGen(t, s, u).Generation.ID, TextGen(u, 300, TextPile("edition two"), "News"))
	apply(t, s, su)
	check("changed", 300, false, true)
	if apply(t, s, su) {
		t.Error("the same summary applied twice")
	}
	check("redelivered", 300, false, true)
	// A 304 is observed by the fetch stage, with the crawl's candidate
	// write (crawl.ObservedAtFetch); its summary leaves the rate alone.
	revisit(400)
	su = SummaryUpdate(u, "v4", 400, crawl.GenerationExtend, openGen(t, s, u).Generation.ID, nil)
	su.Crawl.ExitCode = crawl.ExitUnchanged
	apply(t, s, su)
	check("a 304", 400, false, true)
}

func docsSite() crawl.Site {
	return crawl.Site{ID: "docs", Roots: []string{"http://example.com/docs/", "http://example.com/api/"}, State: crawl.SiteActive,
		Priority: 3, MaxURLs: 100, MaxResources: 90, MaxErrors: 5, MaxResourceSize: 4096, MaxURLsFromPage: 30,
		RequestDelay: 1500, HTTPTimeout: 2000, RecrawlPeriod: 60, URLType: crawl.URLSingle, CDate: 10, UDate: 10,
		Filters: []crawl.SiteFilter{{Pattern: `\.pdf$`, Type: crawl.FilterExclude}, {Pattern: `/img/`, Type: crawl.FilterInclude, Mode: crawl.FilterMedia}}}
}

func putSite(t *testing.T, s Metadata, site crawl.Site, create bool) {
	t.Helper()
	if err := s.PutSite(t.Context(), site, create); err != nil {
		t.Fatalf("put site %s: %v", site.ID, err)
	}
}

func mustSite(t *testing.T, s Metadata, id string) crawl.Site {
	t.Helper()
	site, err := s.GetSite(t.Context(), id)
	if err != nil {
		t.Fatalf("get site %s: %v", id, err)
	}
	return site
}

func siteRoundTrip(t *testing.T, s Metadata) {
	want := docsSite()
	putSite(t, s, want, true)
	got := mustSite(t, s, "docs")
	got.NewURLs, got.Contents = 0, 0 // counted by the SQLite store only
	if !reflect.DeepEqual(got, want) {
		t.Errorf("site read back\n got %+v\nwant %+v", got, want)
	}
	if err := s.PutSite(t.Context(), want, true); !errors.Is(err, crawl.ErrConflict) {
		t.Errorf("adding it again: %v, want ErrConflict", err)
	}
	other := want
	other.ID = "nosuch"
	if err := s.PutSite(t.Context(), other, false); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("changing a site that is not there: %v, want ErrNotFound", err)
	}
	if _, err := s.GetSite(t.Context(), "nosuch"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("GetSite(nosuch) = %v, want ErrNotFound", err)
	}
	changed := want
	changed.Roots, changed.Filters, changed.State, changed.StateReason = []string{"http://example.com/"}, nil, crawl.SiteSuspended, "by hand"
	putSite(t, s, changed, false)
	all, err := s.Sites(t.Context())
	if err != nil || len(all) != 1 || !reflect.DeepEqual(all[0].Roots, changed.Roots) || len(all[0].Filters) != 0 ||
		all[0].State != crawl.SiteSuspended || all[0].StateReason != "by hand" {
		t.Errorf("Sites after a change = %+v, %v", all, err)
	}
}

func siteHolds(t *testing.T, s Metadata) {
	site := docsSite()
	putSite(t, s, site, true)
	const (
		seedURL = "http://example.com/docs/"
		linked  = "http://example.com/docs/a"
		queued  = "http://example.com/docs/b"
		elseURL = "http://example.com/docs/other-site"
	)
	in := func(u, parent string, st crawl.CandidateState, siteID string) {
		c := dueCandidate(u, 0, 5)
		c.Parent, c.State, c.SiteID = parent, st, siteID
		if st == crawl.StateQueued {
			c.CrawlUUID, c.QueuedAt = "crawl-"+u, 6
		}
		putNew(t, s, c)
	}
	in(seedURL, "", crawl.StateDue, "docs")
	in(linked, seedURL, crawl.StateDue, "docs")
	in(queued, seedURL, crawl.StateQueued, "docs")
	in(elseURL, seedURL, crawl.StateDue, "another")
	states := func(when string, want map[string]crawl.CandidateState) {
		t.Helper()
		for u, st := range want {
			if c := mustGet(t, s, u); c.State != st {
				t.Errorf("%s: %s is %s, want %s", when, u, c.State, st)
			}
		}
	}
	site.State = crawl.SiteDisabled
	putSite(t, s, site, false)
	states("disabled", map[string]crawl.CandidateState{seedURL: crawl.StateHeld, linked: crawl.StateHeld, queued: crawl.StateHeld,
		elseURL: crawl.StateDue})
	if c := mustGet(t, s, queued); c.CrawlUUID != "" {
		t.Errorf("a held URL keeps the crawl it was released as (%s): its fetch task would not be dropped", c.CrawlUUID)
	}
	if due, err := s.DueCandidates(t.Context(), 100, 10); err != nil || !reflect.DeepEqual(urlsOf(due), []string{elseURL}) {
		t.Errorf("due while disabled: %v, %v; want only the other site's", urlsOf(due), err)
	}
	site.State = crawl.SiteSuspended
	putSite(t, s, site, false)
	states("suspended", map[string]crawl.CandidateState{seedURL: crawl.StateDue, linked: crawl.StateHeld, queued: crawl.StateHeld})
	site.State = crawl.SiteActive
	putSite(t, s, site, false)
	states("enabled", map[string]crawl.CandidateState{seedURL: crawl.StateDue, linked: crawl.StateDue, queued: crawl.StateDue})
	if c := mustGet(t, s, linked); c.DueAt != 5 {
		t.Errorf("due again at %d, want its due time 5", c.DueAt)
	}
}

func siteCounters(t *testing.T, s Metadata) {
	registerAgent(t, s)
	site := docsSite()
	site.MaxErrors = 1
	putSite(t, s, site, true)
	base := "http://example.com/docs/"
	for _, c := range []crawl.Candidate{
		{URL: base + "filtered", Host: "example.com", State: crawl.StateFiltered, CrawlType: crawl.CrawlFirst, SiteID: "docs",
			LastCrawlExitCode: ptr(crawl.ExitExcluded)},
		{URL: base + "found", Host: "example.com", State: crawl.StateDue, CrawlType: crawl.CrawlFirst, SiteID: "docs", Parent: base},
	} {
		putNew(t, s, c)
	}
	if got := mustSite(t, s, "docs").CollectedURLs; got != 1 {
		t.Errorf("collected %d URLs, want 1 (a filtered one is not collected)", got)
	}
	f := mustGet(t, s, base+"filtered")
	f.State, f.LastCrawlExitCode = crawl.StateDue, nil
	if err := s.PutCandidate(t.Context(), f); err != nil {
		t.Fatal(err)
	}
	if got := mustSite(t, s, "docs").CollectedURLs; got != 2 {
		t.Errorf("collected %d URLs after a filtered one was admitted, want 2", got)
	}

	ok := CompleteCrawl(base+"ok", "site-crawl-1")
	c := queuedCandidate(t, s, ok.Log.URL, ok.Log.CrawlUUID)
	c.SiteID = "docs"
	next := CrawledAs(c, ok)
	if fresh, err := s.RecordCrawl(t.Context(), ok, &next); err != nil || !fresh {
		t.Fatalf("record crawl: %v, %v", fresh, err)
	}
	got := mustSite(t, s, "docs")
	if got.Resources != 1 || got.Size != *ok.File.FileSize || got.Errors != 0 || got.TcDate != ok.Log.TimeStarted || got.State != crawl.SiteActive {
		t.Errorf("after a complete crawl: %d resources, %d bytes, %d errors, touched %d, %s", got.Resources, got.Size, got.Errors,
			got.TcDate, got.State)
	}
	// A crawl recorded alone (its candidate moved on to a newer one)
	// was a request too: it counts on the URL's site.
	alone := CompleteCrawl(base+"ok", "site-crawl-alone")
	if fresh, err := s.RecordCrawl(t.Context(), alone, nil); err != nil || !fresh {
		t.Fatalf("record crawl alone: %v, %v", fresh, err)
	}
	if got = mustSite(t, s, "docs"); got.Resources != 2 || got.Size != *ok.File.FileSize+*alone.File.FileSize {
		t.Errorf("after a crawl recorded alone: %d resources, %d bytes; want 2 and %d", got.Resources, got.Size,
			*ok.File.FileSize+*alone.File.FileSize)
	}
	bad := FailedCrawl(base+"bad", "site-crawl-2")
	c = queuedCandidate(t, s, bad.Log.URL, bad.Log.CrawlUUID)
	c.SiteID = "docs"
	next = CrawledAs(c, bad)
	if fresh, err := s.RecordCrawl(t.Context(), bad, &next); err != nil || !fresh {
		t.Fatalf("record crawl: %v, %v", fresh, err)
	}
	got = mustSite(t, s, "docs")
	if got.Errors != 1 || got.State != crawl.SiteSuspended || !strings.Contains(got.StateReason, "max_errors 1") {
		t.Errorf("after a failed crawl at max_errors 1: %d errors, %s (%q); want suspended, saying why", got.Errors, got.State, got.StateReason)
	}
	if c := mustGet(t, s, base+"found"); c.State != crawl.StateHeld {
		t.Errorf("a link found in a page of the suspended site is %s, want held", c.State)
	}
}

func siteRecrawl(t *testing.T, s Metadata) {
	site := docsSite()
	site.RecrawlPeriod, site.CDate = 1, 0
	putSite(t, s, site, true)
	root := putNew(t, s, crawl.Candidate{URL: site.Roots[0], Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlFirst,
		SiteID: "docs", LastCrawlTime: ptr(int64(5))})
	if n, err := s.StartSiteRecrawls(t.Context(), 30); err != nil || n != 0 {
		t.Errorf("before its date: %d started, %v", n, err)
	}
	if n, err := s.StartSiteRecrawls(t.Context(), 120); err != nil || n != 1 {
		t.Fatalf("at its date: %d started, %v", n, err)
	}
	if c := mustGet(t, s, root.URL); c.State != crawl.StateDue || c.DueAt != 120 || c.CrawlType != crawl.CrawlRecrawl {
		t.Errorf("its root: %s at %d as %v, want due now as a recrawl", c.State, c.DueAt, c.CrawlType)
	}
	got := mustSite(t, s, "docs")
	if got.Iterations != 1 || got.RecrawlDate == nil || *got.RecrawlDate != 180 {
		t.Errorf("after its recrawl started: %d iterations, next %v", got.Iterations, got.RecrawlDate)
	}
	if n, err := s.StartSiteRecrawls(t.Context(), 150); err != nil || n != 0 {
		t.Errorf("again before its next date: %d started, %v", n, err)
	}
}
