// Package schedule is the schedule stage: it admits enqueued URLs as
// crawl candidates (normalize, scope, depth, patterns, dedupe) and
// releases due candidates to the fetch queue.
package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
)

// Store is what the scheduler needs of the metadata store.
type Store interface {
	GetCandidate(ctx context.Context, url string) (crawl.Candidate, error)
	PutCandidate(ctx context.Context, c crawl.Candidate) error
	// PutCandidates writes each candidate as PutCandidate would, at once
	// where the store can, and returns each one's error (nil: written).
	PutCandidates(ctx context.Context, cs []crawl.Candidate) []error
	DueCandidates(ctx context.Context, now int64, limit int) ([]crawl.Candidate, error)
	StaleQueued(ctx context.Context, before int64, limit int) ([]crawl.Candidate, error)
	AddScopeHost(ctx context.Context, host string) error
	InScope(ctx context.Context, host string) (bool, error)
}

// Sender sends messages to one queue.
type Sender interface {
	Send(ctx context.Context, bodies ...[]byte) error
}

// Policy is what the scheduler lets through.
type Policy struct {
	// MaxDepth is the most hops from a seed a URL may be (-1: no limit).
	// An event's max_depth overrides it.
	MaxDepth int
	// Include, when not empty, admits only URLs matching one of them.
	Include []*regexp.Regexp
	// Exclude rules out URLs matching any of them.
	Exclude []*regexp.Regexp
	// KillOutOfScope leaves a link found in a page to a host outside the
	// crawl's scope unrecorded (seed 004's "killed": not crawled, and
	// not logged as a crawl-url), where it is otherwise a filtered
	// candidate (out-of-scope). The link itself stays in its page's
	// link_summary, and a link found again once its host is in scope is
	// admitted as if it were new, as a filtered one would be. The AWS
	// home sets it by default (RecordOutOfScope=false): there each
	// candidate is a billed write, and out-of-scope links were most of
	// the candidates on the documentation tree (docs/aws.md).
	KillOutOfScope bool
	// ReleaseOnAdmit sends a URL that an admission makes due now to
	// fetch at once, written as queued rather than due: one write of its
	// candidate instead of one to make it due and one to release it. The
	// AWS home sets it: there the scheduler releases everything due
	// after each batch of admissions anyway, and each of those writes
	// moves the candidate in or out of the due index, a billed write of
	// its own. The embedded home releases as fetch workers free up, so
	// it leaves it off.
	ReleaseOnAdmit bool
	// GuessRuledOutNew writes a URL ruled out (filtered) that this
	// scheduler has not seen as a new candidate without reading its
	// candidate first, when a page's links are admitted together
	// (AdmitEach). A write that finds the URL stored fails as a
	// conflict, after which it is decided again with a read: a wrong
	// guess costs the failed insert on top of the read, a right one
	// saves the read. The embedded home sets it: in a crawl most such
	// URLs are new (the out-of-scope links of Sphinx's documentation, 23
	// a page, were read one by one, a tenth of the crawl's CPU), and a
	// resumed run pays the failed insert once for each one stored
	// before. The AWS home reads first: there a refused write costs ten
	// times a read.
	GuessRuledOutNew bool
	// FiltersAtRelease judges a due URL of no site again by MaxDepth,
	// Include and Exclude, and a site's URL by its site's filters as
	// they are now, when it is released, and records it filtered
	// (too-deep, excluded) if they now rule it out: a run given
	// --exclude, or a site given a filter, stops a crawler trap whose
	// URLs an earlier run admitted. Only where one scheduler admits and
	// releases (the embedded home): a URL admitted and then filtered
	// goes against what other schedulers remember of it (knownURLs).
	FiltersAtRelease bool
	// Room, if set, bounds how many tasks of one host are released ahead
	// of its fetches: a candidate of a host without room stays due (or
	// stale) and is released by a later run.
	Room HostRoom
}

// HostRoom says whether one more fetch task of host may be released now,
// and counts it if so; delay is the request delay of the task's site (0:
// the crawl's default). The AWS home spreads a host's tasks over SQS
// delays, which end 15 minutes on: released further ahead, tasks came at
// that cap all at once, or stayed queued past the time after which they
// are released again as lost (docs/aws.md, "Politeness").
type HostRoom interface {
	Take(host string, delay time.Duration) bool
}

// Scheduler is the schedule stage.
type Scheduler struct {
	store  Store
	fetch  Sender
	policy Policy
	log    *slog.Logger
	now    func() time.Time
	scope  sync.Map // hosts known to be in scope
	// missingSites are the site IDs candidates named that the sites
	// read did not hold: read for once (siteUnknown).
	missingSites sync.Map
	out          outOfScope
	known        knownURLs

	siteStore SiteStore // nil: no sites, every URL gets the defaults
	sites     atomic.Pointer[siteView]
}

// New returns a scheduler sending released candidates to fetch.
func New(store Store, fetch Sender, policy Policy, log *slog.Logger) *Scheduler {
	return &Scheduler{store: store, fetch: fetch, policy: policy, log: log, now: time.Now}
}

// Outcome is what Admit did with an event.
type Outcome string

// The admission outcomes.
const (
	Admitted  Outcome = "admitted" // a new candidate, due now
	Requeued  Outcome = "requeued" // a known candidate made due again (forced, reenqueued)
	Deduped   Outcome = "deduped"  // already a candidate: nothing to do (seed 004 siphoned duplicate)
	Filtered  Outcome = "filtered" // recorded as a candidate that will not be crawled
	Killed    Outcome = "killed"   // not a crawl target (unsupported scheme; out of scope, with KillOutOfScope): not recorded
	StatusAsk Outcome = "status"   // an enqueue_type status event: nothing changes
	// TooLong: a link longer than crawl.MaxKeptURLLength once normalized
	// (seed 004 siphoned lc-too-long): not recorded as a candidate, as
	// no key can hold it; it stays in its page's links.
	TooLong Outcome = "too-long"
)

// Admit takes one enqueue event. An event a user sent that cannot be
// admitted (an invalid URL) is an error of kind crawl.KindInvalid; an
// invalid URL found in a page is recorded as a filtered candidate.
func (s *Scheduler) Admit(ctx context.Context, ev crawl.EnqueueEvent) (Outcome, error) {
	for attempt := 0; ; attempt++ {
		d, err := s.decide(ctx, ev, false)
		if err != nil || d.put == nil {
			return d.out, err
		}
		task := s.releaseNow(d.put)
		err = s.store.PutCandidate(ctx, *d.put)
		out, again, err := s.wrote(ctx, d, err)
		if err == nil && task != nil {
			err = s.sendTasks(ctx, []crawl.FetchTask{*task})
		}
		if !again || attempt == 4 {
			return out, err
		}
	}
}

// AdmitEach admits every event ev stands for (its URL, or each of its
// URLs: crawl.EnqueueEvent.Each) and calls fn, if not nil, with each
// outcome, in the events' order. A URL that cannot be admitted
// (KindInvalid) does not stop the others; they are named in the
// KindInvalid error returned at the end. Any other error stops at once,
// to be retried: admitting the URLs already admitted again changes
// nothing.
//
// The candidates the events come to are written in one PutCandidates,
// not one write per URL: a page's links are admitted in one database
// write (one commit in SQLite; in DynamoDB, UpdateItems sent 16 at a
// time). The URLs whose write lost (to another writer, or a guess of
// GuessRuledOutNew that found the URL stored) are decided again, after
// a read, and written together again; one that loses a second time is
// admitted on its own, as Admit does.
func (s *Scheduler) AdmitEach(ctx context.Context, ev crawl.EnqueueEvent, fn func(crawl.EnqueueEvent, Outcome)) error {
	evs := ev.Each()
	outs := make([]Outcome, len(evs))
	errs := make([]error, len(evs))
	all := make([]int, len(evs))
	for i := range all {
		all[i] = i
	}
	// The first pass stops at an error, with nothing written: the event
	// is retried whole. Once it has written, an event's error is its own
	// (below, the outcomes before it are told first), and the retried
	// event finds what was written.
	again, err := s.admitTogether(ctx, evs, all, true, outs, errs)
	if err == nil && len(again) > 0 {
		again, err = s.admitTogether(ctx, evs, again, false, outs, errs)
	}
	if err != nil {
		return err
	}
	for _, i := range again {
		outs[i], errs[i] = s.Admit(ctx, evs[i])
	}

	var refused []string
	var first error
	for i, e := range evs {
		err := errs[i]
		switch {
		case err == nil:
			if fn != nil {
				fn(e, outs[i])
			}
		case crawl.KindOf(err) == crawl.KindInvalid && len(evs) > 1:
			refused = append(refused, e.URL)
			if first == nil {
				first = err
			}
		default:
			return err
		}
	}
	if len(refused) > 0 {
		return crawl.E("admit", crawl.KindInvalid, fmt.Errorf("%d of the event's %d URLs refused (the others admitted), the first %q: %w",
			len(refused), len(evs), crawl.Truncate(refused[0], 200), first))
	}
	return nil
}

// admitTogether decides the events idx of evs (guess: as decide takes
// it; only the first pass guesses) and writes the candidates they come
// to in one PutCandidates, setting each event's outcome or error. It
// returns, in order, the events to admit again: a second event for a
// URL whose write is planned, and those whose write lost to another
// writer. The first pass returns a decision's error (other than
// KindInvalid) at once, before anything is written.
func (s *Scheduler) admitTogether(ctx context.Context, evs []crawl.EnqueueEvent, idx []int, guess bool, outs []Outcome, errs []error) ([]int, error) {
	var puts []crawl.Candidate
	var decs []decision
	var tasks []*crawl.FetchTask // each put's fetch task, when it is released now (ReleaseOnAdmit)
	var putOf []int              // the event of each put
	planned := map[string]bool{} // URLs with a put planned: a second event for one waits for the first
	var again []int
	for _, i := range idx {
		d, err := s.decide(ctx, evs[i], guess)
		switch {
		case err != nil && crawl.KindOf(err) != crawl.KindInvalid && guess:
			for _, d := range decs {
				d.unreserve() // not written: the event is retried whole
			}
			return nil, err
		case err != nil:
			errs[i] = err
		case d.put == nil:
			outs[i] = d.out
		case planned[d.put.URL]:
			d.unreserve() // decided again once the first is written
			again = append(again, i)
		default:
			planned[d.put.URL] = true
			tasks = append(tasks, s.releaseNow(d.put))
			decs = append(decs, d)
			puts = append(puts, *d.put)
			putOf = append(putOf, i)
		}
	}
	if len(puts) > 0 {
		var released []crawl.FetchTask
		for j, err := range s.store.PutCandidates(ctx, puts) {
			i := putOf[j]
			out, retry, err := s.wrote(ctx, decs[j], err)
			if retry {
				again = append(again, i)
				continue
			}
			outs[i], errs[i] = out, err
			if err == nil && tasks[j] != nil {
				released = append(released, *tasks[j])
			}
		}
		if err := s.sendTasks(ctx, released); err != nil {
			return nil, err
		}
	}
	slices.Sort(again)
	return again, nil
}

// decision is what admitting one event comes to, before anything is
// written: its outcome, and the candidate to write for it, if any.
type decision struct {
	out Outcome
	put *crawl.Candidate // nil: nothing to write
	// onConflict is the outcome when the write loses to another writer;
	// "": the event is decided again.
	onConflict Outcome
	// reserved is the count of its site's URLs this decision took one
	// of (reserve), to be given back if the candidate is not written.
	reserved *atomic.Int64
	invalid  error // why the URL was recorded as invalid (logged once written)
}

// decide works out what admitting ev comes to. It reads the store, and
// writes only a seed's host into the scope.
func (s *Scheduler) decide(ctx context.Context, ev crawl.EnqueueEvent, guess bool) (decision, error) {
	if err := ev.Validate(); err != nil {
		return decision{}, crawl.E("admit", crawl.KindInvalid, err)
	}
	discovered := ev.Parent != ""
	// A link to a URL already known not filtered at no more hops (most
	// links of most pages) is deduped before it is normalized, as admit
	// would dedupe it whatever the filters say: only normalized URLs are
	// known, and normalizing one gives itself (urlnorm's fuzz target
	// checks that).
	plainType := ev.EnqueueType == "" || ev.EnqueueType == crawl.EnqueueNone
	if discovered && plainType && ev.LastMod == 0 && s.known.dedupes(ev.URL, ev.Hops, false) {
		return decision{out: Deduped}, nil
	}
	n, err := urlnorm.Normalize(ev.URL)
	if err != nil {
		switch {
		case errors.Is(err, urlnorm.ErrUnsupportedScheme) && discovered:
			return decision{out: Killed}, nil
		case discovered && len(ev.URL) > crawl.MaxKeptURLLength:
			return s.tooLong(ctx, ev, len(ev.URL)), nil
		case discovered:
			return s.invalid(ev, err), nil
		default:
			return decision{}, crawl.E("admit "+ev.URL, crawl.KindInvalid, err)
		}
	}
	if name := crawl.HostName(n.Host); len(name) > crawl.MaxHostLength {
		err := fmt.Errorf("its host name is %d bytes long, more than the %d DNS resolves", len(name), crawl.MaxHostLength)
		switch {
		case discovered && len(ev.URL) > crawl.MaxKeptURLLength:
			return s.tooLong(ctx, ev, len(ev.URL)), nil
		case discovered:
			return s.invalid(ev, err), nil // recorded as written, as an unparsable link is
		default:
			return decision{}, crawl.E("admit "+crawl.Truncate(ev.URL, 200), crawl.KindInvalid, err)
		}
	}
	if len(n.URL) > crawl.MaxKeptURLLength {
		if discovered {
			return s.tooLong(ctx, ev, len(n.URL)), nil
		}
		return decision{}, crawl.E("admit "+crawl.Truncate(ev.URL, 200), crawl.KindInvalid,
			fmt.Errorf("the URL is %d bytes long once normalized, more than the %d the crawler keeps", len(n.URL), crawl.MaxKeptURLLength))
	}
	switch ev.EnqueueType {
	case crawl.EnqueueStatus:
		return decision{out: StatusAsk}, nil
	case crawl.EnqueueExport:
		return decision{}, crawl.E("admit "+ev.URL, crawl.KindInvalid, fmt.Errorf("enqueue_type export is not supported by this crawler"))
	}
	seed := ev.Seed || (!discovered && ev.Hops == 0 && ev.NRedirs == 0)
	site := s.siteOf(n.URL)
	// A seed puts its host in scope, unless it is a site's URL: a site's
	// scope is its roots.
	if seed && site == nil {
		if err := s.addScope(ctx, n.Host); err != nil {
			return decision{}, err
		}
		if ev.Site != "" {
			sn, err := urlnorm.Normalize(siteURL(ev.Site))
			if err != nil {
				return decision{}, crawl.E("admit "+ev.URL, crawl.KindInvalid, fmt.Errorf("site %q: %w", ev.Site, err))
			}
			if err := s.addScope(ctx, sn.Host); err != nil {
				return decision{}, err
			}
		}
	}
	verdict, err := s.judge(ctx, n, ev, site)
	if err != nil {
		return decision{}, err
	}
	return s.admit(ctx, n, ev, verdict, site, guess)
}

// wrote settles a decision whose candidate was written with result err:
// the outcome, or whether to decide again (the write lost to another
// writer).
func (s *Scheduler) wrote(ctx context.Context, d decision, err error) (out Outcome, again bool, _ error) {
	switch {
	case errors.Is(err, crawl.ErrConflict) && d.onConflict != "":
		d.unreserve()
		return d.onConflict, false, nil
	case errors.Is(err, crawl.ErrConflict):
		d.unreserve()
		return "", true, fmt.Errorf("put candidate %s: %w", d.put.URL, err)
	case err != nil:
		d.unreserve()
		return "", false, fmt.Errorf("put candidate %s: %w", d.put.URL, err)
	}
	s.known.saw(*d.put)
	if d.invalid != nil {
		s.log.DebugContext(ctx, "invalid URL in page", "url", d.put.URL, "parent", d.put.Parent, "err", d.invalid)
	}
	return d.out, false, nil
}

func siteURL(site string) string {
	if regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`).MatchString(site) {
		return site
	}
	return "http://" + site + "/"
}

// judge returns the filter exit code for a URL, or ExitUnknown if it passes.
func (s *Scheduler) judge(ctx context.Context, n urlnorm.Result, ev crawl.EnqueueEvent, site *crawl.CompiledSite) (crawl.ExitCode, error) {
	discovered := ev.Parent != ""
	var from *crawl.CompiledSite // the site of the page the link is on
	if discovered {
		from = s.siteOf(ev.Parent)
	}
	if from != nil && from.URLType == crawl.URLSingle {
		return crawl.ExitExcluded, nil // a single-URL site's links are not collected
	}
	in := site != nil || from != nil && from.URLType == crawl.URLCollectAll
	if !in {
		var err error
		if in, err = s.inScope(ctx, n.Host); err != nil {
			return 0, err
		}
	}
	if !in {
		return crawl.ExitOutOfScope, nil
	}
	if ev.Overflow {
		return crawl.ExitTooManyURLs, nil
	}
	maxDepth := s.policy.MaxDepth
	if ev.MaxDepth != nil {
		maxDepth = *ev.MaxDepth
	}
	if maxDepth >= 0 && ev.Hops > maxDepth {
		return crawl.ExitTooDeep, nil
	}
	if len(s.policy.Include) > 0 && !matchAny(s.policy.Include, n.URL) {
		return crawl.ExitExcluded, nil
	}
	if matchAny(s.policy.Exclude, n.URL) {
		return crawl.ExitExcluded, nil
	}
	if site != nil {
		return s.judgeSite(site, n.URL), nil
	}
	return crawl.ExitUnknown, nil
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

func (s *Scheduler) admit(ctx context.Context, n urlnorm.Result, ev crawl.EnqueueEvent, verdict crawl.ExitCode, site *crawl.CompiledSite, guess bool) (decision, error) {
	if verdict == crawl.ExitOutOfScope && s.policy.KillOutOfScope && ev.Parent != "" {
		// Decided before the candidate is read: no read, no write.
		return decision{out: Killed}, nil
	}
	plain := ev.EnqueueType != crawl.EnqueueForced && ev.EnqueueType != crawl.EnqueueReenqueued && ev.LastMod == 0
	if plain && s.known.dedupes(n.URL, ev.Hops, verdict != crawl.ExitUnknown) {
		return decision{out: Deduped}, nil
	}
	now := s.now().Unix()
	var c crawl.Candidate
	var err error
	if guess && plain && verdict != crawl.ExitUnknown && s.policy.GuessRuledOutNew && !s.known.has(n.URL) {
		// Written as new without a read (GuessRuledOutNew): a
		// candidate stored already fails the write as a conflict,
		// and the event is decided again, after a read (AdmitEach's
		// second pass). A URL this scheduler knows (at more hops) is
		// stored: read.
		err = crawl.ErrNotFound
	} else if c, err = s.store.GetCandidate(ctx, n.URL); err == nil {
		s.known.saw(c)
	}
	if errors.Is(err, crawl.ErrNotFound) {
		c = crawl.Candidate{
			URL: n.URL, Host: n.Host, Hops: ev.Hops, Priority: ev.Priority, DiscoveredAt: now,
			Parent: ev.Parent, NRedirs: ev.NRedirs, OrigURL: ev.OrigURL, RedirectChain: ev.RedirectChain,
			MaxDepth: ev.MaxDepth, CrawlType: crawl.CrawlFirst,
		}
		if site != nil {
			c.SiteID = site.ID
			c.Priority += site.Priority
		}
		c.MRate = crawl.ChangeFreqPrior(ev.ChangeFreq) // a sitemap's hint, until changes are seen
		var reserved *atomic.Int64
		if verdict == crawl.ExitUnknown {
			var ok bool
			if reserved, ok = s.takeURL(c, site); !ok {
				verdict = crawl.ExitTooManyURLs
			}
		}
		if verdict != crawl.ExitUnknown {
			c.State = crawl.StateFiltered
			c.LastCrawlExitCode = &verdict
			return decision{out: Filtered, put: &c}, nil
		}
		c.State, c.DueAt = dueState(site, ev.Parent != ""), now
		if ev.EnqueueType == crawl.EnqueueForced {
			c.CrawlType = crawl.CrawlForced
		}
		return decision{out: Admitted, put: &c, reserved: reserved}, nil
	}
	if err != nil {
		return decision{}, fmt.Errorf("admit %s: %w", n.URL, err)
	}

	// Known URL.
	if verdict != crawl.ExitUnknown {
		if c.State == crawl.StateFiltered && ev.Hops < c.Hops {
			c.Hops = ev.Hops
			c.LastCrawlExitCode = &verdict
			return decision{out: Filtered, put: &c}, nil
		}
		return decision{out: Deduped}, nil
	}
	switch {
	case ev.EnqueueType == crawl.EnqueueForced || ev.EnqueueType == crawl.EnqueueReenqueued:
		if c.State == crawl.StateQueued || c.State == crawl.StateDue && c.DueAt <= now || c.State == crawl.StateHeld {
			return decision{out: Deduped}, nil
		}
		if ev.MetBy(c.LastCrawlTime) {
			// Crawled since it was asked for: this is the event
			// delivered again (or sent again), and its crawl is done.
			return decision{out: Deduped}, nil
		}
		var reserved *atomic.Int64
		if c.State == crawl.StateFiltered {
			// Collected now, as the stores count it (PutCandidate).
			var ok bool
			if reserved, ok = s.takeURL(c, site); !ok {
				return decision{out: Deduped}, nil // the site is full: it stays filtered
			}
		}
		c.State, c.DueAt = dueState(site, ev.Parent != ""), now
		claim(&c, site)
		c.CrawlType = crawl.CrawlReenqueued
		if ev.EnqueueType == crawl.EnqueueForced {
			c.CrawlType = crawl.CrawlForced
		}
		c.Hops = min(c.Hops, ev.Hops)
		return decision{out: Requeued, put: &c, reserved: reserved}, nil
	case c.State == crawl.StateFiltered && isRetryableFilter(c.LastCrawlExitCode):
		// Found again closer to a seed, or the filters changed: admit it.
		// The stores count it as collected now (PutCandidate), and so
		// does the count MaxURLs is checked against.
		reserved, ok := s.takeURL(c, site)
		if !ok {
			return decision{out: Deduped}, nil // the site is full: it stays filtered
		}
		c.State, c.DueAt, c.Hops = dueState(site, ev.Parent != ""), now, min(c.Hops, ev.Hops)
		claim(&c, site)
		c.LastCrawlExitCode = nil
		return decision{out: Admitted, put: &c, reserved: reserved}, nil
	case ev.LastMod > 0 && c.LastCrawlTime != nil && ev.LastMod > *c.LastCrawlTime &&
		(c.State == crawl.StateCrawled || c.State == crawl.StateDue && c.DueAt > now):
		// A sitemap says it changed since it was crawled: due now.
		c.State, c.DueAt, c.CrawlType = dueState(site, ev.Parent != ""), now, crawl.CrawlRecrawl
		claim(&c, site)
		c.Hops = min(c.Hops, ev.Hops)
		return decision{out: Requeued, put: &c}, nil
	case ev.Hops < c.Hops:
		c.Hops = ev.Hops
		return decision{out: Deduped, put: &c}, nil
	}
	return decision{out: Deduped}, nil
}

// ruledOutNow reports whether filters rule out a due URL that they did
// not when it was admitted, and with what exit code; only with
// Policy.FiltersAtRelease, for URLs never crawled: the pages crawled
// keep their last outcome and their recrawls, whatever one run is
// given. A URL of no site is judged by the run's filters
// (Policy.MaxDepth, Include, Exclude), as an enqueue event of the URL
// would be (judge); a site's URL by its site's filters as they are now,
// which last as the site does (a run's would leave the site's URLs
// filtered by a one-off run: a site's filters taken off admit them
// again, judgeSiteFiltersAgain), and it is no longer counted collected
// (the store's write).
func (s *Scheduler) ruledOutNow(c crawl.Candidate, site *crawl.CompiledSite) (crawl.ExitCode, bool) {
	switch {
	case !s.policy.FiltersAtRelease || c.LastCrawlTime != nil:
		return 0, false
	case c.SiteID == "":
		return s.filterVerdict(c)
	case site != nil && site.ID == c.SiteID && !site.Admits(c.URL):
		return crawl.ExitExcluded, true
	}
	return 0, false
}

// filterVerdict is what MaxDepth, Include and Exclude say of c's URL at
// its hops, as judge says it of a link to it.
func (s *Scheduler) filterVerdict(c crawl.Candidate) (crawl.ExitCode, bool) {
	maxDepth := s.policy.MaxDepth
	if c.MaxDepth != nil {
		maxDepth = *c.MaxDepth
	}
	switch {
	case maxDepth >= 0 && c.Hops > maxDepth:
		return crawl.ExitTooDeep, true
	case len(s.policy.Include) > 0 && !matchAny(s.policy.Include, c.URL), matchAny(s.policy.Exclude, c.URL):
		return crawl.ExitExcluded, true
	}
	return 0, false
}

// PassesFilters reports whether the scheduler's MaxDepth, Include and
// Exclude let c's URL through at its hops, as judge would a link to it:
// what a run given them uses to choose, without a read each, which of
// the URLs earlier runs filtered to admit again.
func (s *Scheduler) PassesFilters(c crawl.Candidate) bool {
	_, out := s.filterVerdict(c)
	return !out
}

// SiteAdmits reports whether c, a URL of a site, is its site's still
// and passes the site's filters and the run's (PassesFilters): what a
// run uses to choose which of a site's excluded URLs its changed filters
// let through.
func (s *Scheduler) SiteAdmits(c crawl.Candidate) bool {
	site := s.siteOf(c.URL)
	return site != nil && site.ID == c.SiteID && site.Admits(c.URL) && s.PassesFilters(c)
}

// claim makes a URL known before its site was added the site's, as a
// decision on it by the site's state (dueState) does: a URL held for a
// site must be the site's, for enabling the site to make it due again
// (both stores find a site's held URLs by its ID). Without it, a forced
// enqueue or a sitemap's lastmod of such a URL while its site was
// disabled held it for no site, for good.
func claim(c *crawl.Candidate, site *crawl.CompiledSite) {
	if site != nil && c.SiteID == "" {
		c.SiteID = site.ID
	}
}

// isRetryableFilter reports whether a filtered candidate may pass on a
// later enqueue: depth, patterns, page link caps and scope depend on the
// path, the run's flags and its seeds; an invalid URL stays invalid.
func isRetryableFilter(code *crawl.ExitCode) bool {
	return code != nil && (*code == crawl.ExitTooDeep || *code == crawl.ExitExcluded || *code == crawl.ExitOutOfScope ||
		*code == crawl.ExitTooManyURLs)
}

// tooLong is the decision for a link of n bytes, more than
// crawl.MaxKeptURLLength: nothing to write (see TooLong).
func (s *Scheduler) tooLong(ctx context.Context, ev crawl.EnqueueEvent, n int) decision {
	s.log.DebugContext(ctx, "link too long to keep", "url", crawl.Truncate(ev.URL, 200), "bytes", n, "parent", ev.Parent)
	return decision{out: TooLong}
}

// invalid is the decision for an invalid URL found in a page: kept as a
// filtered candidate, so the outcome can be read back.
func (s *Scheduler) invalid(ev crawl.EnqueueEvent, cause error) decision {
	code := crawl.ExitInvalidURL
	c := crawl.Candidate{
		URL: ev.URL, State: crawl.StateFiltered, LastCrawlExitCode: &code, Hops: ev.Hops,
		DiscoveredAt: s.now().Unix(), Parent: ev.Parent, CrawlType: crawl.CrawlFirst,
	}
	return decision{out: Filtered, put: &c, onConflict: Deduped, invalid: cause}
}

func (s *Scheduler) addScope(ctx context.Context, host string) error {
	if _, ok := s.scope.Load(host); ok {
		return nil
	}
	if err := s.store.AddScopeHost(ctx, host); err != nil {
		return err
	}
	s.scope.Store(host, true)
	return nil
}

func (s *Scheduler) inScope(ctx context.Context, host string) (bool, error) {
	if _, ok := s.scope.Load(host); ok {
		return true, nil
	}
	now := s.now()
	if s.out.recent(host, now) {
		return false, nil
	}
	in, err := s.store.InScope(ctx, host)
	if err != nil {
		return false, err
	}
	if in {
		s.scope.Store(host, true)
	} else {
		s.out.saw(host, now)
	}
	return in, nil
}

// outOfScope remembers hosts the store said were out of scope, for
// outOfScopeTTL: the links of a page mostly point to a few other hosts,
// and each asked the store again (on the documentation tree, 6,000 reads
// of the scope item for 543 pages, most of the scheduler's reads). A
// seed this scheduler adds puts its host in scope at once (addScope); one
// another scheduler adds (another Lambda environment) is seen here within
// the TTL, and a link to its host meanwhile is judged as before the seed.
type outOfScope struct {
	mu sync.Mutex
	m  map[string]time.Time
}

// outOfScopeTTL bounds how long a host's absence from the scope is
// taken as known; maxOutOfScope bounds the memory (past it the map
// starts over, which costs reads, never correctness).
const (
	outOfScopeTTL = time.Minute
	maxOutOfScope = 100_000
)

func (o *outOfScope) recent(host string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	at, ok := o.m[host]
	return ok && now.Sub(at) < outOfScopeTTL
}

func (o *outOfScope) saw(host string, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil || len(o.m) >= maxOutOfScope {
		o.m = map[string]time.Time{}
	}
	o.m[host] = now
}

// Release sends up to limit due candidates to the fetch queue, each as a
// new crawl, and returns how many it sent.
func (s *Scheduler) Release(ctx context.Context, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	sent := 0
	for sent < limit {
		due, err := s.store.DueCandidates(ctx, s.now().Unix(), limit-sent)
		if err != nil {
			return sent, fmt.Errorf("release: %w", err)
		}
		n, filtered, err := s.releaseAll(ctx, due)
		sent += n
		if err != nil || filtered == 0 {
			return sent, err
		}
		// URLs the run's filters ruled out (FiltersAtRelease) took part
		// of the limit and went nowhere: release others in their place,
		// so that a trap of many URLs is filtered at once, not a
		// release's worth at each wake of the caller.
	}
	return sent, nil
}

// Requeue releases again, as new crawls, candidates released before
// staleAfter ago whose crawl never got recorded: their fetch message was
// lost (a crash between release and send). A fetch message of the old
// crawl that still arrives is dropped as stale, so nothing is fetched twice.
func (s *Scheduler) Requeue(ctx context.Context, staleAfter time.Duration, limit int) (int, error) {
	stale, err := s.store.StaleQueued(ctx, s.now().Add(-staleAfter).Unix(), limit)
	if err != nil {
		return 0, fmt.Errorf("requeue: %w", err)
	}
	return s.release(ctx, stale)
}

// queue makes c a crawl released now: queued under a new crawl_uuid. It
// returns the crawl's fetch task, with its site's settings.
func (s *Scheduler) queue(c *crawl.Candidate, site *crawl.CompiledSite, now int64) crawl.FetchTask {
	c.State, c.CrawlUUID, c.QueuedAt = crawl.StateQueued, uuid.NewString(), now
	if c.CrawlType == 0 {
		c.CrawlType = crawl.CrawlFirst
	}
	return fetchTask(*c, site)
}

// fetchTask is the fetch task of c's crawl, with its site's settings.
func fetchTask(c crawl.Candidate, site *crawl.CompiledSite) crawl.FetchTask {
	task := crawl.FetchTask{URL: c.URL, CrawlUUID: c.CrawlUUID, CrawlType: c.CrawlType, Hops: c.Hops, MaxDepth: c.MaxDepth}
	if site != nil && site.ID == c.SiteID {
		task.DelayMS, task.TimeoutMS, task.MaxBytes, task.MaxLinks = site.RequestDelay, site.HTTPTimeout, site.MaxResourceSize, site.MaxURLsFromPage
		task.RecrawlMin = site.RecrawlPeriod
	}
	return task
}

// FetchTask is the fetch task of candidate c's current crawl, with its
// site's settings, as the release that queued it made it: what a run
// hands to its fetcher again for a crawl that a killed run recorded and
// did not hand on (the fetcher finds it recorded and hands it on,
// without fetching it again).
func (s *Scheduler) FetchTask(c crawl.Candidate) crawl.FetchTask {
	return fetchTask(c, s.siteOf(c.URL))
}

// releaseNow, under ReleaseOnAdmit, makes a candidate an admission is
// about to write as due now a released one instead (queue), and returns
// its fetch task, to be sent once the write has succeeded; nil when it
// stays as it is. If the send then fails, the candidate is queued
// without a message, as after a failed release: Requeue releases it
// again.
func (s *Scheduler) releaseNow(c *crawl.Candidate) *crawl.FetchTask {
	now := s.now().Unix()
	if !s.policy.ReleaseOnAdmit || c.State != crawl.StateDue || c.DueAt > now {
		return nil
	}
	site := s.siteOf(c.URL)
	if !s.hasRoom(c, site) {
		return nil
	}
	t := s.queue(c, site, now)
	return &t
}

// hasRoom takes room for one more task of c's host (Policy.Room), with
// its site's request delay.
func (s *Scheduler) hasRoom(c *crawl.Candidate, site *crawl.CompiledSite) bool {
	if s.policy.Room == nil {
		return true
	}
	var delay time.Duration
	if site != nil && site.ID == c.SiteID {
		delay = time.Duration(site.RequestDelay) * time.Millisecond
	}
	return s.policy.Room.Take(c.Host, delay)
}

// sendTasks sends fetch tasks, in one Send.
func (s *Scheduler) sendTasks(ctx context.Context, tasks []crawl.FetchTask) error {
	if len(tasks) == 0 {
		return nil
	}
	bodies := make([][]byte, len(tasks))
	for i, t := range tasks {
		b, err := json.Marshal(t)
		if err != nil {
			return fmt.Errorf("send fetch task of %s: %w", t.URL, err)
		}
		bodies[i] = b
	}
	if err := s.fetch.Send(ctx, bodies...); err != nil {
		return fmt.Errorf("send %d fetch tasks: %w", len(bodies), err)
	}
	return nil
}

func (s *Scheduler) release(ctx context.Context, cands []crawl.Candidate) (int, error) {
	n, _, err := s.releaseAll(ctx, cands)
	return n, err
}

// releaseAll releases cands and says how many it sent, and how many the
// run's filters ruled out (ruledOutNow).
func (s *Scheduler) releaseAll(ctx context.Context, cands []crawl.Candidate) (released, filtered int, _ error) {
	if s.siteUnknown(cands) {
		// A site added since the sites were last read (a root enqueued
		// by crawler site add while a crawl runs): read them now, so
		// that its root goes with the site's settings and the links
		// found in it are judged by its scope, not ruled out of scope.
		if err := s.RefreshSites(ctx); err != nil {
			return 0, 0, fmt.Errorf("release: %w", err)
		}
	}
	now := s.now().Unix()
	// The candidates are written together (PutCandidates): one commit in
	// SQLite; in DynamoDB one release record for them all, then their
	// writes at once, not one round trip after another.
	var (
		put   []crawl.Candidate
		tasks []crawl.FetchTask
		errs  []error
	)
	for _, c := range cands {
		site := s.siteOf(c.URL)
		// Known before its site was added: it is the site's from now on
		// (both homes claim a site's URLs this way, lazily).
		claim(&c, site)
		if site != nil && site.ID == c.SiteID && dueState(site, c.Parent != "") == crawl.StateHeld {
			// Made due by a process that had not yet read that its site
			// was disabled (or suspended): held now, not released.
			c.State = crawl.StateHeld
			if err := s.store.PutCandidate(ctx, c); err != nil && !errors.Is(err, crawl.ErrConflict) {
				errs = append(errs, fmt.Errorf("hold %s: %w", c.URL, err))
			}
			continue
		}
		if code, out := s.ruledOutNow(c, site); out {
			c.State, c.LastCrawlExitCode = crawl.StateFiltered, &code
			put, tasks = append(put, c), append(tasks, crawl.FetchTask{})
			continue
		}
		if !s.hasRoom(&c, site) {
			continue
		}
		task := s.queue(&c, site, now)
		put, tasks = append(put, c), append(tasks, task)
	}
	var out []crawl.FetchTask
	for i, err := range s.store.PutCandidates(ctx, put) {
		switch {
		case errors.Is(err, crawl.ErrConflict):
			// changed under us; the next release sees it
		case err != nil:
			errs = append(errs, fmt.Errorf("release %s: %w", put[i].URL, err))
		case tasks[i].URL == "":
			s.known.saw(put[i]) // filtered now (ruledOutNow)
			filtered++
		default:
			out = append(out, tasks[i])
		}
	}
	if err := errors.Join(errs...); err != nil {
		// The candidates written are queued without a message: Requeue
		// releases them again.
		return 0, filtered, err
	}
	if err := s.sendTasks(ctx, out); err != nil {
		return 0, filtered, err
	}
	return len(out), filtered, nil
}
