package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/pipeline"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/report"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/web/safedial"
	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
)

// regexpList is a repeatable flag of regular expressions.
type regexpList []*regexp.Regexp

func (l *regexpList) String() string {
	var s []string
	for _, re := range *l {
		s = append(s, re.String())
	}
	return strings.Join(s, " ")
}

func (l *regexpList) Set(v string) error {
	re, err := crawl.CompileFilter(v)
	if err != nil {
		return err
	}
	*l = append(*l, re)
	return nil
}

// crawlFlags are the flags of `crawler crawl` (and `crawler demo`).
type crawlFlags struct {
	data            string
	maxDepth        int
	maxPages        int
	concurrency     int
	delay           time.Duration
	timeout         time.Duration
	include         regexpList
	exclude         regexpList
	userAgent       string
	recrawl         bool
	recrawlPeriod   time.Duration
	recrawlPeriodOn bool // --recrawl-period was given (0 included)
	filtersGiven    bool // --max-depth, --include or --exclude was given
	maxURLsFromPage int
	maxResourceSize int64
	followNofollow  bool
	tokens          bool
	logLevel        string
	quiet           bool
	allowPrivate    bool
}

func (f *crawlFlags) register(fs *flag.FlagSet) {
	d := fetch.DefaultConfig()
	fs.StringVar(&f.data, "data", "crawl-data", "data `directory`: database, bodies and queues")
	fs.IntVar(&f.maxDepth, "max-depth", -1, "do not fetch URLs more than `N` hops from a seed (a seed is hop 0; -1: no limit)")
	fs.IntVar(&f.maxPages, "max-pages", 0, "fetch at most `N` URLs in this run (0: no limit)")
	fs.IntVar(&f.concurrency, "concurrency", 4, "fetch up to `N` URLs at once (still one at a time per host)")
	fs.DurationVar(&f.delay, "delay", d.Delay, "least time between two requests to one host (0: no delay, for local benchmarks)")
	fs.DurationVar(&f.timeout, "timeout", d.Timeout, "per request: connect, headers and body")
	fs.Var(&f.include, "include", "only crawl URLs matching this `regexp` (repeatable)")
	fs.Var(&f.exclude, "exclude", "do not crawl URLs matching this `regexp` (repeatable)")
	fs.StringVar(&f.userAgent, "user-agent", d.UserAgent, "send `UA` as the User-Agent header; its first word is the product token robots.txt groups are matched against")
	fs.BoolVar(&f.recrawl, "recrawl", false, "make every known URL due now (seed 004 reenqueued), with conditional GET")
	fs.DurationVar(&f.recrawlPeriod, "recrawl-period", 0, "make each page due again after about this long, sooner if it changes often, later if never (0: no recrawl; a site's own period wins; not given: the period the data directory's pages were crawled under)")
	fs.IntVar(&f.maxURLsFromPage, "max-urls-from-page", 5000, "follow at most `N` links of one page (0: no limit)")
	fs.Int64Var(&f.maxResourceSize, "max-resource-size", d.MaxResourceSize, "cut off bodies larger than this many `bytes`")
	fs.BoolVar(&f.followNofollow, "follow-nofollow", false, `also follow links marked rel="nofollow"`)
	fs.BoolVar(&f.tokens, "tokens", true, "fill token and token_statistics (experimental in seed 002)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "write log records of this `level` and above to stderr: debug, info, warn, error")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress display (the summary at the end is still printed)")
	fs.BoolVar(&f.allowPrivate, "allow-private", false, "let the fetcher reach loopback, private and link-local addresses (the seeds' hosts always may)")
}

func (f *crawlFlags) check() error {
	switch {
	case f.concurrency < 1 || f.concurrency > crawl.MaxConcurrency:
		return usagef("--concurrency must be from 1 to %d, got %d", crawl.MaxConcurrency, f.concurrency)
	case f.delay < 0 || f.delay > crawl.MaxDelay:
		return usagef("--delay must be from 0 to %v, got %v", crawl.MaxDelay, f.delay)
	case f.timeout <= 0 || f.timeout > crawl.MaxTimeout:
		return usagef("--timeout must be more than 0 and at most %v, got %v", crawl.MaxTimeout, f.timeout)
	case f.recrawlPeriod < 0 || f.recrawlPeriod > crawl.MaxRecrawlPeriodMins*time.Minute:
		return usagef("--recrawl-period must be from 0 to %v, got %v", crawl.MaxRecrawlPeriodMins*time.Minute, f.recrawlPeriod)
	case f.maxPages < 0:
		return usagef("--max-pages must not be negative, got %d", f.maxPages)
	case f.maxDepth < -1 || f.maxDepth > crawl.MaxHops:
		return usagef("--max-depth must be -1 (no limit) or from 0 to %d, got %d", crawl.MaxHops, f.maxDepth)
	case f.maxURLsFromPage < 0 || f.maxURLsFromPage > crawl.MaxURLsFromPageLimit:
		return usagef("--max-urls-from-page must be from 0 (no limit) to %d, got %d", crawl.MaxURLsFromPageLimit, f.maxURLsFromPage)
	case f.maxResourceSize <= 0 || f.maxResourceSize > crawl.MaxResourceSizeLimit:
		return usagef("--max-resource-size must be from 1 to %d bytes, got %d", crawl.MaxResourceSizeLimit, f.maxResourceSize)
	case strings.TrimSpace(f.userAgent) == "":
		return usagef("--user-agent must not be empty")
	case f.data == "":
		return usagef("--data must name a directory")
	}
	return nil
}

func (f *crawlFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, usagef("--log-level: %v", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lvl})), nil
}

// config builds the run's configuration. The HTTP client refuses
// loopback, private and link-local addresses (SSRF) except for the
// crawl's scope: the seeds' hosts, named now or in earlier runs of the
// data directory; --allow-private lifts the check.
func (f *crawlFlags) config(ctx context.Context, dd *pipeline.DataDir, seeds []string, log *slog.Logger) (pipeline.Config, error) {
	fc := fetch.DefaultConfig()
	fc.UserAgent, fc.Delay, fc.Timeout, fc.MaxResourceSize = f.userAgent, f.delay, f.timeout, f.maxResourceSize
	fc.RecrawlPeriod = f.recrawlPeriod
	if !f.recrawlPeriodOn {
		// Not given: each page of no site keeps the period it was
		// crawled under, and a page found is given the data directory's,
		// so that crawler recrawl from cron keeps them on it;
		// --recrawl-period 0 stops it.
		p, err := dd.DB.RecrawlPeriodInUse(ctx)
		if err != nil {
			return pipeline.Config{}, err
		}
		fc.KeptRecrawlPeriod = &p
	}
	dialer := safedial.New(f.timeout)
	dialer.AllowPrivate = f.allowPrivate
	scope, err := dd.DB.ScopeHosts(ctx)
	if err != nil {
		return pipeline.Config{}, err
	}
	sites, err := dd.DB.Sites(ctx)
	if err != nil {
		return pipeline.Config{}, err
	}
	roots := seeds[:len(seeds):len(seeds)]
	for _, s := range sites {
		roots = append(roots, s.Roots...) // a site's roots are in its scope
	}
	for _, s := range roots {
		if n, err := urlnorm.Normalize(s); err == nil {
			scope = append(scope, n.Host)
		}
	}
	for _, h := range scope {
		dialer.Allow(h)
	}
	cfg := pipeline.Config{
		Seeds: seeds, Concurrency: f.concurrency, MaxPages: f.maxPages, Recrawl: f.recrawl, Fetch: fc, Log: log,
		Client: &http.Client{Transport: fetch.Transport(dialer.DialContext, f.timeout)},
	}
	cfg.Policy.MaxDepth, cfg.Policy.Include, cfg.Policy.Exclude = f.maxDepth, f.include, f.exclude
	cfg.FiltersGiven = f.filtersGiven
	cfg.StopRecrawls = f.recrawlPeriodOn && f.recrawlPeriod == 0
	cfg.Parse.MaxURLsFromPage, cfg.Parse.FollowNofollow = f.maxURLsFromPage, f.followNofollow
	cfg.Parse.MaxBytesInParse = crawl.ParseRoom
	cfg.Summarize.Tokens = f.tokens
	return cfg, nil
}

// tuneGC lets a crawl's heap grow to five times what is live (GOGC=400)
// within a soft limit of 112 MiB (peak RSS must stay under 200 MB): the
// crawl allocates a page's tree, text and links and drops them, and
// collecting at the default GOGC cost it about a tenth of its CPU, at
// GOGC=200 about a twelfth of its time (BENCHMARKS.md). On a large
// crawl the limit, not GOGC, decides. At 128 MiB a tree of large pages
// (the Java API's) peaked at 197 MB, SQLite's memory and the binary
// being outside the limit; 112 MiB took 16-20 MB off the peak at no
// cost in time that three trees and 100,000 pages showed
// (BENCHMARKS.md, "A lower soft limit"). GOGC or GOMEMLIMIT set in the
// environment win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(112 << 20)
	}
}

func cmdCrawl(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return crawlCommand(ctx, "crawl", args, stdout, stderr)
}

// cmdRecrawl is `crawler recrawl`: a run of a data directory that
// crawls what is due now (each page at the date its recrawl period and
// change rate give, each site's roots at its RecrawlDate), for cron or a
// systemd timer: the one-machine counterpart of the stack's schedule.
func cmdRecrawl(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return crawlCommand(ctx, "recrawl", args, stdout, stderr)
}

// invalidURL is the usage error of a URL given that urlnorm refused: a
// host without a scheme gets a hint, not the URL parser's words alone.
func invalidURL(u string, err error) error {
	host, _, _ := strings.Cut(u, "/")
	if name, _, _ := strings.Cut(host, ":"); !strings.Contains(u, "://") && !strings.Contains(u, " ") && strings.Contains(name, ".") {
		// example.org, example.org:8080/x; not mailto:a@b.c or file:/x
		return usagef("invalid URL %q: it has no scheme (did you mean https://%s?)", u, u)
	}
	return usagef("invalid URL %q: %v", u, err)
}

// checkURL refuses, as a usage error, a URL a user gives that the
// scheduler would refuse (and dead-letter its event): one urlnorm
// cannot normalize (no scheme, not http or https), one too long once
// normalized, or a host name longer than DNS resolves.
func checkURL(s string) error {
	n, err := urlnorm.Normalize(s)
	if err != nil {
		return invalidURL(crawl.Truncate(s, 100), err)
	}
	if len(n.URL) > crawl.MaxKeptURLLength {
		return usagef("invalid URL %q: it is %d bytes long once normalized, more than the %d a URL may have (docs/limits.md)",
			crawl.Truncate(s, 100), len(n.URL), crawl.MaxKeptURLLength)
	}
	if name := crawl.HostName(n.Host); len(name) > crawl.MaxHostLength {
		return usagef("invalid URL %q: its host name is %d bytes long, more than the %d DNS resolves (docs/limits.md)",
			crawl.Truncate(s, 100), len(name), crawl.MaxHostLength)
	}
	return nil
}

// hasWork reports whether a run without URLs has anything to do in db,
// now or later: a site, a URL due or released, a queued message, or
// what a stopped run left unfinished (crawls recorded and not handed
// on, pages not in the search index yet), or, when the run gives its own
// filters, URLs earlier runs' filters ruled out.
func hasWork(ctx context.Context, db *sqlite.DB, filtersGiven bool) (bool, error) {
	if filtersGiven {
		// Filtered by earlier runs' filters: this run's may admit them.
		if c, err := db.RuledOutByFilters(ctx, 1); err != nil || len(c) > 0 {
			return len(c) > 0, err
		}
	}
	if sites, err := db.Sites(ctx); err != nil || len(sites) > 0 {
		return len(sites) > 0, err
	}
	if _, due, err := db.NextDue(ctx); err != nil || due {
		return due, err
	}
	if n, err := db.FrontierSize(ctx, time.Now().Unix()); err != nil || n > 0 {
		return n > 0, err
	}
	if n, err := db.Pending(ctx, pipeline.QueueEnqueue, pipeline.QueueParse, pipeline.QueueSummarize); err != nil || n > 0 {
		return n > 0, err
	}
	if n, err := db.Unindexed(ctx); err != nil || n > 0 {
		return n > 0, err
	}
	// Last: it reads every crawl against its summary.
	c, err := db.NotHandedOn(ctx)
	return len(c) > 0, err
}

func crawlCommand(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f crawlFlags
	f.register(fs)
	cpuProfile := fs.String(cpuProfileFlag, "", "write a CPU profile of the run to this `file` (hidden)")
	heapProfile := fs.String(heapProfileFlag, "", "write a heap profile taken at the heap's peak to this `file` (hidden)")
	traceFile := fs.String(traceFlag, "", "write an execution trace of the run to this `file` (hidden)")
	fs.Usage = func() {
		if name == "recrawl" {
			fmt.Fprintln(stderr, "usage: crawler recrawl [flags]\n\nCrawl what is due now in the data directory: pages whose recrawl date has come, and the roots of sites whose RecrawlDate has.")
		} else {
			fmt.Fprintln(stderr, "usage: crawler crawl [flags] URL...")
		}
		printFlags(fs, stderr)
	}
	seeds, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	fs.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "recrawl-period":
			f.recrawlPeriodOn = true
		case "max-depth", "include", "exclude":
			f.filtersGiven = true
		}
	})
	if name == "recrawl" {
		if len(seeds) > 0 {
			return usagef("crawler recrawl takes no URL (crawler crawl URL... adds some)")
		}
		if _, err := os.Stat(filepath.Join(f.data, "crawl.db")); err != nil {
			return usagef("no crawl in %s to recrawl", f.data)
		}
	}
	if err := f.check(); err != nil {
		return err
	}
	for _, s := range seeds {
		if err := checkURL(s); err != nil {
			return err
		}
	}
	log, err := f.logger(stderr)
	if err != nil {
		return err
	}
	if len(seeds) == 0 && !f.recrawl {
		if _, err := os.Stat(filepath.Join(f.data, "crawl.db")); err != nil {
			return usagef("no URL to crawl (give one or more, --recrawl to crawl the data directory's URLs again, or add a site with crawler site add)")
		}
	}
	tuneGC()
	dd, err := pipeline.OpenDataDir(ctx, f.data, sqlite.WithLog(log))
	if err != nil {
		return usageError{err}
	}
	defer dd.Close()
	if len(seeds) == 0 && !f.recrawl && name != "recrawl" {
		// A run without URLs crawls what is due in the data directory:
		// its sites', what a stopped run left (--max-pages, a kill), and
		// the recrawls --recrawl-period made due. crawler recrawl, run
		// from cron, finds nothing due at times: that is no mistake.
		if work, err := hasWork(ctx, dd.DB, f.filtersGiven); err != nil {
			return err
		} else if !work {
			return usagef("nothing to crawl in %s: no URL is due, now or later, nothing is left unfinished, and there is no site (give URLs, --recrawl to crawl its URLs again, or add a site with crawler site add)", f.data)
		}
	}
	cfg, err := f.config(ctx, dd, seeds, log)
	if err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(*cpuProfile)
	if err != nil {
		return err
	}
	stopHeap, err := startHeapProfile(*heapProfile)
	if err != nil {
		stopProfile()
		return err
	}
	stopTrace, err := startTrace(*traceFile)
	if err != nil {
		stopProfile()
		stopHeap()
		return err
	}
	prog := newProgress(stderr, f.quiet)
	cfg.Progress = prog.update
	res, err := dd.Run(ctx, cfg)
	prog.done()
	if perr := stopProfile(); perr != nil && err == nil {
		err = fmt.Errorf("write CPU profile: %w", perr)
	}
	if perr := stopHeap(); perr != nil && err == nil {
		err = fmt.Errorf("write heap profile: %w", perr)
	}
	if perr := stopTrace(); perr != nil && err == nil {
		err = fmt.Errorf("write execution trace: %w", perr)
	}
	printSummary(stdout, res)
	if err == nil {
		seedsLeftScope(ctx, stdout, dd.DB, seeds)
		if f.recrawl {
			sitesNotRecrawled(ctx, stdout, dd.DB)
		}
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "crawler crawl: interrupted; run the same command again to continue")
		return nil
	}
	return err
}

// seedsLeftScope says which seeds redirected out of the crawl's scope
// (the seeds' hosts): http://example.com/ to https://www.example.com/
// ends a crawl at once, with nothing but a redirect and an out-of-scope
// URL in its summary, and the user is best told what to crawl instead.
// It only reads, and says nothing when a read fails.
func seedsLeftScope(ctx context.Context, w io.Writer, db *sqlite.DB, seeds []string) {
	for _, s := range seeds {
		n, err := urlnorm.Normalize(s)
		if err != nil {
			continue
		}
		c, err := db.GetCandidate(ctx, n.URL)
		if err != nil || c.LastCrawlExitCode == nil || *c.LastCrawlExitCode != crawl.ExitRedirect || c.CrawlUUID == "" {
			continue
		}
		cr, err := db.GetCrawl(ctx, c.CrawlUUID)
		if err != nil || cr.Redirect == nil {
			continue
		}
		to, err := db.GetCandidate(ctx, cr.Redirect.ToURL)
		if err != nil || to.LastCrawlExitCode == nil || *to.LastCrawlExitCode != crawl.ExitOutOfScope {
			continue
		}
		fmt.Fprintf(w, "  note: %s redirects to %s, outside the crawl's scope (its seeds' hosts): crawl that URL instead\n", n.URL, cr.Redirect.ToURL)
	}
}

// sitesNotRecrawled names the sites whose URLs --recrawl left alone: a
// disabled site's URLs stay held and a suspended site is not recrawled
// (sqlite.DB.MarkAllDue), which a user who asked for everything again
// is best told. It only reads, and says nothing when the read fails.
func sitesNotRecrawled(ctx context.Context, w io.Writer, db *sqlite.DB) {
	sites, err := db.Sites(ctx)
	if err != nil {
		return
	}
	for _, s := range sites {
		if s.State != crawl.SiteActive {
			fmt.Fprintf(w, "  note: --recrawl left the URLs of site %s (%s) as they were: enable it (crawler site enable %s) and run --recrawl again to recrawl them\n",
				s.ID, s.State, s.ID)
		}
	}
}

// printSummary prints pages by outcome, bytes, time and speed.
func printSummary(w io.Writer, r pipeline.Result) {
	secs := r.Elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(r.Crawled) / secs
	}
	fmt.Fprintf(w, "crawled %d URLs, %s, in %s (%.1f pages/s)\n", r.Crawled, report.HumanBytes(r.Bytes), r.Elapsed.Round(time.Millisecond), rate)
	printCounts(w, "outcomes", r.Outcomes)
	printCounts(w, "not fetched (all runs)", r.Filtered)
	switch {
	case r.StillDue && r.NextDue > time.Now().Unix():
		// Recrawls (--recrawl-period), or URLs held for their host.
		fmt.Fprintf(w, "  next URL due at %s (a recrawl, or a URL held while its host's robots.txt was unavailable or the host asked to wait with Retry-After): crawler recrawl then crawls what is due\n",
			time.Unix(r.NextDue, 0).Format(time.DateTime))
	case r.StillDue:
		fmt.Fprintln(w, "  URLs are still due (--max-pages reached, or a host's robots.txt was unavailable): run again to continue")
	}
	if r.RecrawlsStopped > 0 {
		fmt.Fprintf(w, "  stopped the recrawls of %d pages (--recrawl-period 0): none is due again by its period\n", r.RecrawlsStopped)
	}
	if r.RecrawlPassContinued > 0 {
		fmt.Fprintf(w, "  continued the --recrawl pass begun at %s, which a stopped run left unfinished: the URLs it had crawled were not made due again (a pass begun more than %v ago is begun again)\n",
			time.Unix(r.RecrawlPassContinued, 0).Format(time.DateTime), sqlite.RecrawlPassLife)
	}
	if r.DeadLetters > 0 {
		// Only this run's: earlier runs' stay in the queues, and were
		// said by the run that put them there.
		all := ""
		if r.DeadLettersAll > r.DeadLetters {
			all = fmt.Sprintf(", %d with earlier runs'", r.DeadLettersAll)
		}
		fmt.Fprintf(w, "  %d messages could not be handled in this run (dead-letter queues in the database%s)\n", r.DeadLetters, all)
	}
}

func printCounts(w io.Writer, title string, m map[crawl.ExitCode]int) {
	if len(m) == 0 {
		return
	}
	codes := make([]crawl.ExitCode, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
	fmt.Fprintf(w, "  %s:\n", title)
	for _, c := range codes {
		fmt.Fprintf(w, "    %-20s %6d   (%s)\n", c.String(), m[c], c.Status())
	}
}
