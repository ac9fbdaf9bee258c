package pipeline

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/schedule"
	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

// manageSite carries out a site event on a data directory, as `crawler
// site` does.
func manageSite(t *testing.T, dir string, ev crawl.SiteEvent) crawl.Site {
	t.Helper()
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	s := schedule.New(dd.DB, nil, schedule.Policy{MaxDepth: -1}, slog.New(slog.DiscardHandler))
	if err := s.UseSites(ctx, dd.DB); err != nil {
		t.Fatal(err)
	}
	ev.Type = crawl.SiteEventType
	site, err := s.ManageSite(ctx, ev)
	if err != nil {
		t.Fatalf("%s site: %v", ev.Op, err)
	}
	return site
}

// noSeeds is the test configuration of a run that crawls what is due of
// the data directory's sites.
func noSeeds(site *testsite.Site) Config {
	cfg := testConfig(site.URL + "/")
	cfg.Seeds = nil
	return cfg
}

// TestSiteDisabledThenEnabled: a disabled site is not crawled at all, and
// once enabled every page of it is fetched, each once: nothing was lost
// while it waited.
func TestSiteDisabledThenEnabled(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	dir := t.TempDir()
	s := manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteAdd, ID: "test", Roots: []string{site.URL + "/"}})
	if s.State != crawl.SiteActive || s.CollectedURLs != 1 {
		t.Fatalf("added site: %+v", s)
	}
	manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteDisable, ID: "test"})
	res := crawlSite(t, dir, noSeeds(site))
	if n := len(site.Requests()); n != 0 || res.Crawled != 0 {
		t.Fatalf("a disabled site got %d requests (%d crawls)", n, res.Crawled)
	}
	manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteEnable, ID: "test"})
	crawlSite(t, dir, noSeeds(site))
	counts := site.Counts()
	for _, p := range testsite.Ordinary {
		if counts[p] != 1 {
			t.Errorf("%s fetched %d times after the site was enabled, want once", p, counts[p])
		}
	}
	s = manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteSet, ID: "test"})
	if s.Resources < int64(len(testsite.Ordinary)) || s.Size == 0 || s.Errors == 0 || s.TcDate == 0 || s.NewURLs != 0 {
		t.Errorf("the site's counters after its crawl: %d resources, %d bytes, %d errors, touched %d, %d new URLs",
			s.Resources, s.Size, s.Errors, s.TcDate, s.NewURLs)
	}
}

// TestSiteMaxErrorsSuspends: a site whose crawl errors reach max_errors
// is suspended with the reason; its pages found meanwhile wait, and are
// crawled once it is enabled again.
func TestSiteMaxErrorsSuspends(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	dir := t.TempDir()
	manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteAdd, ID: "test", Roots: []string{site.URL + "/"}, MaxErrors: ptrTo(int64(1))})
	crawlSite(t, dir, noSeeds(site))
	s := manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteSet, ID: "test"})
	if s.State != crawl.SiteSuspended || !strings.Contains(s.StateReason, "max_errors 1") {
		t.Fatalf("after its first error the site is %s (%q), want suspended, saying why", s.State, s.StateReason)
	}
	manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteEnable, ID: "test"})
	// Enabled, it crawls on; a later error suspends it again, so enable
	// until nothing is left.
	for i := 0; i < 10; i++ {
		crawlSite(t, dir, noSeeds(site))
		if s = manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteSet, ID: "test"}); s.State == crawl.SiteActive {
			break
		}
		manageSite(t, dir, crawl.SiteEvent{Op: crawl.SiteEnable, ID: "test"})
	}
	counts := site.Counts()
	for _, p := range testsite.Ordinary {
		if counts[p] != 1 {
			t.Errorf("%s fetched %d times over the runs, want once", p, counts[p])
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
