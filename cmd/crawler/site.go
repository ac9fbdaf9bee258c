package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/serverless-crawler/crawler/shared/aws/stack"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/report"
	"github.com/serverless-crawler/crawler/shared/stage/schedule"
)

const siteUsage = `usage: crawler site <add|set|show|list|disable|enable> [flags] [args]

With --stack (or CRAWLER_STACK), the operation is a site event sent to
the deployed stack's enqueue queue, and show and list read its sites.

  add  [flags] ROOT_URL...   a new site (seed 001) of these root URLs; its roots are enqueued
  set  [flags] ID [ROOT_URL...]
                             change the settings given (and the roots, if any are given)
  show [--json] ID           a site's settings, state and counters
  list [--json]              every site
  disable ID                 crawl nothing of the site; its URLs wait, held, until it is enabled
  enable ID                  crawl the site again (its error count starts again at 0)

A change reaches a crawl running on the same data directory within a
second. Run 'crawler site add -h' for the settings; docs/sites.md says
what each does.
`

func cmdSite(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, siteUsage)
		return usagef("crawler site needs an operation")
	}
	op, args := args[0], args[1:]
	switch op {
	case "add", "set":
		return siteChange(ctx, crawl.SiteOp(op), args, stdout, stderr)
	case "disable", "enable":
		return siteChange(ctx, crawl.SiteOp(op), args, stdout, stderr)
	case "show", "list":
		return siteShow(ctx, op, args, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, siteUsage)
		return nil
	}
	fmt.Fprint(stderr, siteUsage)
	return usagef("unknown site operation %q", op)
}

// siteFlags are the settings of `crawler site add` and `set`; a flag not
// given leaves the setting as it is (set) or at its default (add).
type siteFlags struct {
	id                                                string
	priority                                          int
	maxURLs, maxResources, maxErrors, maxResourceSize int64
	maxURLsFromPage                                   int64
	delay, timeout, recrawlPeriod                     time.Duration
	urlType, state                                    string
	include, exclude, includeMedia, excludeMedia      stringList
	noFilters                                         bool
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func (f *siteFlags) register(fs *flag.FlagSet, op crawl.SiteOp) {
	if op == crawl.SiteAdd {
		fs.StringVar(&f.id, "id", "", "the site's `ID` (up to 32 letters, digits, '.', '_', '-'; default: the first root's host)")
	}
	fs.IntVar(&f.priority, "priority", 0, "release this site's URLs before those of sites of lower `N`")
	fs.Int64Var(&f.maxURLs, "max-urls", 0, "collect at most `N` URLs of the site; past it, new ones are recorded as too-many-urls (0: no limit)")
	fs.Int64Var(&f.maxResources, "max-resources", 0, "stop admitting URLs once `N` of the site's resources are fetched and stored (0: no limit)")
	fs.Int64Var(&f.maxErrors, "max-errors", 0, "suspend the site when `N` of its crawls have failed (0: no limit)")
	fs.Int64Var(&f.maxResourceSize, "max-resource-size", 0, "cut off the site's bodies past this many `bytes` (0: the crawl's --max-resource-size)")
	fs.Int64Var(&f.maxURLsFromPage, "max-urls-from-page", 0, "follow at most `N` links of one of the site's pages (0: the crawl's --max-urls-from-page)")
	fs.DurationVar(&f.delay, "delay", 0, "least time between two requests to the site's hosts (0: the crawl's --delay)")
	fs.DurationVar(&f.timeout, "timeout", 0, "time for one request to the site (0: the crawl's --timeout)")
	fs.DurationVar(&f.recrawlPeriod, "recrawl-period", 0, "recrawl the site's pages this often, in whole minutes (0: not periodically)")
	fs.StringVar(&f.urlType, "url-type", "regular", "which links to follow: regular (within the site), single (none), collect-all (also those leaving every site, one hop)")
	fs.Var(&f.include, "include", "crawl only the site's URLs matching this `regexp` (repeatable; replaces the site's filters)")
	fs.Var(&f.exclude, "exclude", "do not crawl the site's URLs matching this `regexp` (repeatable; replaces the site's filters)")
	fs.Var(&f.includeMedia, "include-media", "a media filter (seed 001 mode media: stored and shown, decides nothing) including this `regexp` (repeatable; replaces the site's filters)")
	fs.Var(&f.excludeMedia, "exclude-media", "a media filter (seed 001 mode media: stored and shown, decides nothing) excluding this `regexp` (repeatable; replaces the site's filters)")
	if op == crawl.SiteSet {
		fs.StringVar(&f.state, "state", "", "set the state: active, disabled or suspended")
		fs.BoolVar(&f.noFilters, "no-filters", false, "remove every filter of the site")
	}
}

// event builds the site event of the flags given.
func (f *siteFlags) event(fs *flag.FlagSet, op crawl.SiteOp) (crawl.SiteEvent, error) {
	ev := crawl.SiteEvent{Type: crawl.SiteEventType, Version: crawl.EnqueueVersion, Op: op, ID: f.id}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	i64 := func(name string, v int64) *int64 {
		if !given[name] {
			return nil
		}
		return &v
	}
	ms := func(name string, d time.Duration) *int64 {
		if !given[name] {
			return nil
		}
		v := d.Milliseconds()
		return &v
	}
	if given["priority"] {
		ev.Priority = &f.priority
	}
	ev.MaxURLs, ev.MaxResources, ev.MaxErrors = i64("max-urls", f.maxURLs), i64("max-resources", f.maxResources), i64("max-errors", f.maxErrors)
	ev.MaxResourceSize, ev.MaxURLsFromPage = i64("max-resource-size", f.maxResourceSize), i64("max-urls-from-page", f.maxURLsFromPage)
	ev.RequestDelayMS, ev.HTTPTimeoutMS = ms("delay", f.delay), ms("timeout", f.timeout)
	if given["recrawl-period"] {
		if f.recrawlPeriod%time.Minute != 0 {
			return ev, usagef("--recrawl-period is kept in whole minutes (seed 001 RecrawlPeriod), got %v", f.recrawlPeriod)
		}
		m := int64(f.recrawlPeriod / time.Minute)
		ev.RecrawlPeriodM = &m
	}
	if given["url-type"] {
		ev.URLType = &f.urlType
	}
	if given["state"] {
		ev.State = &f.state
	}
	if given["include"] || given["exclude"] || given["include-media"] || given["exclude-media"] || f.noFilters {
		filters := []crawl.SiteFilter{}
		for _, l := range []struct {
			patterns stringList
			typ      crawl.FilterType
			mode     crawl.FilterMode
		}{
			{f.include, crawl.FilterInclude, crawl.FilterURLs}, {f.exclude, crawl.FilterExclude, crawl.FilterURLs},
			{f.includeMedia, crawl.FilterInclude, crawl.FilterMedia}, {f.excludeMedia, crawl.FilterExclude, crawl.FilterMedia},
		} {
			for _, p := range l.patterns {
				filters = append(filters, crawl.SiteFilter{Pattern: p, Type: l.typ, Mode: l.mode})
			}
		}
		ev.Filters = &filters
	}
	return ev, nil
}

func siteChange(ctx context.Context, op crawl.SiteOp, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("site "+string(op), flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "crawl-data", "change the sites of the crawl in this data `directory`")
	stackName := stackFlag(fs, "send the change as a site event to this deployed stack's enqueue queue instead of changing a data directory")
	var f siteFlags
	if op == crawl.SiteAdd || op == crawl.SiteSet {
		f.register(fs, op)
	}
	fs.Usage = func() {
		switch op {
		case crawl.SiteAdd:
			fmt.Fprintln(stderr, "usage: crawler site add [flags] ROOT_URL...")
		case crawl.SiteSet:
			fmt.Fprintln(stderr, "usage: crawler site set [flags] ID [ROOT_URL...]")
		default:
			fmt.Fprintf(stderr, "usage: crawler site %s [flags] ID\n", op)
		}
		printFlags(fs, stderr)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	ev, err := f.event(fs, op)
	if err != nil {
		return err
	}
	switch op {
	case crawl.SiteAdd:
		if len(pos) == 0 {
			return usagef("give the site's root URLs")
		}
		ev.Roots = pos
	case crawl.SiteSet:
		if len(pos) == 0 {
			return usagef("give the site's ID")
		}
		ev.ID, ev.Roots = pos[0], pos[1:]
	default:
		if len(pos) != 1 {
			return usagef("give exactly one site ID")
		}
		ev.ID = pos[0]
	}
	if err := ev.Validate(); err != nil {
		return usagef("%v", err)
	}
	if *stackName != "" {
		return sendSiteEvent(ctx, *stackName, ev, stdout)
	}
	db, err := openForSites(ctx, *data)
	if err != nil {
		return err
	}
	defer db.Close()
	sched := schedule.New(db, nil, schedule.Policy{MaxDepth: -1}, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err := sched.UseSites(ctx, db); err != nil {
		return err
	}
	site, err := sched.ManageSite(ctx, ev)
	if crawl.KindOf(err) == crawl.KindInvalid {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "site %s: %s\n", site.ID, describeChange(op, site))
	return nil
}

func describeChange(op crawl.SiteOp, s crawl.Site) string {
	switch op {
	case crawl.SiteAdd:
		return fmt.Sprintf("added, %d root URLs enqueued; run 'crawler crawl' to crawl it", len(s.Roots))
	case crawl.SiteDisable:
		return "disabled: nothing of it is crawled; its URLs are held until it is enabled"
	case crawl.SiteEnable:
		return "enabled"
	}
	return "changed; state " + s.State.String()
}

// sendSiteEvent sends a site event to a deployed stack's enqueue queue:
// the scheduler function carries it out (a malformed one would be
// dead-lettered; the same checks ran here first).
func sendSiteEvent(ctx context.Context, stackName string, ev crawl.SiteEvent, stdout io.Writer) error {
	d, err := describeStack(ctx, stackName)
	if err != nil {
		return err
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if _, err := crawl.ParseSiteEvent(b); err != nil {
		return usageError{err}
	}
	c, err := stack.NewClients(ctx)
	if err != nil {
		return err
	}
	if _, err := sendChecked(ctx, c, d.Outputs[stack.OutEnqueueQueue], b); err != nil {
		return fmt.Errorf("send site event: %w", err)
	}
	fmt.Fprintf(stdout, "site event %s sent to stack %s; 'crawler site show --stack %s ID' shows the site once the scheduler has carried it out\n",
		ev.Op, stackName, stackName)
	return nil
}

// siteReader is what site show and list read: a data directory's
// database or a deployed stack's control table.
type siteReader interface {
	Sites(ctx context.Context) ([]crawl.Site, error)
	GetSite(ctx context.Context, id string) (crawl.Site, error)
}

// openForSites opens (creating if needed) a data directory's database
// for writing without taking the crawl lock: SQLite lets a site change
// and a running crawl write in turn, and the crawl reads the change
// within a second.
func openForSites(ctx context.Context, dir string) (*sqlite.DB, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, usagef("data directory %s: %v", dir, err)
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "crawl.db"))
	if errors.Is(err, sqlite.ErrCorrupt) {
		return nil, usageError{err}
	}
	return db, err
}

// siteView is a site as `crawler site show --json` prints it.
type siteView struct {
	ID              string             `json:"id"`
	State           string             `json:"state"`
	StateReason     string             `json:"state_reason,omitempty"`
	Roots           []string           `json:"roots"`
	Filters         []crawl.SiteFilter `json:"filters"`
	Priority        int                `json:"priority"`
	URLType         string             `json:"url_type"`
	MaxURLs         int64              `json:"max_urls"`
	MaxResources    int64              `json:"max_resources"`
	MaxErrors       int64              `json:"max_errors"`
	MaxResourceSize int64              `json:"max_resource_size"`
	MaxURLsFromPage int64              `json:"max_urls_from_page"`
	RequestDelayMS  int64              `json:"request_delay_ms"`
	HTTPTimeoutMS   int64              `json:"http_timeout_ms"`
	RecrawlPeriodM  int64              `json:"recrawl_period_min"`
	RecrawlDate     string             `json:"recrawl_date,omitempty"` // seed 001: when its next periodic recrawl starts
	Iterations      int64              `json:"iterations"`
	CollectedURLs   int64              `json:"collected_urls"`
	NewURLs         *int64             `json:"new_urls,omitempty"` // nil: not counted (a stack)
	Resources       int64              `json:"resources"`
	Contents        *int64             `json:"contents,omitempty"` // nil: not counted (a stack)
	Errors          int64              `json:"errors"`
	Size            int64              `json:"size"`
	AVGSpeed        float64            `json:"avg_speed_bps"`
	Created         string             `json:"created"`
	Updated         string             `json:"updated,omitempty"`
	Touched         string             `json:"touched,omitempty"`
}

// viewSite is a site as show and list print it; onStack, the counters a
// stack does not keep (NewURLs, Contents: docs/sites.md, "On AWS") are
// left out, not shown as zeros.
func viewSite(s crawl.Site, onStack bool) siteView {
	t := func(u int64) string {
		if u == 0 {
			return ""
		}
		return time.Unix(u, 0).UTC().Format(time.RFC3339)
	}
	filters := s.Filters
	if filters == nil {
		filters = []crawl.SiteFilter{}
	}
	v := siteView{ID: s.ID, State: s.State.String(), StateReason: s.StateReason, Roots: s.Roots, Filters: filters,
		Priority: s.Priority, URLType: s.URLType.String(), MaxURLs: s.MaxURLs, MaxResources: s.MaxResources,
		MaxErrors: s.MaxErrors, MaxResourceSize: s.MaxResourceSize, MaxURLsFromPage: s.MaxURLsFromPage,
		RequestDelayMS: s.RequestDelay, HTTPTimeoutMS: s.HTTPTimeout, RecrawlPeriodM: s.RecrawlPeriod,
		CollectedURLs: s.CollectedURLs, NewURLs: &s.NewURLs, Resources: s.Resources, Contents: &s.Contents,
		Errors: s.Errors, Size: s.Size, AVGSpeed: s.AVGSpeed, Created: t(s.CDate), Updated: t(s.UDate), Touched: t(s.TcDate),
		Iterations: s.Iterations}
	if onStack {
		v.NewURLs, v.Contents = nil, nil
	}
	if s.RecrawlPeriod > 0 && s.State == crawl.SiteActive {
		// Set a period on by each periodic recrawl; before the first, a
		// period after the site was added (as StartSiteRecrawls reads it).
		// A site not active is not recrawled: no date.
		next := s.CDate + s.RecrawlPeriod*60
		if s.RecrawlDate != nil {
			next = *s.RecrawlDate
		}
		v.RecrawlDate = t(next)
	}
	return v
}

func siteShow(ctx context.Context, op string, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("site "+op, flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "crawl-data", "read the sites of the crawl in this data `directory`")
	stackName := stackFlag(fs, "read the sites of this deployed stack instead of a data directory")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.Usage = func() {
		if op == "show" {
			fmt.Fprintln(stderr, "usage: crawler site show [flags] ID")
		} else {
			fmt.Fprintln(stderr, "usage: crawler site list [flags]")
		}
		printFlags(fs, stderr)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if op == "show" && len(pos) != 1 || op == "list" && len(pos) != 0 {
		fs.Usage()
		return usagef("crawler site %s takes %s", op, map[string]string{"show": "one site ID", "list": "no arguments"}[op])
	}
	var db siteReader
	where := *data
	if *stackName != "" {
		sdb, err := openStack(ctx, *stackName)
		if err != nil {
			return err
		}
		db, where = sdb, "stack "+*stackName
	} else {
		ldb, err := openForReading(ctx, *data)
		if err != nil {
			return err
		}
		defer ldb.Close()
		db = ldb
	}
	if op == "show" {
		s, err := db.GetSite(ctx, pos[0])
		if errors.Is(err, crawl.ErrNotFound) {
			return usagef("no site %q in %s (crawler site list shows them)", pos[0], where)
		}
		if err != nil {
			return err
		}
		v := viewSite(s, *stackName != "")
		if *asJSON {
			return printJSON(stdout, v)
		}
		printSite(stdout, v)
		return nil
	}
	sites, err := db.Sites(ctx)
	if err != nil {
		return err
	}
	views := make([]siteView, len(sites))
	for i, s := range sites {
		views[i] = viewSite(s, *stackName != "")
	}
	if *asJSON {
		return printJSON(stdout, views)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tPRIORITY\tURLS\tRESOURCES\tERRORS\tROOTS")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%s\n", v.ID, v.State, v.Priority, v.CollectedURLs, v.Resources, v.Errors, strings.Join(v.Roots, " "))
	}
	return tw.Flush()
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printSite(w io.Writer, v siteView) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	line := func(k string, val any) { fmt.Fprintf(tw, "%s\t%v\n", k, val) }
	limit := func(n int64) string {
		if n == 0 {
			return "no limit"
		}
		return fmt.Sprint(n)
	}
	line("id", v.ID)
	line("state", v.State)
	if v.StateReason != "" {
		line("state reason", v.StateReason)
	}
	line("roots", strings.Join(v.Roots, " "))
	for _, f := range v.Filters {
		t, _ := f.Type.MarshalText()
		m, _ := f.Mode.MarshalText()
		line("filter", fmt.Sprintf("%s %s %s", t, m, f.Pattern))
	}
	line("priority", v.Priority)
	line("url type", v.URLType)
	line("max urls", limit(v.MaxURLs))
	line("max resources", limit(v.MaxResources))
	line("max errors", limit(v.MaxErrors))
	ms := func(n int64, none string) string {
		if n == 0 {
			return none
		}
		return (time.Duration(n) * time.Millisecond).String()
	}
	line("request delay", ms(v.RequestDelayMS, "the crawl's"))
	line("http timeout", ms(v.HTTPTimeoutMS, "the crawl's"))
	if v.MaxResourceSize == 0 {
		line("max resource size", "the crawl's")
	} else {
		line("max resource size", report.HumanBytes(v.MaxResourceSize))
	}
	if v.MaxURLsFromPage == 0 {
		line("max urls from page", "the crawl's")
	} else {
		line("max urls from page", v.MaxURLsFromPage)
	}
	if v.RecrawlPeriodM == 0 {
		line("recrawl period", "none (the crawl's)")
	} else {
		line("recrawl period", (time.Duration(v.RecrawlPeriodM) * time.Minute).String())
		if v.RecrawlDate != "" {
			line("next recrawl", v.RecrawlDate)
		}
	}
	line("recrawls started", v.Iterations)
	counted := func(n *int64) string {
		if n == nil {
			return "not counted on AWS"
		}
		return fmt.Sprint(*n)
	}
	line("urls collected / new", fmt.Sprintf("%d / %s", v.CollectedURLs, counted(v.NewURLs)))
	line("resources / contents", fmt.Sprintf("%d / %s", v.Resources, counted(v.Contents)))
	line("errors", v.Errors)
	line("size", report.HumanBytes(v.Size))
	line("created", v.Created)
	if v.Touched != "" {
		line("touched", v.Touched)
	}
	tw.Flush()
}
