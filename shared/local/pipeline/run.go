package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/politeness"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
	"github.com/serverless-crawler/crawler/shared/stage/schedule"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
)

// Config is one crawl run.
type Config struct {
	Seeds       []string
	Concurrency int  // requests in flight at once (fetchWorkers a request)
	MaxPages    int  // fetches released in this run (0: no limit)
	Recrawl     bool // every known URL is due now (seed 004 reenqueued)
	// FiltersGiven says the run was given its own Policy.MaxDepth,
	// Include or Exclude: the URLs earlier runs filtered as too-deep or
	// excluded are judged again by them, as if found again (a larger
	// --max-depth picks up the links a smaller one left, without the
	// pages that link to them being parsed again).
	FiltersGiven bool
	// StopRecrawls: the run was given a recrawl period of 0
	// (--recrawl-period 0), which stops the recrawls of the URLs of no
	// site that an earlier period made due later, not only of those the
	// run crawls (a site's URLs follow their site's period).
	StopRecrawls bool
	Fetch        fetch.Config
	Policy       schedule.Policy
	Parse        parse.Config
	Summarize    summarize.Config
	Client       *http.Client
	Log          *slog.Logger
	// Progress, if set, is called a few times a second while the crawl runs.
	Progress func(Progress)

	afterRecord func(crawl.Crawl) // tests: called when a crawl is recorded, before it is handed on
	afterResume func()            // tests: called when the run has resumed, before anything is released
}

// Progress is a snapshot of a running crawl.
type Progress struct {
	Crawled  int64          // crawls recorded in this run
	Bytes    int64          // body bytes stored in this run
	Pending  int            // messages in the queues
	Frontier int            // URLs due now or on their way to a fetcher, not yet crawled
	Failed   map[string]int // crawls of this run that failed (status error), by outcome
	Hosts    []string       // hosts crawled in the last few seconds, the latest first
	MaxPages int            // the run's fetch budget (0: none), which bounds it
	Elapsed  time.Duration
}

// Result is what a finished run did.
type Result struct {
	AgentUUID   string
	Crawled     int64
	Bytes       int64
	Elapsed     time.Duration
	Outcomes    map[crawl.ExitCode]int // crawls of this run by outcome
	Filtered    map[crawl.ExitCode]int // candidates ruled out, all runs
	DeadLetters int                    // messages of this run that could not be handled
	// DeadLettersAll counts every message in the dead-letter queues,
	// this run's and earlier runs'.
	DeadLettersAll int
	// RecrawlsStopped counts the URLs whose recrawls StopRecrawls
	// stopped.
	RecrawlsStopped int
	// RecrawlPassContinued is when the --recrawl pass the run continued
	// began (0: the run began one, or was no --recrawl).
	RecrawlPassContinued int64
	StillDue             bool  // candidates left due, now or later: a next run has work
	NextDue              int64 // when the first of them is due (Unix seconds), if StillDue
}

// retryPolicy is crawl's one retry policy, with waits sized for one
// machine: 200 ms doubling to 6.4 s, then the dead-letter queue.
var retryPolicy = crawl.RetryPolicy{MaxReceives: crawl.DefaultMaxReceives, Base: 100 * time.Millisecond, Max: 6400 * time.Millisecond}

// Run crawls until nothing is due, or ctx is done: it registers this
// process as an agent, resumes what a killed run left, starts the stage
// workers, releases due candidates as workers free up, and reports.
func (d *DataDir) Run(ctx context.Context, cfg Config) (Result, error) {
	start := time.Now()
	cfg = cfg.withDefaults()
	host, _ := os.Hostname()
	agent := crawl.Agent{TimeStarted: start.Unix(), UUID: uuid.NewString(), Name: "crawler@" + host, HTTPUserAgent: &cfg.Fetch.UserAgent}
	if err := d.DB.RegisterAgent(ctx, agent); err != nil {
		return Result{}, err
	}
	cfg.Fetch.AgentUUID = agent.UUID
	res := Result{AgentUUID: agent.UUID}

	r := &runner{d: d, q: newQueues(d.DB), log: cfg.Log, wake: map[string]chan struct{}{}, lease: 10 * time.Minute, driveWake: make(chan struct{}, 1),
		stop: func(error) {}} // until the workers start: the steps before them return their errors
	for _, q := range allQueues {
		r.wake[q] = make(chan struct{}, 1)
	}
	// Whatever path Run returns by, no hand-off outlives it (the caller
	// closes the database next).
	defer r.handOffs.Wait()
	st := r.newStages(cfg)
	// The sites (seed 001) rule their URLs' admission and release; a
	// change to one (`crawler site`, from another process) is read again
	// within schedule.SiteRefreshEvery.
	if err := st.sched.UseSites(ctx, d.DB); err != nil {
		return res, err
	}
	if _, err := st.sched.RecrawlSites(ctx); err != nil {
		return res, err
	}
	if err := r.resume(ctx, st, cfg, start); err != nil {
		return res, err
	}
	if cfg.FiltersGiven {
		if err := r.judgeFilteredAgain(ctx, st); err != nil {
			return res, err
		}
	}
	if err := r.judgeSiteFiltersAgain(ctx, st); err != nil {
		return res, err
	}
	if cfg.afterResume != nil {
		cfg.afterResume()
	}
	// A failure that stops the run (stopIfUnwritable) cancels rctx with
	// its cause, which the run returns.
	rctx, stopRun := context.WithCancelCause(ctx)
	defer stopRun(nil)
	r.stop = stopRun
	wctx, stop := context.WithCancel(rctx)
	wg := r.startWorkers(wctx, st, fetchWorkers*cfg.Concurrency)
	wg.Add(1)
	go func() { defer wg.Done(); r.index(wctx) }()
	nextDue, stillDue, runErr := r.drive(rctx, st, cfg, start)
	stop()
	wg.Wait()
	if ctx.Err() == nil && rctx.Err() != nil {
		runErr = context.Cause(rctx)
	}
	if runErr != nil && unwritable(runErr) && !errors.Is(runErr, ErrUnwritable) {
		// Met by the release or the resume, not a worker: said the same.
		runErr = fmt.Errorf("%w: %w", ErrUnwritable, runErr)
	}
	if err := r.waitHandOffs(); err != nil && runErr == nil {
		runErr = err
	}
	if rctx.Err() == nil {
		// The last pages into the search index. (A run stopped early
		// leaves them to the next run, or to a search that can write.)
		if err := d.DB.IndexAll(ctx); err != nil && runErr == nil {
			runErr = err
		}
	}

	// A cancelled run still reports what it did.
	res.StillDue, res.NextDue, res.RecrawlPassContinued, res.RecrawlsStopped = stillDue, nextDue, r.passContinued, r.recrawlsStopped
	res.Crawled, res.Bytes, res.Elapsed = st.crawled.Load(), st.bytes.Load(), time.Since(start)
	if err := d.report(context.WithoutCancel(ctx), &res, start); err != nil && runErr == nil {
		runErr = err
	}
	if cfg.Progress != nil {
		// What is left, for a run stopped by --max-pages or a signal.
		frontier, _ := d.DB.FrontierSize(context.WithoutCancel(ctx), time.Now().Unix())
		p := st.progress(time.Now(), cfg, frontier)
		p.Elapsed = res.Elapsed
		cfg.Progress(p)
	}
	return res, runErr
}

func (cfg Config) withDefaults() Config {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return cfg
}

// stages are one run's four stages over the data directory, and what
// the fetcher has recorded so far.
type stages struct {
	sched      *schedule.Scheduler
	fetcher    *fetch.Fetcher
	parser     *parse.Parser
	summarizer *summarize.Summarizer
	admit      worker // the enqueue queue's
	parse      worker // the parse queue's
	summarize  worker // the summarize queue's
	tally
}

func (r *runner) newStages(cfg Config) *stages {
	d, log := r.d, cfg.Log
	policy := cfg.Policy
	policy.GuessRuledOutNew = true // SQLite: a failed insert costs about what the read it saves does
	policy.FiltersAtRelease = true // one scheduler admits and releases
	st := &stages{sched: schedule.New(d.DB, r.sender(QueueFetch), policy, log)}
	// The summarizer takes each crawl from its task (the fetch stage
	// hands the crawl on as it recorded it), not from the store.
	st.summarizer = summarize.New(d.DB, d.Blobs, cfg.Summarize, log)
	admit := func(ctx context.Context, ev crawl.EnqueueEvent) error { return st.sched.AdmitEach(ctx, ev, nil) }
	st.admit = worker{queue: QueueEnqueue, batch: 256, lanes: 8, key: enqueueKey, handle: func(ctx context.Context, b []byte) error {
		ev, err := crawl.ParseEnqueueEvent(b)
		if err != nil {
			return err
		}
		return admit(ctx, ev)
	}}
	st.summarize = worker{queue: QueueSummarize, batch: 16, lanes: 4, handle: crawl.TaskHandler(st.summarizer.Handle)}
	enqueue := eventInline{inline: r.inline(st.admit), admit: admit}
	// A page's links go to the scheduler as one event, so that they are
	// admitted in one write (schedule.AdmitEach), not one write a link.
	pcfg := cfg.Parse
	pcfg.LinksPerMessage = crawl.MaxEventURLs
	st.parser = parse.New(d.Blobs, d.DB, enqueue, summarizeInline{r.sender(QueueSummarize), st.summarizer}, pcfg, log)
	st.parse = worker{queue: QueueParse, batch: 4, lanes: 1, handle: crawl.TaskHandler(st.parser.Handle)}
	// The fetcher hands a page to the parser directly (inline), which
	// hands it on to the summarizer: a page's parse task is never
	// written, received and deleted (2.2 of a short page's 7.1 writes,
	// BENCHMARKS.md). The hand-off runs behind the fetch worker, which
	// goes on to its next fetch (behind): a crawl recorded and not yet
	// summarized when the run is killed is handed on by the next run.
	st.fetcher = fetch.New(d.DB, newKeptOnce(d.Blobs, d.DB), fetch.Queues{Enqueue: enqueue, Parse: r.behind(st.parse, 2*cfg.Concurrency), Summarize: r.sender(QueueSummarize)},
		cfg.Client, politeness.NewGate(cfg.Concurrency), cfg.Fetch, log)
	// robots.txt kept in the store outlives the run: a resumed crawl
	// keeps each origin's rules until they expire.
	st.fetcher.SharedRobots = d.DB
	// So is a host's Retry-After: the next run sends it nothing before.
	st.fetcher.SharedBackOffs = d.DB
	st.fetcher.OnCrawl = func(cr crawl.Crawl) {
		st.record(cr, time.Now())
		if cfg.afterRecord != nil {
			cfg.afterRecord(cr)
		}
	}
	return st
}

// resume voids the leases a killed process held, re-releases the
// candidates it had released, as new crawls, and hands on the crawls it
// had recorded but not finished (a recorded crawl is never fetched
// twice); marks every known URL due on --recrawl (but when it continues
// a stopped --recrawl pass); and enqueues the seeds.
func (r *runner) resume(ctx context.Context, st *stages, cfg Config, start time.Time) error {
	sched := st.sched
	if err := r.q.ReleaseLeases(ctx, allQueues...); err != nil {
		return err
	}
	// One pass over all of them: a paged loop would pick up the ones it
	// just re-released (queued in this same second) again and again. They
	// are few: at most the fetch budget and the crawls in flight.
	if _, err := sched.Requeue(ctx, 0, math.MaxInt32); err != nil {
		return err
	}
	if err := r.handOn(ctx, st); err != nil {
		return err
	}
	// The hand-ons go on behind the fetcher: all of them finish before
	// anything is released, and one that failed stops the run.
	if err := r.waitHandOffs(); err != nil {
		return err
	}
	// The fetch tasks an earlier version kept in the database are stale
	// now (their candidates were just released again, as new crawls):
	// this version's are in memory (queues).
	if n, err := r.d.DB.Purge(ctx, QueueFetch); err != nil {
		return err
	} else if n > 0 {
		r.log.InfoContext(ctx, "dropped the fetch tasks an earlier version left in the database", "tasks", n)
	}
	// --recrawl makes every known URL due, unless the pass an earlier
	// --recrawl run began is not done: then its URLs not yet crawled are
	// still due, and the run continues it, as "run the same command
	// again to continue" promises (seeds included: one the pass crawled
	// already is not crawled again).
	if cfg.StopRecrawls {
		n, err := r.d.DB.StopRecrawls(ctx)
		if err != nil {
			return err
		}
		r.recrawlsStopped = n
	}
	continued := false
	if cfg.Recrawl {
		_, began, err := r.d.DB.BeginRecrawlPass(ctx, start.Unix(), crawl.CrawlReenqueued)
		if err != nil {
			return err
		}
		continued, r.passContinued = began > 0, began
	}
	var seeds [][]byte
	for _, s := range cfg.Seeds {
		ev := crawl.EnqueueEvent{Version: crawl.EnqueueVersion, URL: s, Seed: true}
		if cfg.Recrawl && !continued {
			ev.EnqueueType = crawl.EnqueueReenqueued
		}
		b, _ := json.Marshal(ev)
		seeds = append(seeds, b)
	}
	return r.sender(QueueEnqueue).Send(ctx, seeds...)
}

// judgeFilteredAgain admits again, by the run's filters, the URLs of no
// site that earlier runs filtered as too-deep or excluded: each as the
// link it was found as (its hops, parent and depth limit).
func (r *runner) judgeFilteredAgain(ctx context.Context, st *stages) error {
	cands, err := r.d.DB.RuledOutByFilters(ctx, 0)
	if err != nil {
		return err
	}
	admitted, err := admitAgain(ctx, st, cands, st.sched.PassesFilters, "the run's filters")
	if err != nil {
		return err
	}
	if admitted > 0 {
		r.log.InfoContext(ctx, "URLs filtered by earlier runs admitted by this run's filters", "urls", admitted, "judged", len(cands))
	}
	return nil
}

// admitAgain admits again, each as the link it was found as (its hops,
// parent, depth limit and redirect chain), the candidates passes lets
// through, and returns how many were admitted. The others cost no read
// and no write.
func admitAgain(ctx context.Context, st *stages, cands []crawl.Candidate, passes func(crawl.Candidate) bool, by string) (int, error) {
	admitted := 0
	for _, c := range cands {
		if !passes(c) {
			continue
		}
		ev := crawl.EnqueueEvent{Version: crawl.EnqueueVersion, URL: c.URL, Hops: c.Hops, Parent: c.Parent, MaxDepth: c.MaxDepth,
			NRedirs: c.NRedirs, OrigURL: c.OrigURL, RedirectChain: c.RedirectChain}
		out, err := st.sched.Admit(ctx, ev)
		if err != nil {
			return admitted, fmt.Errorf("judge %s again by %s: %w", c.URL, by, err)
		}
		if out == schedule.Admitted {
			admitted++
		}
	}
	return admitted, nil
}

// judgeSiteFiltersAgain admits again, for each site whose filters or
// limits (MaxURLs, MaxResources) changed since it last did (crawler site
// set), the site's URLs recorded excluded or too-many-urls that the
// site's filters and the run's now let through, each as the link it was
// found as, in the order they were found, as far as the limits leave
// room: a filter taken off a site, or a limit raised, must not leave what
// it kept out filtered for good (the pages that link to them answer 304,
// and nothing finds them again). A site judged by its filters and
// limits as they are costs a read of a row.
func (r *runner) judgeSiteFiltersAgain(ctx context.Context, st *stages) error {
	sites, err := r.d.DB.Sites(ctx)
	if err != nil {
		return err
	}
	for _, site := range sites {
		filters, limits := crawl.FiltersKey(site.Filters), fmt.Sprintf("%d %d", site.MaxURLs, site.MaxResources)
		key := filters + " " + limits
		judged, err := r.d.DB.SiteFiltersJudged(ctx, site.ID)
		if err != nil {
			return err
		}
		if judged == key {
			continue
		}
		// The URLs recorded too-many-urls only when the limits changed:
		// a link past its page's max_urls_from_page is one too, and a
		// changed filter must not admit it. (A key without limits, from
		// a version that kept none, changed none.)
		judgedFilters, judgedLimits, hasLimits := strings.Cut(judged, " ")
		if judgedFilters == filters && (!hasLimits || judgedLimits == limits) {
			if err := r.d.DB.SiteJudged(ctx, site.ID, key, time.Now().Unix()); err != nil {
				return err
			}
			continue
		}
		cands, err := r.d.DB.SiteRuledOut(ctx, site.ID, hasLimits && judgedLimits != limits)
		if err != nil {
			return err
		}
		admitted, err := admitAgain(ctx, st, cands, st.sched.SiteAdmits, "its site's filters and limits")
		if err != nil {
			return err
		}
		if err := r.d.DB.SiteJudged(ctx, site.ID, key, time.Now().Unix()); err != nil {
			return err
		}
		if admitted > 0 {
			r.log.InfoContext(ctx, "URLs a site's earlier filters or limits ruled out, admitted by them now", "site", site.ID, "urls", admitted, "judged", len(cands))
		}
	}
	return nil
}

// handOn hands the crawls a killed run recorded but did not hand on
// (its fetch tasks were in memory: queues) to the next stages, before
// anything is released: released again meanwhile, a candidate would no
// longer name the crawl, and a second kill would leave it without its
// links and summary. The fetcher finds each crawl recorded and hands it
// on without fetching it again. A crawl whose parse or summarize task
// is in its durable queue, or was dead-lettered, is left to that queue.
// A crawl that cannot be handed on stops the run, with the reason: the
// next run tries again.
func (r *runner) handOn(ctx context.Context, st *stages) error {
	cs, err := r.d.DB.NotHandedOn(ctx)
	if err != nil || len(cs) == 0 {
		return err
	}
	queued := map[string]bool{}
	for _, q := range []string{QueueParse, QueueSummarize, sqlite.DeadLetterQueue(QueueParse), sqlite.DeadLetterQueue(QueueSummarize)} {
		bodies, err := r.d.DB.Bodies(ctx, q)
		if err != nil {
			return err
		}
		for _, b := range bodies {
			var t struct {
				CrawlUUID string `json:"crawl_uuid"`
			}
			if json.Unmarshal(b, &t) == nil && t.CrawlUUID != "" {
				queued[t.CrawlUUID] = true
			}
		}
	}
	n := 0
	for _, c := range cs {
		if queued[c.CrawlUUID] {
			continue
		}
		if err := st.fetcher.Handle(ctx, st.sched.FetchTask(c)); err != nil {
			return fmt.Errorf("hand on the crawl %s of %s, recorded by a run that was stopped: %w", c.CrawlUUID, c.URL, err)
		}
		n++
	}
	if n > 0 {
		r.log.InfoContext(ctx, "handed on the crawls a stopped run had recorded", "crawls", n)
	}
	return nil
}

// A worker receives a batch of messages and handles them on lanes
// goroutines at once (a message's lane chosen by its key, so messages
// with the same key are handled in order), then deletes the handled
// ones in one write. Lanes are what let the writer group the stages'
// writes: a single goroutine handling a batch would wait for a commit
// per message.
type worker struct {
	queue        string
	batch, lanes int
	key          func(body []byte) string // nil: messages spread evenly
	handle       func(context.Context, []byte) error
}

// fetchWorkers is how many fetch workers run per request in flight
// (Config.Concurrency, which the politeness gate bounds). A worker
// holds its page from the request until the crawl is recorded, and the
// one writer is busy most of a crawl: with a worker per request, all of
// them at times waited for the writer while the host's slot stood free
// (BENCHMARKS.md, "Two fetch workers a request"). The workers beyond
// the requests in flight wait for the gate, or store and record the
// pages they fetched.
const fetchWorkers = 2

// parsers is how many parse workers run. The fetched pages are parsed
// as they are handed on (newStages); the parse queue holds only
// the tasks the hand-off failed on (to be retried, and dead-lettered in
// the end) and those a killed run of an earlier version left.
var parsers = runtime.GOMAXPROCS(0)

// startWorkers starts each queue's workers; they stop when ctx is done.
func (r *runner) startWorkers(ctx context.Context, st *stages, fetchers int) *sync.WaitGroup {
	var wg sync.WaitGroup
	spawn := func(n int, w worker) {
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() { defer wg.Done(); r.work(ctx, w) }()
		}
	}
	spawn(1, st.admit)
	spawn(fetchers, worker{queue: QueueFetch, batch: 1, lanes: 1, handle: crawl.TaskHandler(st.fetcher.Handle)})
	spawn(parsers, st.parse)
	spawn(1, st.summarize)
	return &wg
}

// enqueueKey is an enqueue event's URL: two events for one URL in a
// batch are admitted one after the other, not racing for the candidate.
func enqueueKey(body []byte) string {
	var ev struct {
		URL string `json:"url"`
	}
	json.Unmarshal(body, &ev) // a body that does not decode fails in the handler
	return ev.URL
}

// driveEvery is how often drive looks without being woken: for
// candidates that become due with time, and for progress.
const driveEvery = 200 * time.Millisecond

// drive releases due candidates as fetch workers free up (two tasks
// queued per worker, within the --max-pages budget) and reports progress,
// until the queues are empty and nothing is due, or ctx is done. It says
// whether candidates are left due later (a next run has work). It runs
// when woken (a worker handled messages: a fetch slot is free, or links
// were admitted) or every driveEvery.
func (r *runner) drive(ctx context.Context, st *stages, cfg Config, start time.Time) (nextDue int64, stillDue bool, err error) {
	released := 0
	tick := time.NewTicker(driveEvery)
	defer tick.Stop()
	lastProgress, lastSites, lastFrontier := time.Time{}, time.Now(), time.Time{}
	frontier := 0
	for {
		select {
		case <-ctx.Done():
			return 0, false, ctx.Err()
		case <-r.driveWake:
		case <-tick.C:
		}
		if time.Since(lastSites) >= schedule.SiteRefreshEvery {
			lastSites = time.Now()
			if err := st.sched.RefreshSites(ctx); err != nil {
				return 0, false, err
			}
			if _, err := st.sched.RecrawlSites(ctx); err != nil {
				return 0, false, err
			}
		}
		fetchPending, err := r.q.Pending(ctx, QueueFetch)
		if err != nil {
			return 0, false, err
		}
		budget := 2*fetchWorkers*cfg.Concurrency - fetchPending
		if cfg.MaxPages > 0 {
			budget = min(budget, cfg.MaxPages-released)
		}
		if budget > 0 {
			n, err := st.sched.Release(ctx, budget)
			if err != nil {
				return 0, false, err
			}
			released += n
			if n > 0 {
				r.notify(QueueFetch)
			}
		}
		pending, err := r.pendingWork(ctx)
		if err != nil {
			return 0, false, err
		}
		if cfg.Progress != nil && time.Since(lastProgress) >= 200*time.Millisecond {
			lastProgress = time.Now()
			if time.Since(lastFrontier) >= time.Second {
				// A count over the frontier's index: once a second is enough.
				lastFrontier = time.Now()
				if frontier, err = r.d.DB.FrontierSize(ctx, lastFrontier.Unix()); err != nil {
					return 0, false, err
				}
			}
			p := st.progress(lastProgress, cfg, frontier)
			p.Pending, p.Elapsed = pending, time.Since(start)
			cfg.Progress(p)
		}
		if pending > 0 {
			continue
		}
		due, err := r.d.DB.DueCandidates(ctx, time.Now().Unix(), 1)
		if err != nil {
			return 0, false, err
		}
		if len(due) == 0 || cfg.MaxPages > 0 && released >= cfg.MaxPages {
			if len(due) == 0 {
				// Nothing due now: a --recrawl pass may be done, and
				// then the next --recrawl begins another.
				if err := r.d.DB.EndRecrawlPass(ctx, crawl.CrawlReenqueued); err != nil {
					return 0, false, err
				}
			}
			// Candidates due later (robots.txt unavailable for a while,
			// or --max-pages reached) wait for the next run.
			return r.d.DB.NextDue(ctx)
		}
	}
}

// indexEvery is how often the indexer looks at the pages summarized
// and not yet in the search and token indexes; it writes them
// (sqlite.IndexPending) while a full batch is waiting, or when the
// oldest has waited indexWithin: how far behind the crawl `crawler
// search` may be while it runs. Full batches, as many as are waiting:
// what a run leaves unindexed when its last page is summarized is
// indexed after it, on one core, while the crawl waits (BENCHMARKS.md,
// "The search index kept up with the crawl").
const (
	indexEvery  = time.Second
	indexWithin = 10 * time.Second
)

// index writes the pages summarized into the indexes until ctx is done.
func (r *runner) index(ctx context.Context) {
	t := time.NewTicker(indexEvery)
	defer t.Stop()
	waiting := time.Time{} // since when piles have waited (zero: none seen waiting)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		waiting = r.indexWaiting(ctx, waiting)
	}
}

// indexWaiting is one look of the indexer: it writes batches while a
// full one waits, or everything once piles have waited indexWithin
// (since waiting), and returns since when the piles left have waited.
// Piles that came in meanwhile, fewer than a batch, wait for a full
// batch (or indexWithin), as the first did.
func (r *runner) indexWaiting(ctx context.Context, waiting time.Time) time.Time {
	pending, err := r.d.DB.Unindexed(ctx)
	if err != nil || pending == 0 {
		return time.Time{}
	}
	if waiting.IsZero() {
		waiting = time.Now()
	}
	if pending < sqlite.IndexBatch && time.Since(waiting) < indexWithin {
		return waiting
	}
	for pending > 0 {
		if _, err := r.d.DB.IndexPending(ctx); err != nil {
			if ctx.Err() == nil {
				r.log.Error("indexing failed", "err", err)
				r.stopIfUnwritable(err)
			}
			break
		}
		if pending, err = r.d.DB.Unindexed(ctx); err != nil || pending < sqlite.IndexBatch {
			break
		}
	}
	return time.Time{}
}

// report fills in the run's outcomes, the candidates ruled out and the
// dead letters (those of the run, which began at start, and all); the
// agent is marked finished.
func (d *DataDir) report(ctx context.Context, res *Result, start time.Time) error {
	var errs []error
	errs = append(errs, d.DB.FinishAgent(ctx, res.AgentUUID, time.Now().Unix()))
	var err error
	res.Outcomes, err = d.DB.OutcomeCounts(ctx, res.AgentUUID)
	errs = append(errs, err)
	res.Filtered, err = d.DB.FilteredCounts(ctx)
	errs = append(errs, err)
	res.DeadLetters, res.DeadLettersAll, err = d.DB.DeadLetterCounts(ctx, start, allQueues...)
	errs = append(errs, err)
	return errors.Join(errs...)
}

type runner struct {
	d          *DataDir
	q          *queues
	log        *slog.Logger
	wake       map[string]chan struct{}
	driveWake  chan struct{}  // see drive
	lease      time.Duration  // how long a received message stays hidden; extended while it is handled
	handingOn  atomic.Int64   // pages being handed on behind the fetch workers (behind)
	handOffs   sync.WaitGroup // their goroutines
	handOffMu  sync.Mutex
	handOffErr error                   // the first hand-off neither handled nor queued (behind)
	stop       context.CancelCauseFunc // ends the run with a cause (stopIfUnwritable)
	// passContinued: when the --recrawl pass this run continued began
	// (0: it began one, or none).
	passContinued int64
	// recrawlsStopped: the URLs whose recrawls Config.StopRecrawls stopped.
	recrawlsStopped int
}

// pendingWork counts the messages waiting or in hand in every queue and
// the hand-offs under way (behind), in the order that misses none of
// them as they move on: first the fetch queue in memory (a fetch task
// is deleted only after its hand-off is counted), then the hand-offs (one
// ends only after what failed in it is queued), then the database's
// queues.
func (r *runner) pendingWork(ctx context.Context) (int, error) {
	n, err := r.q.Pending(ctx, QueueFetch)
	if err != nil {
		return 0, err
	}
	n += int(r.handingOn.Load())
	k, err := r.q.Pending(ctx, durableQueues...)
	return n + k, err
}

func (r *runner) wakeDrive() {
	select {
	case r.driveWake <- struct{}{}:
	default:
	}
}

func (r *runner) notify(q string) {
	select {
	case r.wake[q] <- struct{}{}:
	default:
	}
}

type queueSender struct {
	r *runner
	q string
}

func (s queueSender) Send(ctx context.Context, bodies ...[]byte) error {
	if err := s.r.q.Send(ctx, s.q, bodies...); err != nil {
		return err
	}
	s.r.notify(s.q)
	return nil
}

func (r *runner) sender(q string) queueSender { return queueSender{r: r, q: q} }

// idlePoll is how often a worker with nothing to do looks at its queue
// unwoken. A send wakes a worker, a worker that took a full batch wakes
// the next, and a retried message wakes its queue when it is due
// (settle), so this only catches what none of them announces, such as
// a lease that ran out. A look is a read (DB.Waiting), and a receive,
// which is a write, follows only when something waits: 1,211 of a
// PostgreSQL-tree crawl's 2,945 receives were empty when workers
// received to look.
const idlePoll = time.Second

// work takes messages from a queue until ctx is done: a handled message
// is deleted; a transient failure is retried with backoff and, after
// retryPolicy's tries, dead-lettered with its reason, as is a message
// that can never be handled.
func (r *runner) work(ctx context.Context, w worker) {
	for ctx.Err() == nil {
		// A receive is a write; whether anything waits is a read, and
		// a worker done with its batch mostly finds nothing.
		if waiting, err := r.q.Waiting(ctx, w.queue); err == nil && !waiting {
			r.idle(ctx, w.queue)
			continue
		}
		msgs, err := r.q.Receive(ctx, w.queue, w.batch, r.lease)
		if err != nil {
			if ctx.Err() == nil && !r.stopIfUnwritable(err) {
				r.log.Error("receive failed", "queue", w.queue, "err", err)
				_ = crawl.Sleep(ctx, time.Second)
			}
			continue
		}
		if len(msgs) == 0 {
			r.idle(ctx, w.queue)
			continue
		}
		if len(msgs) == w.batch {
			// A send wakes one worker: if more are waiting, the next
			// idle worker takes them (and wakes the next in turn).
			if more, err := r.q.Waiting(ctx, w.queue); err == nil && more {
				r.notify(w.queue)
			}
		}
		handled := r.handleBatch(ctx, w, msgs)
		// The handled messages of a batch go in one write: a message
		// handled but not yet deleted when the process dies is handled
		// again, which every stage takes (they are idempotent).
		if err := r.q.Delete(context.WithoutCancel(ctx), w.queue, handled...); err != nil {
			r.log.Error("deleting handled messages failed", "queue", w.queue, "err", err)
			r.stopIfUnwritable(err)
		}
		r.wakeDrive()
	}
}

// idle waits until queue q is woken, idlePoll has passed, or ctx is done.
func (r *runner) idle(ctx context.Context, q string) {
	t := time.NewTimer(idlePoll)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-r.wake[q]:
	case <-t.C:
	}
}

// handleBatch handles a batch on the worker's lanes, settles the
// messages that failed, and returns the IDs of those handled.
func (r *runner) handleBatch(ctx context.Context, w worker, msgs []sqlite.Message) []string {
	var mu sync.Mutex
	var handled []string
	onLanes(w, len(msgs), func(i int) []byte { return msgs[i].Body }, func(i int) bool {
		m := msgs[i]
		err := r.handle(ctx, w.queue, m, w.handle)
		if ctx.Err() != nil {
			return false // shutting down: the messages not deleted wait for the next run
		}
		if err != nil {
			r.settle(ctx, w.queue, m, err)
			return true
		}
		mu.Lock()
		handled = append(handled, m.ID)
		mu.Unlock()
		return true
	})
	return handled
}

// onLanes calls f for items 0..n-1 on the worker's lanes: the items of
// a lane in order, the lanes at once. A lane stops when f returns false.
func onLanes(w worker, n int, body func(i int) []byte, f func(i int) bool) {
	lanes := make([][]int, min(w.lanes, n))
	for i := range n {
		k := i
		if w.key != nil {
			h := fnv.New32a()
			h.Write([]byte(w.key(body(i))))
			k = int(h.Sum32() >> 1)
		}
		lanes[k%len(lanes)] = append(lanes[k%len(lanes)], i)
	}
	var wg sync.WaitGroup
	for _, lane := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, i := range lane {
				if !f(i) {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// handle runs h on one message, extending the message's lease every
// half lease until h returns: a handler waiting its turn at a slow host
// must not see its message handed to a second worker.
func (r *runner) handle(ctx context.Context, q string, m sqlite.Message, h func(context.Context, []byte) error) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(r.lease / 2)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if err := r.q.Retry(ctx, q, m.ID, r.lease); err != nil && ctx.Err() == nil {
					r.log.Error("extending a message lease failed", "queue", q, "err", err)
					r.stopIfUnwritable(err)
				}
			}
		}
	}()
	err := h(ctx, m.Body)
	close(done)
	wg.Wait()
	return err
}

// settle decides what becomes of a message that failed: retried with
// backoff or, after retryPolicy's tries, dead-lettered with its reason.
func (r *runner) settle(ctx context.Context, q string, m sqlite.Message, err error) {
	if r.stopIfUnwritable(err) {
		// Not retried: the run stops, and the message waits for the next.
		r.log.ErrorContext(ctx, "the data directory cannot be written; stopping", "queue", q, "err", err)
		return
	}
	var serr error
	if v := retryPolicy.Decide(err, m.ReceiveCount); v.Action == crawl.DeadLetter {
		r.log.WarnContext(ctx, "message cannot be handled; moved to dead-letter queue", "queue", q, "tries", m.ReceiveCount,
			"reason", v.Reason, "body", crawl.Truncate(string(m.Body), 512))
		serr = r.q.DeadLetter(ctx, q, m.ID, v.Reason)
	} else {
		r.log.WarnContext(ctx, "message failed; will retry", "queue", q, "try", m.ReceiveCount, "retry_in", v.Delay, "err", err)
		serr = r.q.Retry(ctx, q, m.ID, v.Delay)
		if serr == nil {
			time.AfterFunc(v.Delay, func() { r.notify(q) })
		}
	}
	if serr != nil && !errors.Is(serr, context.Canceled) {
		r.log.Error("settling message failed", "queue", q, "err", serr)
		r.stopIfUnwritable(serr)
	}
}
