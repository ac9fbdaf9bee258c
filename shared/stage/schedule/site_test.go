package schedule

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

func siteEvent(op crawl.SiteOp, id string, f func(*crawl.SiteEvent)) crawl.SiteEvent {
	ev := crawl.SiteEvent{Type: crawl.SiteEventType, Op: op, ID: id}
	if f != nil {
		f(&ev)
	}
	return ev
}

// sitesScheduler is a scheduler over a fresh database that uses its sites.
func sitesScheduler(t *testing.T) (*Scheduler, *sqlite.DB, *recSender) {
	t.Helper()
	db := openDB(t)
	s, snd := newScheduler(t, db, noLimit())
	if err := s.UseSites(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	return s, db, snd
}

func manage(t *testing.T, s *Scheduler, ev crawl.SiteEvent) crawl.Site {
	t.Helper()
	site, err := s.ManageSite(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s site %s: %v", ev.Op, ev.ID, err)
	}
	return site
}

// TestSiteAdmission: a site's roots are its scope, and its filters,
// limits, URL type and priority decide its URLs' admission.
func TestSiteAdmission(t *testing.T) {
	s, db, _ := sitesScheduler(t)
	docs := manage(t, s, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) {
		ev.Roots = []string{"http://example.com/docs/index.html"}
		ev.Priority, ev.MaxURLs = ptr(7), ptr(int64(4))
		ev.Filters = &[]crawl.SiteFilter{{Pattern: `\.pdf$`, Type: crawl.FilterExclude}}
	}))
	if docs.CollectedURLs != 1 || docs.NewURLs != 1 {
		t.Errorf("a new site counts %d URLs (%d new), want its root: 1", docs.CollectedURLs, docs.NewURLs)
	}
	manage(t, s, siteEvent(crawl.SiteAdd, "single", func(ev *crawl.SiteEvent) {
		ev.Roots, ev.URLType = []string{"http://single.example/"}, ptr("single")
	}))
	manage(t, s, siteEvent(crawl.SiteAdd, "all", func(ev *crawl.SiteEvent) {
		ev.Roots, ev.URLType = []string{"http://all.example/"}, ptr("collect-all")
	}))
	from := func(parent, u string) crawl.EnqueueEvent { return crawl.EnqueueEvent{URL: u, Parent: parent, Hops: 1} }
	root := "http://example.com/docs/index.html"
	for _, tt := range []struct {
		ev   crawl.EnqueueEvent
		out  Outcome
		exit crawl.ExitCode // of a filtered candidate
		site string
	}{
		{from(root, "http://example.com/docs/a.html"), Admitted, 0, "docs"},
		{from(root, "http://example.com/docs/a.pdf"), Filtered, crawl.ExitExcluded, "docs"},
		{from(root, "http://example.com/blog/"), Filtered, crawl.ExitOutOfScope, ""}, // the site's root is not its host
		{from(root, "http://example.com/docs/b.html"), Admitted, 0, "docs"},
		{from(root, "http://example.com/docs/c.html"), Admitted, 0, "docs"},
		{from(root, "http://example.com/docs/d.html"), Filtered, crawl.ExitTooManyURLs, "docs"}, // max_urls 4
		{from("http://single.example/", "http://single.example/x"), Filtered, crawl.ExitExcluded, "single"},
		{from("http://all.example/", "http://far.example/"), Admitted, 0, ""},
		{from("http://far.example/", "http://farther.example/"), Filtered, crawl.ExitOutOfScope, ""}, // one hop only
	} {
		out, err := s.Admit(context.Background(), tt.ev)
		if err != nil || out != tt.out {
			t.Errorf("admit %s: %v (%v), want %v", tt.ev.URL, out, err, tt.out)
			continue
		}
		c := mustGet(t, db, tt.ev.URL)
		if c.SiteID != tt.site {
			t.Errorf("%s: site %q, want %q", tt.ev.URL, c.SiteID, tt.site)
		}
		if tt.out == Filtered && (c.LastCrawlExitCode == nil || *c.LastCrawlExitCode != tt.exit) {
			t.Errorf("%s: exit %s, want %v", tt.ev.URL, fmtExit(c.LastCrawlExitCode), tt.exit)
		}
		if tt.site == "docs" && tt.out == Admitted && c.Priority != 7 {
			t.Errorf("%s: priority %d, want the site's 7", tt.ev.URL, c.Priority)
		}
	}
	got, err := db.GetSite(context.Background(), "docs")
	if err != nil || got.CollectedURLs != 4 || got.NewURLs != 4 {
		t.Errorf("site docs: %d URLs collected, %d new (%v), want 4 and 4", got.CollectedURLs, got.NewURLs, err)
	}
}

// TestSiteDisableHoldsItsURLs: a disabled site's URLs, due or released,
// are held and released by nothing; enabled, every one is due again.
func TestSiteDisableHoldsItsURLs(t *testing.T) {
	ctx := context.Background()
	s, db, snd := sitesScheduler(t)
	manage(t, s, siteEvent(crawl.SiteAdd, "", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.com/"} }))
	admitAll(t, s, link("http://example.com/a", 1), link("http://example.com/b", 1), seed(other))
	if n, err := s.Release(ctx, 1); err != nil || n != 1 {
		t.Fatalf("release: %d, %v", n, err)
	}
	released := snd.tasks(t)[0]
	manage(t, s, siteEvent(crawl.SiteDisable, "example.com", nil))
	admitAll(t, s, link("http://example.com/c", 1))
	for _, u := range []string{home, "http://example.com/a", "http://example.com/b", "http://example.com/c"} {
		if c := mustGet(t, db, u); c.State != crawl.StateHeld {
			t.Errorf("%s: state %s while its site is disabled, want held", u, c.State)
		}
	}
	if c := mustGet(t, db, released.URL); c.CrawlUUID == released.CrawlUUID {
		t.Errorf("the released %s keeps its crawl %s: its fetch task would not be dropped", released.URL, c.CrawlUUID)
	}
	n, err := s.Release(ctx, 10)
	if err != nil || n != 1 || snd.tasks(t)[1].URL != other {
		t.Errorf("release while disabled: %d, %v, want only the URL of no site", n, err)
	}
	manage(t, s, siteEvent(crawl.SiteEnable, "example.com", nil))
	if n, err := s.Release(ctx, 10); err != nil || n != 4 {
		t.Errorf("release after enable: %d, %v, want the site's 4 URLs", n, err)
	}
}

// TestSiteSuspended: a suspended site's URLs found in pages wait; those a
// user enqueued are crawled.
func TestSiteSuspended(t *testing.T) {
	ctx := context.Background()
	s, db, _ := sitesScheduler(t)
	manage(t, s, siteEvent(crawl.SiteAdd, "", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.com/"} }))
	admitAll(t, s, link("http://example.com/a", 1))
	manage(t, s, siteEvent(crawl.SiteSet, "example.com", func(ev *crawl.SiteEvent) { ev.State = ptr("suspended") }))
	admitAll(t, s, link("http://example.com/b", 1), crawl.EnqueueEvent{URL: "http://example.com/asked", EnqueueType: crawl.EnqueueForced})
	for u, want := range map[string]crawl.CandidateState{
		home: crawl.StateDue, "http://example.com/asked": crawl.StateDue,
		"http://example.com/a": crawl.StateHeld, "http://example.com/b": crawl.StateHeld,
	} {
		if c := mustGet(t, db, u); c.State != want {
			t.Errorf("%s: state %s, want %s", u, c.State, want)
		}
	}
	if n, err := s.Release(ctx, 10); err != nil || n != 2 {
		t.Errorf("release while suspended: %d, %v, want the 2 URLs enqueued by hand", n, err)
	}
}

func TestManageSiteRefusals(t *testing.T) {
	s, db, _ := sitesScheduler(t)
	manage(t, s, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.com/"} }))
	for _, ev := range []crawl.SiteEvent{
		siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.org/"} }),
		siteEvent(crawl.SiteSet, "nosuch", func(ev *crawl.SiteEvent) { ev.Priority = ptr(1) }),
		siteEvent(crawl.SiteAdd, "bad", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://exa mple.com/"} }),
		siteEvent(crawl.SiteAdd, "long", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://" + strings.Repeat("a", 254) + "/"} }),
		siteEvent(crawl.SiteEnable, "", nil),
		siteEvent(crawl.SiteAdd, "again", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.com/"} }),
		siteEvent(crawl.SiteAdd, "again", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.com/index.html"} }),
	} {
		if _, err := s.ManageSite(context.Background(), ev); crawl.KindOf(err) != crawl.KindInvalid {
			t.Errorf("%s %s: %v, want an invalid-input error", ev.Op, ev.ID, err)
		}
	}
	for _, id := range []string{"bad", "long", "again"} {
		if site, err := db.GetSite(context.Background(), id); !errors.Is(err, crawl.ErrNotFound) {
			t.Errorf("site %s refused, and stored: %+v, %v", id, site, err)
		}
	}
	// A nested root is another prefix: allowed, the longer one winning.
	// A site set with its own roots again is not refused by them.
	manage(t, s, siteEvent(crawl.SiteAdd, "nested", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.com/docs/"} }))
	manage(t, s, siteEvent(crawl.SiteSet, "docs", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.com/", "http://example.net/"} }))
	if _, err := s.ManageSite(context.Background(), siteEvent(crawl.SiteSet, "nested", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.net/a"} })); crawl.KindOf(err) != crawl.KindInvalid {
		t.Errorf("set to another site's root prefix: %v, want an invalid-input error", err)
	}
	if _, err := s.ManageSite(context.Background(), siteEvent(crawl.SiteSet, "nosuch", nil)); errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("an unknown site is reported as a store miss, not as the user's mistake: %v", err)
	}
}

func TestSiteID(t *testing.T) {
	long := "https://a-very-long-host-name.example.org/"
	sum := md5.Sum([]byte(long))
	for root, want := range map[string]string{
		"https://docs.python.org/3/": "docs.python.org",
		"http://127.0.0.1:8080/":     "127.0.0.1_8080",
		long:                         hex.EncodeToString(sum[:]), // the host is longer than an ID may be
	} {
		if got := SiteID(root); got != want {
			t.Errorf("SiteID(%q) = %q, want %q", root, got, want)
		}
	}
}

// TestReleaseCarriesSiteSettings: a released URL's fetch task carries
// its site's delay, timeout, body limit and links per page.
func TestReleaseCarriesSiteSettings(t *testing.T) {
	s, _, snd := sitesScheduler(t)
	manage(t, s, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) {
		ev.Roots = []string{"http://example.com/"}
		ev.RequestDelayMS, ev.HTTPTimeoutMS = ptr(int64(1500)), ptr(int64(2000))
		ev.MaxResourceSize, ev.MaxURLsFromPage = ptr(int64(4096)), ptr(int64(30))
	}))
	admitAll(t, s, seed(other))
	if n, err := s.Release(context.Background(), 10); err != nil || n != 2 {
		t.Fatalf("release: %d, %v", n, err)
	}
	for _, ft := range snd.tasks(t) {
		want := crawl.FetchTask{URL: ft.URL, CrawlUUID: ft.CrawlUUID, CrawlType: ft.CrawlType, Hops: ft.Hops}
		if ft.URL == home {
			want.DelayMS, want.TimeoutMS, want.MaxBytes, want.MaxLinks = 1500, 2000, 4096, 30
		}
		if ft != want {
			t.Errorf("task %+v, want %+v", ft, want)
		}
	}
}

// TestRecrawlSites: at its RecrawlDate a site's roots are due again, its
// iteration counted and its next date a period on; an inactive site's
// are not.
func TestRecrawlSites(t *testing.T) {
	ctx := context.Background()
	s, db, _ := sitesScheduler(t)
	for _, id := range []string{"periodic", "paused"} {
		manage(t, s, siteEvent(crawl.SiteAdd, id, func(ev *crawl.SiteEvent) {
			ev.Roots, ev.RecrawlPeriodM = []string{"http://" + id + ".example/"}, ptr(int64(60))
		}))
		setState(t, db, "http://"+id+".example/", crawl.StateCrawled, 0)
	}
	manage(t, s, siteEvent(crawl.SiteSet, "paused", func(ev *crawl.SiteEvent) { ev.State = ptr("suspended") }))
	if n, err := s.RecrawlSites(ctx); err != nil || n != 0 {
		t.Fatalf("before the period: %d sites recrawled (%v)", n, err)
	}
	later := testNow.Add(61 * time.Minute)
	s.now = func() time.Time { return later }
	if n, err := s.RecrawlSites(ctx); err != nil || n != 1 {
		t.Fatalf("after the period: %d sites recrawled (%v), want 1", n, err)
	}
	if c := mustGet(t, db, "http://periodic.example/"); c.State != crawl.StateDue || c.DueAt != later.Unix() || c.CrawlType != crawl.CrawlRecrawl {
		t.Errorf("root of the recrawled site: %s due %d as %v, want due now as a recrawl", c.State, c.DueAt, c.CrawlType)
	}
	if c := mustGet(t, db, "http://paused.example/"); c.State != crawl.StateCrawled {
		t.Errorf("root of the suspended site: %s, want left crawled", c.State)
	}
	got, err := db.GetSite(ctx, "periodic")
	if err != nil || got.Iterations != 1 || got.RecrawlDate == nil || *got.RecrawlDate != later.Add(time.Hour).Unix() {
		t.Errorf("site after its recrawl started: %d iterations, next %v (%v)", got.Iterations, got.RecrawlDate, err)
	}
	if n, _ := s.RecrawlSites(ctx); n != 0 {
		t.Errorf("started again %d times before its next date", n)
	}
}

// TestSitemapHints: a sitemap's <lastmod> newer than a URL's last crawl
// makes it due now; an older one changes nothing; <changefreq> is a new
// URL's prior change rate.
func TestSitemapHints(t *testing.T) {
	ctx := context.Background()
	s, db, _ := sitesScheduler(t)
	admitAll(t, s, seed(home), link("http://example.com/a", 1))
	setState(t, db, "http://example.com/a", crawl.StateCrawled, 0) // crawled an hour before testNow
	crawledAt := *mustGet(t, db, "http://example.com/a").LastCrawlTime
	fromSitemap := func(u string, lastmod int64, freq string) crawl.EnqueueEvent {
		return crawl.EnqueueEvent{URL: u, Parent: "http://example.com/sitemap.xml", Hops: 1, LastMod: lastmod, ChangeFreq: freq}
	}
	for _, tt := range []struct {
		ev   crawl.EnqueueEvent
		out  Outcome
		want crawl.CandidateState
	}{
		{fromSitemap("http://example.com/a", crawledAt-60, ""), Deduped, crawl.StateCrawled},
		{fromSitemap("http://example.com/a", crawledAt+60, ""), Requeued, crawl.StateDue},
		{fromSitemap("http://example.com/b", 0, "daily"), Admitted, crawl.StateDue},
	} {
		out, err := s.Admit(ctx, tt.ev)
		if err != nil || out != tt.out {
			t.Errorf("%s lastmod %d: %v (%v), want %v", tt.ev.URL, tt.ev.LastMod, out, err, tt.out)
		}
		if c := mustGet(t, db, tt.ev.URL); c.State != tt.want {
			t.Errorf("%s: %s, want %s", tt.ev.URL, c.State, tt.want)
		}
	}
	if c := mustGet(t, db, "http://example.com/a"); c.DueAt != testNow.Unix() || c.CrawlType != crawl.CrawlRecrawl {
		t.Errorf("modified URL due at %d as %v, want now as a recrawl", c.DueAt, c.CrawlType)
	}
	if c := mustGet(t, db, "http://example.com/b"); c.MRate != crawl.ChangeFreqPrior("daily") || c.MRateCounter != 0 {
		t.Errorf("new URL of changefreq daily: MRate %.3f over %d", c.MRate, c.MRateCounter)
	}
	if _, err := s.Admit(ctx, fromSitemap("http://example.com/c", 0, "fortnightly")); crawl.KindOf(err) != crawl.KindInvalid {
		t.Errorf("changefreq fortnightly: %v, want invalid", err)
	}
}

// TestSiteClaimsKnownURLs: a URL known before its site was added becomes
// the site's when it is released, and its fetch task carries the site's
// settings; a site disabled meanwhile holds it instead.
func TestSiteClaimsKnownURLs(t *testing.T) {
	ctx := context.Background()
	s, db, snd := sitesScheduler(t)
	admitAll(t, s, seed(home), seed("http://example.com/later"))
	manage(t, s, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) {
		ev.Roots, ev.RequestDelayMS = []string{"http://example.com/"}, ptr(int64(700))
	}))
	if c := mustGet(t, db, home); c.SiteID != "" {
		t.Fatalf("claimed at once: %+v", c)
	}
	if n, err := s.Release(ctx, 1); err != nil || n != 1 {
		t.Fatalf("release: %d, %v", n, err)
	}
	ft := snd.tasks(t)[0]
	if c := mustGet(t, db, ft.URL); c.SiteID != "docs" || ft.DelayMS != 700 {
		t.Errorf("released: site %q, task delay %d ms; want the site's", c.SiteID, ft.DelayMS)
	}
	// Disabled now: the other URL, not yet the site's, is not among the
	// URLs the store holds; the release claims and holds it instead of
	// sending it.
	site, err := db.GetSite(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	site.State = crawl.SiteDisabled
	if err := db.PutSite(ctx, site, false); err != nil {
		t.Fatal(err)
	}
	if err := s.RefreshSites(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Release(ctx, 10); err != nil || n != 0 {
		t.Errorf("release of a disabled site's URL: %d sent, %v", n, err)
	}
	if c := mustGet(t, db, "http://example.com/later"); c.State != crawl.StateHeld || c.SiteID != "docs" {
		t.Errorf("the other URL: %s of site %q, want held, the site's", c.State, c.SiteID)
	}
}

// TestSiteClaimsURLsItHolds: a URL known before its site was added, due
// again while the site is disabled (a forced enqueue, a sitemap's
// lastmod), is held as the site's, so that enabling the site makes it
// due again. (It used to be held for no site, for good.)
func TestSiteClaimsURLsItHolds(t *testing.T) {
	ctx := context.Background()
	s, db, snd := sitesScheduler(t)
	const forced, modified = "http://example.com/forced", "http://example.com/modified"
	admitAll(t, s, seed(home), link(forced, 1), link(modified, 1))
	for _, u := range []string{forced, modified} {
		setState(t, db, u, crawl.StateCrawled, 0)
	}
	manage(t, s, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://example.com/"} }))
	manage(t, s, siteEvent(crawl.SiteDisable, "docs", nil))
	crawledAt := *mustGet(t, db, modified).LastCrawlTime
	admitAll(t, s, crawl.EnqueueEvent{URL: forced, EnqueueType: crawl.EnqueueForced},
		crawl.EnqueueEvent{URL: modified, Parent: "http://example.com/sitemap.xml", Hops: 1, LastMod: crawledAt + 60})
	for _, u := range []string{forced, modified} {
		if c := mustGet(t, db, u); c.State != crawl.StateHeld || c.SiteID != "docs" {
			t.Errorf("%s while its site is disabled: %s of site %q, want held, the site's", u, c.State, c.SiteID)
		}
	}
	manage(t, s, siteEvent(crawl.SiteEnable, "docs", nil))
	if _, err := s.Release(ctx, 10); err != nil {
		t.Fatal(err)
	}
	sent := map[string]bool{}
	for _, ft := range snd.tasks(t) {
		sent[ft.URL] = true
	}
	for _, u := range []string{forced, modified} {
		if !sent[u] {
			t.Errorf("%s not released after its site was enabled (state %s)", u, mustGet(t, db, u).State)
		}
	}
}

// TestSiteCountsURLsAdmittedAfterAll: a site's URL filtered once (too
// deep) and admitted when found closer to its root, or by a forced
// event, counts against the site's MaxURLs at once, as a new URL does.
func TestSiteCountsURLsAdmittedAfterAll(t *testing.T) {
	ctx := context.Background()
	s, db, _ := sitesScheduler(t)
	root := "http://example.com/docs/index.html"
	manage(t, s, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) {
		ev.Roots, ev.MaxURLs = []string{root}, ptr(int64(3))
	}))
	one := 1
	for _, tt := range []struct {
		ev  crawl.EnqueueEvent
		out Outcome
	}{
		{crawl.EnqueueEvent{URL: "http://example.com/docs/a.html", Parent: root, Hops: 2, MaxDepth: &one}, Filtered}, // too deep
		{crawl.EnqueueEvent{URL: "http://example.com/docs/a.html", Parent: root, Hops: 1}, Admitted},                 // the site's second
		{crawl.EnqueueEvent{URL: "http://example.com/docs/c.html", Parent: root, Hops: 2, MaxDepth: &one}, Filtered}, // too deep
		{crawl.EnqueueEvent{URL: "http://example.com/docs/c.html", EnqueueType: crawl.EnqueueForced}, Requeued},      // forced: its third
		{crawl.EnqueueEvent{URL: "http://example.com/docs/b.html", Parent: root, Hops: 1}, Filtered},                 // past max_urls 3
	} {
		if out, err := s.Admit(ctx, tt.ev); err != nil || out != tt.out {
			t.Errorf("admit %s at %d hops: %v (%v), want %v", tt.ev.URL, tt.ev.Hops, out, err, tt.out)
		}
	}
	if c := mustGet(t, db, "http://example.com/docs/b.html"); c.LastCrawlExitCode == nil || *c.LastCrawlExitCode != crawl.ExitTooManyURLs {
		t.Errorf("b.html: exit %s, want too-many-urls", fmtExit(c.LastCrawlExitCode))
	}
	if got, err := db.GetSite(ctx, "docs"); err != nil || got.CollectedURLs != 3 {
		t.Errorf("site docs: %d URLs collected (%v), want 3", got.CollectedURLs, err)
	}
}

// TestSiteAddedWhileRunning: a site added by another process (crawler
// site add while a crawl runs) is read when its root is released, before
// the next periodic refresh: the root goes with the site's settings, and
// the links found in it are the site's, not out of scope.
func TestSiteAddedWhileRunning(t *testing.T) {
	ctx := context.Background()
	running, db, snd := sitesScheduler(t) // its sites read before the site exists
	other, _ := newScheduler(t, db, noLimit())
	if err := other.UseSites(ctx, db); err != nil {
		t.Fatal(err)
	}
	root := "http://example.com/docs/"
	manage(t, other, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) {
		ev.Roots, ev.RequestDelayMS = []string{root}, ptr(int64(700))
	}))
	if n, err := running.Release(ctx, 10); err != nil || n != 1 {
		t.Fatalf("release: %d, %v; want the root", n, err)
	}
	if tasks := snd.tasks(t); len(tasks) != 1 || tasks[0].DelayMS != 700 {
		t.Errorf("fetch tasks %+v; want the root's, with the site's delay", tasks)
	}
	link := crawl.EnqueueEvent{URL: root + "page.html", Parent: root, Hops: 1}
	if out, err := running.Admit(ctx, link); err != nil || out != Admitted {
		t.Errorf("a link in the root: %v (%v), want admitted as the site's", out, err)
	}
	if c := mustGet(t, db, link.URL); c.SiteID != "docs" {
		t.Errorf("the link's site %q, want docs", c.SiteID)
	}
}

// TestSiteMaxURLsOverAPage: a page's links, admitted together (one
// event, decided before any is written), and pages admitted side by
// side, stop at the site's MaxURLs; the rest are recorded too-many-urls.
func TestSiteMaxURLsOverAPage(t *testing.T) {
	ctx := context.Background()
	s, db, _ := sitesScheduler(t)
	root := "http://example.com/docs/"
	manage(t, s, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) {
		ev.Roots, ev.MaxURLs = []string{root}, ptr(int64(10))
	}))
	page := func(p string, n int) crawl.EnqueueEvent {
		ev := crawl.EnqueueEvent{Parent: root, Hops: 1}
		for i := range n {
			ev.URLs = append(ev.URLs, fmt.Sprintf("%s%s-%d.html", root, p, i))
		}
		return ev
	}
	counts := map[Outcome]int{}
	var mu sync.Mutex
	tell := func(_ crawl.EnqueueEvent, out Outcome) { mu.Lock(); counts[out]++; mu.Unlock() }
	if err := s.AdmitEach(ctx, page("a", 5), tell); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, p := range []string{"b", "c", "d"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.AdmitEach(ctx, page(p, 5), tell); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if counts[Admitted] != 9 || counts[Filtered] != 11 {
		t.Errorf("outcomes %v; want 9 admitted (max_urls 10, the root one of them) and 11 filtered", counts)
	}
	if got, err := db.GetSite(ctx, "docs"); err != nil || got.CollectedURLs != 10 {
		t.Errorf("site docs: %d URLs collected (%v), want 10", got.CollectedURLs, err)
	}
}

// TestFiltersAtRelease: with Policy.FiltersAtRelease, a due URL of no
// site that the scheduler's filters now rule out (a run given --exclude
// or a smaller --max-depth after another admitted it) is recorded
// filtered when released, not fetched; a site's URL follows its site's
// filters (TestSiteFiltersOfALaterRun).
func TestFiltersAtRelease(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	before, _ := newScheduler(t, db, noLimit())
	if err := before.UseSites(ctx, db); err != nil {
		t.Fatal(err)
	}
	manage(t, before, siteEvent(crawl.SiteAdd, "docs", func(ev *crawl.SiteEvent) { ev.Roots = []string{"http://docs.example/"} }))
	admitAll(t, before, crawl.EnqueueEvent{URL: "http://example.com/"},
		link("http://example.com/trap/1", 1), link("http://example.com/a", 1), link("http://example.com/a/deep", 2),
		crawl.EnqueueEvent{URL: "http://docs.example/trap/2", Parent: "http://docs.example/", Hops: 1})
	p := noLimit()
	p.MaxDepth, p.Exclude, p.FiltersAtRelease = 1, []*regexp.Regexp{regexp.MustCompile(`/trap/`)}, true
	after, snd := newScheduler(t, db, p)
	if err := after.UseSites(ctx, db); err != nil {
		t.Fatal(err)
	}
	// A link to the trap found before the release: the scheduler reads
	// the URL due (and remembers it so).
	if out, err := after.Admit(ctx, link("http://example.com/trap/1", 1)); err != nil || out != Deduped {
		t.Fatalf("the trap URL found again: %v (%v), want deduped", out, err)
	}
	if _, err := after.Release(ctx, 100); err != nil {
		t.Fatal(err)
	}
	released := map[string]bool{}
	for _, task := range snd.tasks(t) {
		released[task.URL] = true
	}
	for _, tt := range []struct {
		url  string
		exit crawl.ExitCode // 0: released
	}{
		{"http://example.com/", 0},
		{"http://example.com/a", 0},
		{"http://example.com/trap/1", crawl.ExitExcluded},
		{"http://example.com/a/deep", crawl.ExitTooDeep},
		{"http://docs.example/", 0},
		{"http://docs.example/trap/2", 0}, // the site's: its own filters decide (TestSiteFiltersOfALaterRun)
	} {
		c := mustGet(t, db, tt.url)
		switch {
		case tt.exit == 0 && !released[tt.url]:
			t.Errorf("%s: not released (%s, exit %s)", tt.url, c.State, fmtExit(c.LastCrawlExitCode))
		case tt.exit != 0 && (released[tt.url] || c.State != crawl.StateFiltered || c.LastCrawlExitCode == nil || *c.LastCrawlExitCode != tt.exit):
			t.Errorf("%s: released %v, %s, exit %s; want filtered %v", tt.url, released[tt.url], c.State, fmtExit(c.LastCrawlExitCode), tt.exit)
		}
	}
	// The scheduler remembers the URL as filtered (knownURLs): a link to
	// it that its filters let through would be judged, not deduped as a
	// URL it saw due.
	if after.known.dedupes("http://example.com/trap/1", 1, false) {
		t.Error("the URL filtered at release is remembered as not filtered")
	}
}

// TestFiltersAtReleaseKeepTheLimit: URLs filtered at release do not use
// up a release's limit (a trap of many URLs is filtered at once), and a
// page crawled before keeps its recrawl whatever the run's filters say.
func TestFiltersAtReleaseKeepTheLimit(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	before, _ := newScheduler(t, db, noLimit())
	evs := []crawl.EnqueueEvent{{URL: "http://example.com/"}}
	for i := range 6 {
		evs = append(evs, link(fmt.Sprintf("http://example.com/trap/%d", i), 1))
	}
	evs = append(evs, link("http://example.com/z1", 1), link("http://example.com/z2", 1), link("http://example.com/trap/crawled", 1))
	admitAll(t, before, evs...)
	// One trap page was crawled by an earlier run and is due again.
	c := mustGet(t, db, "http://example.com/trap/crawled")
	at, code := testNow.Unix()-60, crawl.ExitComplete
	c.LastCrawlTime, c.LastCrawlExitCode = &at, &code
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatal(err)
	}
	p := noLimit()
	p.Exclude, p.FiltersAtRelease = []*regexp.Regexp{regexp.MustCompile(`/trap/`)}, true
	after, snd := newScheduler(t, db, p)
	if n, err := after.Release(ctx, 3); err != nil || n != 3 {
		t.Fatalf("released %d (%v), want 3 past the filtered trap", n, err)
	}
	if n, err := after.Release(ctx, 10); err != nil || n != 1 {
		t.Fatalf("released %d more (%v), want 1", n, err)
	}
	got := map[string]bool{}
	for _, task := range snd.tasks(t) {
		got[task.URL] = true
	}
	for _, u := range []string{"http://example.com/", "http://example.com/z1", "http://example.com/z2", "http://example.com/trap/crawled"} {
		if !got[u] {
			t.Errorf("%s not released; released %v", u, got)
		}
	}
	for i := range 6 {
		if c := mustGet(t, db, fmt.Sprintf("http://example.com/trap/%d", i)); c.State != crawl.StateFiltered {
			t.Errorf("trap %d: %s, want filtered", i, c.State)
		}
	}
}
