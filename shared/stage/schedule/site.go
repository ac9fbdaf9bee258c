package schedule

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
)

// SiteStore is what managing sites (seed 001) needs of the metadata
// store.
type SiteStore interface {
	Sites(ctx context.Context) ([]crawl.Site, error)
	GetSite(ctx context.Context, id string) (crawl.Site, error)
	PutSite(ctx context.Context, s crawl.Site, create bool) error
	StartSiteRecrawls(ctx context.Context, now int64) (int, error)
}

// siteView is the scheduler's copy of the sites, read again by
// RefreshSites, and the URLs it admitted to each since: what MaxURLs is
// checked against between two reads.
type siteView struct {
	sites *crawl.Sites
	added sync.Map // site ID -> *atomic.Int64
}

// UseSites makes the scheduler admit URLs by their sites' rules (seed
// 001): their roots, filters, state, limits and priority. Without it
// every URL gets the crawl's defaults.
func (s *Scheduler) UseSites(ctx context.Context, store SiteStore) error {
	s.siteStore = store
	return s.RefreshSites(ctx)
}

// RefreshSites reads the sites again: a site changed by another process
// (`crawler site`, a site event) takes effect at the next refresh.
func (s *Scheduler) RefreshSites(ctx context.Context) error {
	if s.siteStore == nil {
		return nil
	}
	list, err := s.siteStore.Sites(ctx)
	if err != nil {
		return fmt.Errorf("refresh sites: %w", err)
	}
	ss, err := crawl.NewSites(list)
	if err != nil {
		return fmt.Errorf("refresh sites: %w", err)
	}
	s.sites.Store(&siteView{sites: ss})
	return nil
}

// RecrawlSites starts the periodic recrawl of the sites whose
// RecrawlDate has come: their roots are due now (seed 001).
func (s *Scheduler) RecrawlSites(ctx context.Context) (int, error) {
	if s.siteStore == nil {
		return 0, nil
	}
	return s.siteStore.StartSiteRecrawls(ctx, s.now().Unix())
}

// siteOf returns the site a normalized URL belongs to, or nil.
func (s *Scheduler) siteOf(url string) *crawl.CompiledSite {
	v := s.sites.Load()
	if v == nil || url == "" {
		return nil
	}
	return v.sites.Of(url)
}

// collected is how many URLs a site has: as last read, and admitted here since.
func (s *Scheduler) collected(site *crawl.CompiledSite) int64 {
	n := site.CollectedURLs
	if v := s.sites.Load(); v != nil {
		if a, ok := v.added.Load(site.ID); ok {
			n += a.(*atomic.Int64).Load()
		}
	}
	return n
}

// siteUnknown reports whether a candidate names a site the scheduler's
// copy of the sites does not hold, and that was not missing from the
// store at a read after it was first seen (s.missingSites): such a site
// is not read for again at every release.
func (s *Scheduler) siteUnknown(cands []crawl.Candidate) bool {
	v := s.sites.Load()
	if v == nil || s.siteStore == nil {
		return false
	}
	unknown := false
	for _, c := range cands {
		if c.SiteID == "" || v.sites.ByID(c.SiteID) != nil {
			continue
		}
		if _, missing := s.missingSites.LoadOrStore(c.SiteID, true); !missing {
			unknown = true
		}
	}
	return unknown
}

// reserve takes one of site's URLs for a decision to admit a URL to it:
// the count MaxURLs is checked against goes up at once, so that the
// links of one page, decided before any is written, and the pages
// admitted side by side cannot go past it together. It returns the
// count taken from (decision.unreserve gives it back), or false when
// the site is full.
func (s *Scheduler) reserve(site *crawl.CompiledSite) (*atomic.Int64, bool) {
	v := s.sites.Load()
	if v == nil {
		return nil, true
	}
	if cur := v.sites.ByID(site.ID); cur != nil {
		site = cur // as read with the count it holds (read again since, maybe)
	}
	a, _ := v.added.LoadOrStore(site.ID, new(atomic.Int64))
	n := a.(*atomic.Int64)
	if taken := n.Add(1); site.MaxURLs > 0 && site.CollectedURLs+taken > site.MaxURLs {
		n.Add(-1)
		return nil, false
	}
	return n, true
}

// takeURL takes one of site's URLs (reserve) for a decision that makes
// c one of its collected URLs, if c is site's or of no site yet (claim):
// nil and true when there is no such site.
func (s *Scheduler) takeURL(c crawl.Candidate, site *crawl.CompiledSite) (*atomic.Int64, bool) {
	if site == nil || c.SiteID != "" && c.SiteID != site.ID {
		return nil, true
	}
	return s.reserve(site)
}

// unreserve gives back the site URL a decision took (reserve), when its
// candidate is not written.
func (d decision) unreserve() {
	if d.reserved != nil {
		d.reserved.Add(-1)
	}
}

// judgeSite returns the site's verdict on a URL of it (ExitUnknown: it
// passes): its filters, and its MaxURLs and MaxResources.
func (s *Scheduler) judgeSite(site *crawl.CompiledSite, url string) crawl.ExitCode {
	switch {
	case !site.Admits(url):
		return crawl.ExitExcluded
	case site.MaxURLs > 0 && s.collected(site) >= site.MaxURLs:
		return crawl.ExitTooManyURLs
	case site.MaxResources > 0 && site.Resources >= site.MaxResources:
		return crawl.ExitTooManyURLs
	}
	return crawl.ExitUnknown
}

// dueState is the state of a URL of site made due: held while the site
// is disabled, and while it is suspended for a URL found in a page.
func dueState(site *crawl.CompiledSite, discovered bool) crawl.CandidateState {
	if site != nil && site.State.Holds(discovered) {
		return crawl.StateHeld
	}
	return crawl.StateDue
}

// rootsFree refuses a root whose prefix another site's root has: a URL
// belongs to the site of the longest root prefix it begins with, so of
// two sites with one prefix the second would get no URL, and its
// filters and limits would silently decide nothing. (Two sites written
// at once can still both pass: the check reads the sites as stored.)
func (s *Scheduler) rootsFree(ctx context.Context, site crawl.Site) error {
	sites, err := s.siteStore.Sites(ctx)
	if err != nil {
		return fmt.Errorf("manage site %s: read sites: %w", site.ID, err)
	}
	for _, other := range sites {
		if other.ID == site.ID {
			continue
		}
		for _, r := range site.Roots {
			for _, o := range other.Roots {
				if crawl.RootPrefix(r) == crawl.RootPrefix(o) {
					return crawl.E("manage site", crawl.KindInvalid, fmt.Errorf("root %s: site %q has the root %s, of the same prefix %s (a URL belongs to one site: change that site, or give a longer root)",
						crawl.Truncate(r, 200), other.ID, crawl.Truncate(o, 200), crawl.Truncate(crawl.RootPrefix(r), 200)))
				}
			}
		}
	}
	return nil
}

// ManageSite carries out a site event (add, set, disable, enable) and
// returns the site as stored. Adding a site, or giving it new roots,
// enqueues the roots as seeds. An event that cannot be carried out (an
// invalid root, an ID taken or unknown) is an error of kind
// crawl.KindInvalid.
func (s *Scheduler) ManageSite(ctx context.Context, ev crawl.SiteEvent) (crawl.Site, error) {
	if s.siteStore == nil {
		return crawl.Site{}, errors.New("manage site: the scheduler has no site store")
	}
	if err := ev.Validate(); err != nil {
		return crawl.Site{}, crawl.E("manage site", crawl.KindInvalid, err)
	}
	now := s.now().Unix()
	roots := make([]string, 0, len(ev.Roots))
	for _, r := range ev.Roots {
		n, err := urlnorm.Normalize(r)
		if err != nil {
			return crawl.Site{}, crawl.E("manage site", crawl.KindInvalid, fmt.Errorf("root URL %q: %w", crawl.Truncate(r, 200), err))
		}
		if name := crawl.HostName(n.Host); len(name) > crawl.MaxHostLength {
			return crawl.Site{}, crawl.E("manage site", crawl.KindInvalid, fmt.Errorf("root URL %q: its host name is %d bytes long, more than the %d DNS resolves",
				crawl.Truncate(r, 200), len(name), crawl.MaxHostLength))
		}
		roots = append(roots, n.URL)
	}
	var site crawl.Site
	create := ev.Op == crawl.SiteAdd
	if create {
		site = crawl.Site{ID: ev.ID, State: crawl.SiteActive, CDate: now}
		if site.ID == "" {
			site.ID = SiteID(roots[0])
		}
	} else {
		var err error
		site, err = s.siteStore.GetSite(ctx, ev.ID)
		if errors.Is(err, crawl.ErrNotFound) {
			return crawl.Site{}, crawl.E("manage site", crawl.KindInvalid, fmt.Errorf("no site %q", ev.ID))
		}
		if err != nil {
			return crawl.Site{}, err
		}
	}
	was := site.State
	newRoots := create
	if len(roots) > 0 {
		newRoots = newRoots || !slices.Equal(site.Roots, roots)
		site.Roots = roots
	}
	if err := ev.ApplyTo(&site); err != nil {
		return crawl.Site{}, crawl.E("manage site", crawl.KindInvalid, err)
	}
	switch ev.Op {
	case crawl.SiteDisable:
		site.State = crawl.SiteDisabled
	case crawl.SiteEnable:
		site.State = crawl.SiteActive
	}
	if site.State != was && site.State == crawl.SiteActive {
		// Seed 001: the error count starts again when the state changes.
		site.Errors, site.StateReason = 0, ""
	}
	if site.State != was && site.State != crawl.SiteSuspended {
		site.StateReason = ""
	}
	site.UDate = now
	if err := site.Validate(); err != nil {
		return crawl.Site{}, crawl.E("manage site", crawl.KindInvalid, err)
	}
	if newRoots {
		if err := s.rootsFree(ctx, site); err != nil {
			return crawl.Site{}, err
		}
	}
	if err := s.siteStore.PutSite(ctx, site, create); err != nil {
		if errors.Is(err, crawl.ErrConflict) {
			return crawl.Site{}, crawl.E("manage site", crawl.KindInvalid, fmt.Errorf("site %q exists: change it with set", site.ID))
		}
		return crawl.Site{}, err
	}
	if err := s.RefreshSites(ctx); err != nil {
		return crawl.Site{}, err
	}
	if newRoots {
		for _, r := range site.Roots {
			ev := crawl.EnqueueEvent{Version: crawl.EnqueueVersion, URL: r, Seed: true}
			if _, err := s.Admit(ctx, ev); err != nil {
				return site, fmt.Errorf("enqueue root %s of site %s: %w", r, site.ID, err)
			}
		}
	}
	return s.siteStore.GetSite(ctx, site.ID)
}

// SiteID is the ID a site gets from its first root when none is given:
// the root's host if it fits seed 001's 32 characters, else the MD5 of
// the root in hex (32 characters, as the seed's URLMd5).
func SiteID(root string) string {
	if n, err := urlnorm.Normalize(root); err == nil {
		h := strings.ReplaceAll(n.Host, ":", "_")
		if s := (crawl.Site{ID: h, Roots: []string{root}, State: crawl.SiteActive}); s.Validate() == nil {
			return h
		}
	}
	sum := md5.Sum([]byte(root))
	return hex.EncodeToString(sum[:])
}

// SiteRefreshEvery is how often a long-running caller calls
// RefreshSites: a change to a site takes effect within it.
const SiteRefreshEvery = time.Second
