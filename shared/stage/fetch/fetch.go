// Package fetch is the fetch stage: it crawls one released candidate,
// records the crawl (crawl_log, request, file, file_text, redirect),
// stores the raw body, and hands the result on: HTML to the parse queue,
// everything else to the summarize queue, redirect targets to the
// enqueue queue.
package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/robots"
	"github.com/serverless-crawler/crawler/shared/web/textenc"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// Store is what the fetch stage needs of the metadata store.
type Store interface {
	GetCandidate(ctx context.Context, url string) (crawl.Candidate, error)
	// RecordCrawl records a crawl and its candidate's new state (false:
	// the crawl was recorded already). A 304 (crawl.ExitUnchanged) it
	// records with a candidate that has a contentful crawl is settled
	// with it, and no summarize task is sent for it: the SQLite store
	// applies its summary (crawl.SummaryOf), the DynamoDB store notes it
	// on the candidate for the readers to fold in (docs/aws.md).
	RecordCrawl(ctx context.Context, cr crawl.Crawl, c *crawl.Candidate) (bool, error)
	GetCrawl(ctx context.Context, crawlUUID string) (crawl.Crawl, error)
	// PutCandidate writes a candidate (crawl.ErrConflict: another
	// writer's came first): a crawl put off, not recorded.
	PutCandidate(ctx context.Context, c crawl.Candidate) error
}

// Bodies keeps raw bodies: Keep stores a response's body and returns
// the key it is read back by (the parse stage's Blobs.Get), once it is
// stored. blobfs and s3blob keep one body a key; warc.Packer many to a
// WARC file.
type Bodies interface {
	Keep(ctx context.Context, x warc.Exchange) (string, error)
}

// Sender sends messages to one queue.
type Sender interface {
	Send(ctx context.Context, bodies ...[]byte) error
}

// Politeness spaces requests per host (see package politeness): Wait
// takes the host's one in-flight slot once the delay has passed since
// the last request to it finished; done gives the slot back. Sleep waits
// between a request and its retry with the host's slot held (the host
// asked us to back off), and takes up none of the room for requests to
// other hosts meanwhile.
type Politeness interface {
	Wait(ctx context.Context, host string, delay time.Duration) (done func(), err error)
	Sleep(ctx context.Context, host string, d time.Duration) error
}

// RobotsStore shares fetched robots.txt files between processes (the
// Lambda home, where each execution environment has its own memory), so
// that robots.txt is fetched once per origin and TTL, not once per
// environment. Get returns crawl.ErrNotFound when there is none.
type RobotsStore interface {
	GetRobots(ctx context.Context, origin string) (crawl.RobotsFile, error)
	PutRobots(ctx context.Context, origin string, f crawl.RobotsFile) error
}

// BackOffStore keeps, past the process, until when a host asked not to
// be sent requests (a Retry-After longer than a crawl waits): the next
// run of the embedded home sends the host nothing until then either.
// HostBackOffs returns those still to come.
type BackOffStore interface {
	HostBackOffs(ctx context.Context, now time.Time) (map[string]time.Time, error)
	PutHostBackOff(ctx context.Context, host string, until time.Time) error
}

// Config is the fetch stage's settings.
type Config struct {
	AgentUUID       string
	UserAgent       string
	Delay           time.Duration // least time between two request starts to a host
	Timeout         time.Duration // per request: connect, headers and body
	MaxResourceSize int64         // bodies over this are cut off (ExitTooLarge)
	RecrawlPeriod   time.Duration // 0: crawled URLs are not due again by themselves (but see KeptRecrawlPeriod)
	// KeptRecrawlPeriod, set when the run was given no recrawl period
	// (crawler recrawl from cron), keeps a URL of no site on the period
	// its last crawl followed, and gives a URL of no site never crawled
	// under one this period: the data directory's (0: none).
	KeptRecrawlPeriod *time.Duration
	MaxRedirects      int           // redirect hops followed from one URL
	MaxRetries        int           // further attempts after a 429, 503 or transient network error
	RetryBase         time.Duration // first backoff; doubled per attempt, plus jitter
	MaxRetryAfter     time.Duration // longest Retry-After waited for within one crawl
	MaxBackOff        time.Duration // longest Retry-After honoured by keeping the host's URLs waiting
	MaxCrawlDelay     time.Duration // robots.txt Crawl-delay is honoured up to this
	RobotsTTL         time.Duration // how long robots.txt rules are kept
	RobotsErrorTTL    time.Duration // how long an unavailable robots.txt disallows its host
}

// DefaultConfig returns the defaults named in the docs.
func DefaultConfig() Config {
	return Config{
		UserAgent:       crawl.DefaultUserAgent,
		Delay:           crawl.DefaultDelay,
		Timeout:         crawl.DefaultTimeout,
		MaxResourceSize: crawl.DefaultMaxResourceSize,
		MaxRedirects:    10,
		MaxRetries:      2,
		RetryBase:       500 * time.Millisecond,
		MaxRetryAfter:   30 * time.Second,
		MaxBackOff:      24 * time.Hour,
		MaxCrawlDelay:   60 * time.Second,
		RobotsTTL:       24 * time.Hour,
		RobotsErrorTTL:  10 * time.Minute,
	}
}

// Queues are where the fetch stage sends its results.
type Queues struct {
	Enqueue, Parse, Summarize Sender
}

// Fetcher is the fetch stage.
type Fetcher struct {
	backOffMu     sync.Mutex
	backOff       map[string]time.Time // host -> until when it asked not to be sent requests (Retry-After)
	backOffLoaded bool                 // SharedBackOffs read into backOff

	store        Store
	bodies       Bodies
	q            Queues
	client       *http.Client
	robotsClient *http.Client
	robots       *robots.Cache
	polite       Politeness
	cfg          Config
	log          *slog.Logger
	now          func() time.Time
	// OnCrawl, if set, is called with every crawl newly recorded.
	OnCrawl func(crawl.Crawl)
	// SharedRobots, if set, is read before robots.txt is fetched and
	// written after.
	SharedRobots RobotsStore
	// SharedBackOffs, if set, is read once, before the first back-off
	// is looked up, and written with every host's back-off.
	SharedBackOffs BackOffStore
}

// New returns a fetch stage. Pages are fetched without following
// redirects (the stage records each hop as a crawl of its own); robots.txt
// follows up to five (RFC 9309). Both use client's transport.
func New(store Store, bodies Bodies, q Queues, client *http.Client, polite Politeness, cfg Config, log *slog.Logger) *Fetcher {
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	c.Transport = keepLocation{rt}
	rc := *client
	rc.CheckRedirect = func(_ *http.Request, via []*http.Request) error {
		if len(via) > 5 {
			return fmt.Errorf("robots.txt: more than 5 redirects")
		}
		return nil
	}
	return &Fetcher{store: store, bodies: bodies, q: q, client: &c, robotsClient: &rc, robots: robots.NewCache(),
		polite: polite, cfg: cfg, log: log, now: time.Now}
}

// Handle crawls the candidate of a fetch task. Handling the same task
// twice fetches once: a recorded crawl is only handed on again. (Once
// more, only when the store lost the crawl's log write, see below.)
func (f *Fetcher) Handle(ctx context.Context, t crawl.FetchTask) error {
	if t.URL == "" || t.CrawlUUID == "" {
		return crawl.E("fetch", crawl.KindInvalid, fmt.Errorf("fetch task needs url and crawl_uuid"))
	}
	c, err := f.store.GetCandidate(ctx, t.URL)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", t.URL, err)
	}
	// A candidate still queued for this crawl has not recorded it: a
	// store writes the candidate before (or with) the crawl's log, so
	// the log is read only when the candidate has moved on. On a first
	// delivery, the common case, that is a read fewer.
	if c.CrawlUUID != t.CrawlUUID || c.State != crawl.StateQueued {
		if cr, err := f.store.GetCrawl(ctx, t.CrawlUUID); err == nil {
			return f.forward(ctx, t, c, cr, false)
		} else if !errors.Is(err, crawl.ErrNotFound) {
			return fmt.Errorf("fetch %s: %w", t.URL, err)
		}
	}
	switch {
	case c.CrawlUUID != t.CrawlUUID:
		f.log.DebugContext(ctx, "dropping stale fetch task", "url", t.URL, "crawl_uuid", t.CrawlUUID, "current", c.CrawlUUID)
		return nil
	case c.State == crawl.StateQueued:
	case c.State == crawl.StateCrawled || c.State == crawl.StateDue:
		// The candidate shows this crawl done, and the log has no
		// crawl of that uuid: a store that writes the two apart (the
		// DynamoDB one) was stopped between them. Fetch again: the
		// crawl's RecordCrawl writes the missing log item.
		f.log.InfoContext(ctx, "fetching again a crawl recorded without its log", "url", t.URL, "crawl_uuid", t.CrawlUUID)
	default:
		f.log.DebugContext(ctx, "dropping stale fetch task", "url", t.URL, "crawl_uuid", t.CrawlUUID, "state", c.State)
		return nil
	}
	// A fetch again of a crawl recorded without its log asks for the
	// page whatever it was: the validators the candidate holds are the
	// ones that crawl recorded, and a 304 to them would confirm content
	// that was never logged.
	refetch := c.State != crawl.StateQueued
	fc := c
	if refetch {
		fc.LastContentfulETag, fc.LastContentfulModified = nil, nil
	}
	out, err := f.crawl(ctx, fc, t)
	if err != nil {
		return crawl.E("fetch "+t.URL, crawl.KindTransient, err)
	}
	if !out.putOff.IsZero() {
		return f.putOff(ctx, c, t, out.putOff)
	}
	cr := out.cr
	var settled bool // a 304 summarized as it was recorded
	for attempt := 0; ; attempt++ {
		next := f.afterCrawl(c, out, t)
		cand := &next
		if c.CrawlUUID != "" && c.CrawlUUID != t.CrawlUUID || c.LastCrawlTime != nil && *c.LastCrawlTime > cr.Log.TimeStarted {
			// Released again while this crawl ran (a requeue of a
			// release thought lost), or crawled since: the candidate is
			// a newer crawl's. This crawl is recorded alone, so that
			// what it saw is kept and summarized, and the candidate is
			// left to the other. (A candidate held meanwhile, its site
			// disabled or suspended, names no crawl: this crawl is
			// recorded into it, as it would have been a moment before.)
			f.log.InfoContext(ctx, "recording a crawl alone: its candidate moved on to a newer crawl meanwhile", "url", t.URL,
				"crawl_uuid", t.CrawlUUID, "current", c.CrawlUUID)
			cand = nil
		}
		fresh, err := f.store.RecordCrawl(ctx, cr, cand)
		if errors.Is(err, crawl.ErrConflict) && attempt < 4 {
			if c, err = f.store.GetCandidate(ctx, t.URL); err != nil {
				return fmt.Errorf("fetch %s: re-read candidate: %w", t.URL, err)
			}
			continue
		}
		if err != nil {
			return err
		}
		if fresh && f.OnCrawl != nil {
			f.OnCrawl(cr)
		}
		if !fresh {
			// Another delivery of the task recorded the crawl first:
			// what is handed on is the crawl as recorded, not this
			// fetch of it.
			if cr, err = f.store.GetCrawl(ctx, t.CrawlUUID); err != nil {
				return fmt.Errorf("fetch %s: read the crawl recorded: %w", t.URL, err)
			}
		}
		// Settled: a 304 this delivery recorded with its candidate, which
		// holds the content it confirmed. (A fetch again after a lost
		// log write finds the candidate written by the first fetch.)
		settled = fresh && cand != nil && !refetch && cr.Log.ExitCode == crawl.ExitUnchanged && next.LastContentfulCrawlTime != nil
		break
	}
	return f.forward(ctx, t, c, cr, settled)
}

// afterCrawl returns the candidate as the crawl leaves it.
func (f *Fetcher) afterCrawl(c crawl.Candidate, out outcome, t crawl.FetchTask) crawl.Candidate {
	cr := out.cr
	code := cr.Log.ExitCode
	at := cr.Log.TimeStarted
	c.LastCrawlTime, c.LastCrawlExitCode = &at, &code
	if code.Contentful() {
		c.LastContentfulCrawlTime = &at
		c.LastContentfulETag, c.LastContentfulModified = nil, nil
		if n := len(cr.Requests); n > 0 {
			c.LastContentfulETag = cr.Requests[n-1].HTTPETag
			c.LastContentfulModified = cr.Requests[n-1].ServerLastModified
		}
	}
	if n := len(cr.Requests); code == crawl.ExitRedirect ||
		n > 0 && cr.Requests[n-1].HTTPStatusCode != nil && crawl.Gone(*cr.Requests[n-1].HTTPStatusCode) {
		// The page redirects or is gone (its content's generation
		// closes): the next crawl asks for it whole, so that a page put
		// back as it was comes back with a 200, not a 304 that confirms
		// content no longer open.
		c.LastContentfulETag, c.LastContentfulModified = nil, nil
	}
	if crawl.ObservedAtFetch(code) {
		c.MRate, c.MRateCounter = crawl.ObserveChange(c.MRate, c.MRateCounter, false)
	}
	c.State = crawl.StateCrawled
	switch {
	case !out.retryAt.IsZero():
		// robots.txt was unavailable, or the server asked to wait longer
		// than a crawl waits: try again then.
		c.State, c.DueAt = crawl.StateDue, out.retryAt.Unix()
	case f.recrawlPeriod(t, c) > 0:
		// Due again after the period scaled by how often the page was
		// seen to change (crawl.NextVisit); the summary of this crawl,
		// which sees whether it changed, moves the date.
		p := f.recrawlPeriod(t, c)
		c.State, c.CrawlType = crawl.StateDue, crawl.CrawlRecrawl
		c.DueAt, c.RecrawlEvery = crawl.NextVisit(at, p, c.MRate, c.MRateCounter), int64(p/time.Second)
	default:
		c.RecrawlEvery = 0
	}
	return c
}

// recrawlPeriod is the period a URL's recrawls follow: its site's
// RecrawlPeriod (carried by the task), else the crawl's; for a URL of no
// site in a run given none (KeptRecrawlPeriod), the one its last crawl
// followed, else the data directory's. A site's URLs follow the site:
// its period 0 and a run given none stop their recrawls.
func (f *Fetcher) recrawlPeriod(t crawl.FetchTask, c crawl.Candidate) time.Duration {
	switch {
	case t.RecrawlMin > 0:
		return time.Duration(t.RecrawlMin) * time.Minute
	case f.cfg.RecrawlPeriod > 0 || f.cfg.KeptRecrawlPeriod == nil || c.SiteID != "":
		return f.cfg.RecrawlPeriod
	case c.RecrawlEvery > 0:
		return time.Duration(c.RecrawlEvery) * time.Second
	}
	return *f.cfg.KeptRecrawlPeriod
}

// forward hands a recorded crawl of candidate c on to the next stages
// (a redirect's target inherits c's redirect chain, which recording a
// crawl does not change). A 304 this delivery recorded (settled) is
// summarized already; one recorded before (a redelivery) is summarized
// again, which changes nothing if it was.
func (f *Fetcher) forward(ctx context.Context, t crawl.FetchTask, c crawl.Candidate, cr crawl.Crawl, settled bool) error {
	// A target longer than an event may carry could not be kept either
	// (crawl.MaxKeptURLLength): it stays in the crawl's redirect row.
	if r := cr.Redirect; r != nil && cr.Log.ExitCode == crawl.ExitRedirect && len(r.ToURL) <= crawl.MaxURLLength {
		orig := c.OrigURL
		if orig == "" {
			orig = c.URL
		}
		ev := crawl.EnqueueEvent{
			URL: r.ToURL, Hops: t.Hops, MaxDepth: t.MaxDepth, Parent: t.URL, NRedirs: c.NRedirs + 1, OrigURL: orig,
			RedirectChain: append(append([]string{}, c.RedirectChain...), c.URL),
		}
		// A forced crawl follows its redirect now, even to a known
		// target. A recrawl (reenqueued, or due again) does not: every
		// known URL, the target among them, is due in it by itself, and
		// requeueing a target already crawled in this recrawl would fetch
		// it twice.
		if cr.Log.CrawlType == crawl.CrawlForced {
			// Asked for when the redirect's crawl started, on every
			// delivery of this task: a target crawled since is not
			// crawled again when the task is redelivered (MetBy).
			ev.EnqueueType, ev.RequestedAt = crawl.EnqueueReenqueued, cr.Log.TimeStarted
		}
		if err := send(ctx, f.q.Enqueue, ev); err != nil {
			return fmt.Errorf("enqueue redirect target of %s: %w", t.URL, err)
		}
	}
	// The crawl rides in the task, so the summarizer need not read it
	// back (crawl.Carried).
	carried := crawl.Carried(cr)
	if file := cr.File; file != nil && cr.Log.ExitCode.Contentful() && Parses(file.MIMEType) {
		pt := crawl.ParseTask{URL: t.URL, CrawlUUID: t.CrawlUUID, Hops: t.Hops, MaxDepth: t.MaxDepth,
			BodyKey: file.BodyKey, MIMEType: file.MIMEType, ContentType: file.ContentType, ContentLanguage: file.ContentLanguage,
			MaxLinks: t.MaxLinks, Sitemap: textenc.IsPlainText(file.MIMEType) && f.learnedFromRobots(ctx, c), Crawl: carried}
		pt.NoFollow, pt.NoIndex = RobotsTag(file.RobotsTag, f.cfg.UserAgent)
		if err := send(ctx, f.q.Parse, pt); err != nil {
			return fmt.Errorf("send parse task for %s: %w", t.URL, err)
		}
		return nil
	}
	if settled {
		return nil
	}
	if err := send(ctx, f.q.Summarize, crawl.SummarizeTask{URL: t.URL, CrawlUUID: t.CrawlUUID, Crawl: carried}); err != nil {
		return fmt.Errorf("send summarize task for %s: %w", t.URL, err)
	}
	return nil
}

// Parses reports whether the parse stage reads bodies of this MIME
// type: HTML pages and plain text, and XML or gzip files that may be
// sitemaps.
func Parses(mimetype string) bool {
	switch mimetype {
	case "application/xml", "text/xml", "application/gzip", "application/x-gzip":
		return true
	}
	return textenc.IsHTML(mimetype) || textenc.IsPlainText(mimetype)
}

func send(ctx context.Context, s Sender, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.Send(ctx, b)
}

// putOff puts a crawl off until a time its host asked for (a Retry-After
// longer than a crawl waits, answered to an earlier request of this
// fetcher): no request is sent and no crawl recorded; the candidate is
// due again then, under no crawl (a redelivered task is then stale).
func (f *Fetcher) putOff(ctx context.Context, c crawl.Candidate, t crawl.FetchTask, until time.Time) error {
	for attempt := 0; ; attempt++ {
		next := c
		next.State, next.DueAt, next.CrawlUUID = crawl.StateDue, until.Unix(), ""
		err := f.store.PutCandidate(ctx, next)
		if err == nil {
			f.log.InfoContext(ctx, "not requested: its host asked to wait (Retry-After)", "url", t.URL, "until", until.UTC())
			return nil
		}
		if !errors.Is(err, crawl.ErrConflict) || attempt >= 4 {
			return fmt.Errorf("fetch %s: put off until %s: %w", t.URL, until.UTC().Format(time.RFC3339), err)
		}
		// Written meanwhile (an admission found it again): put off what
		// is there, while it is still queued for this task's crawl.
		if c, err = f.store.GetCandidate(ctx, t.URL); err != nil {
			return fmt.Errorf("fetch %s: re-read candidate: %w", t.URL, err)
		}
		if c.State != crawl.StateQueued || c.CrawlUUID != t.CrawlUUID {
			return nil // moved on: its state stands
		}
	}
}

// hostBackOff returns until when host asked not to be sent requests, if
// that is still to come.
func (f *Fetcher) hostBackOff(ctx context.Context, host string) (time.Time, bool) {
	f.backOffMu.Lock()
	defer f.backOffMu.Unlock()
	if !f.backOffLoaded && f.SharedBackOffs != nil {
		// Read under the lock: once a run, before its first request.
		kept, err := f.SharedBackOffs.HostBackOffs(ctx, f.now())
		if err != nil {
			// Not fatal: the hosts told to wait are then sent at most
			// one request each before they are told again.
			f.log.WarnContext(ctx, "could not read the hosts' back-offs", "error", err)
		}
		for h, u := range kept {
			f.noteBackOffLocked(h, u)
		}
		f.backOffLoaded = err == nil
	}
	until, ok := f.backOff[host]
	if ok && !f.now().Before(until) {
		delete(f.backOff, host)
		return time.Time{}, false
	}
	return until, ok
}

// backOffHost notes that host asked not to be sent requests until then,
// and keeps it in SharedBackOffs.
func (f *Fetcher) backOffHost(ctx context.Context, host string, until time.Time) {
	f.backOffMu.Lock()
	f.noteBackOffLocked(host, until)
	f.backOffMu.Unlock()
	if f.SharedBackOffs != nil {
		if err := f.SharedBackOffs.PutHostBackOff(ctx, host, until); err != nil {
			f.log.WarnContext(ctx, "could not keep a host's back-off past the run", "host", host, "until", until, "error", err)
		}
	}
}

func (f *Fetcher) noteBackOffLocked(host string, until time.Time) {
	if f.backOff == nil {
		f.backOff = map[string]time.Time{}
	}
	now := f.now()
	for h, u := range f.backOff {
		if !now.Before(u) {
			delete(f.backOff, h) // a long-lived fetcher meets many hosts
		}
	}
	if until.After(f.backOff[host]) {
		f.backOff[host] = until
	}
}
