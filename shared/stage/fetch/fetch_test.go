package fetch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/blobfs"
	"github.com/serverless-crawler/crawler/shared/local/politeness"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/web/safedial"
	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) Send(_ context.Context, b ...[]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, b...)
	return nil
}

type harness struct {
	db        *sqlite.DB
	f         *Fetcher
	enqueue   *recorder
	parse     *recorder
	summarize *recorder
}

func newHarness(t *testing.T, client *http.Client, mod func(*Config)) *harness {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	blobs, err := blobfs.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.AgentUUID, cfg.UserAgent, cfg.Delay, cfg.Timeout, cfg.RetryBase = "agent-1", "crawler-test/1.0", 0, 2*time.Second, 10*time.Millisecond
	if mod != nil {
		mod(&cfg)
	}
	if err := db.RegisterAgent(ctx, crawl.Agent{UUID: "agent-1", Name: "test", TimeStarted: 1}); err != nil {
		t.Fatal(err)
	}
	if client == nil {
		client = &http.Client{}
	}
	h := &harness{db: db, enqueue: &recorder{}, parse: &recorder{}, summarize: &recorder{}}
	h.f = New(db, blobs, Queues{Enqueue: h.enqueue, Parse: h.parse, Summarize: h.summarize}, client,
		politeness.NewGate(0), cfg, slog.New(slog.DiscardHandler))
	return h
}

// queue makes u a new candidate queued as crawlUUID and returns its
// fetch task.
func (h *harness) queue(t *testing.T, u, crawlUUID string) crawl.FetchTask {
	t.Helper()
	pu, _ := url.Parse(u)
	c := crawl.Candidate{URL: u, Host: pu.Host, CrawlType: crawl.CrawlFirst, State: crawl.StateQueued, CrawlUUID: crawlUUID}
	if err := h.db.PutCandidate(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return crawl.FetchTask{URL: u, CrawlUUID: crawlUUID, CrawlType: crawl.CrawlFirst}
}

// crawl makes u a queued candidate, handles its fetch task, and returns
// the recorded crawl and the candidate after it.
func (h *harness) crawl(t *testing.T, u string, mod func(*crawl.Candidate)) (crawl.Crawl, crawl.Candidate) {
	t.Helper()
	ctx := context.Background()
	pu, _ := url.Parse(u)
	id := fmt.Sprintf("crawl-%d", time.Now().UnixNano())
	c, err := h.db.GetCandidate(ctx, u)
	if err != nil {
		c = crawl.Candidate{URL: u, Host: pu.Host, CrawlType: crawl.CrawlFirst}
	}
	c.State, c.CrawlUUID = crawl.StateQueued, id
	if mod != nil {
		mod(&c)
	}
	if err := h.db.PutCandidate(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := h.f.Handle(ctx, crawl.FetchTask{URL: u, CrawlUUID: id, CrawlType: c.CrawlType}); err != nil {
		t.Fatalf("handle %s: %v", u, err)
	}
	cr, err := h.db.GetCrawl(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := h.db.GetCandidate(ctx, u)
	return cr, after
}

// TestRecrawlPeriodKept: in a run given no recrawl period
// (KeptRecrawlPeriod: crawler recrawl from cron), a URL of no site keeps
// the period its last crawl followed, and one never crawled under one
// gets the data directory's; a site's URL follows its site (none here);
// a period given wins.
func TestRecrawlPeriodKept(t *testing.T) {
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<p>hello</p>") })
	kept := 2 * time.Hour
	for _, tt := range []struct {
		name      string
		run       time.Duration  // the run's --recrawl-period
		kept      *time.Duration // the data directory's, when the run gave none
		every     int64          // the candidate's, from its last crawl
		site      string
		wantEvery int64
	}{
		{"given none: the URL's own", 0, &kept, 3600, "", 3600},
		{"given none: a new URL gets the data directory's", 0, &kept, 0, "", 7200},
		{"given none: a site's URL follows its site", 0, &kept, 3600, "docs", 0},
		{"0 given", 0, nil, 3600, "", 0},
		{"a period given wins", 3 * time.Hour, nil, 3600, "", 10800},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil, func(c *Config) { c.RecrawlPeriod, c.KeptRecrawlPeriod = tt.run, tt.kept })
			cr, c := h.crawl(t, srv.URL+"/page", func(c *crawl.Candidate) { c.RecrawlEvery, c.SiteID = tt.every, tt.site })
			if c.RecrawlEvery != tt.wantEvery {
				t.Errorf("recrawl every %ds, want %ds", c.RecrawlEvery, tt.wantEvery)
			}
			switch {
			case tt.wantEvery == 0 && c.State != crawl.StateCrawled:
				t.Errorf("state %s, want crawled (no recrawl)", c.State)
			case tt.wantEvery > 0 && (c.State != crawl.StateDue || c.DueAt <= cr.Log.TimeStarted):
				t.Errorf("state %s due %d, want due after the crawl at %d", c.State, c.DueAt, cr.Log.TimeStarted)
			}
		})
	}
}

// queueingGate is a politeness gate whose every wait takes a host's turn
// ten seconds on, on the fetcher's clock.
type queueingGate struct{ wait func() }

func (g queueingGate) Wait(context.Context, string, time.Duration) (func(), error) {
	g.wait()
	return func() {}, nil
}
func (g queueingGate) Sleep(context.Context, string, time.Duration) error { return nil }

// slowBodies keeps bodies after a wait on the fetcher's clock: a WARC
// file shared by a batch, put when its last page is in.
type slowBodies struct {
	Bodies
	wait func()
}

func (b slowBodies) Keep(ctx context.Context, x warc.Exchange) (string, error) {
	b.wait()
	return b.Bodies.Keep(ctx, x)
}

// TestCrawlTimedFromItsTurn: a crawl's time_started and time_taken count
// from when its host's turn came, not from the wait for it, until its
// response is read, not until its body is stored (on AWS, with the
// batch's other pages: the report ranked fast pages by their batch's
// slowest).
func TestCrawlTimedFromItsTurn(t *testing.T) {
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "<p>hello</p>") })
	h := newHarness(t, nil, nil)
	clock := time.Unix(1700000000, 0)
	h.f.now = func() time.Time { return clock }
	h.f.polite = queueingGate{wait: func() { clock = clock.Add(10 * time.Second) }}
	turn := time.Time{}
	h.f.bodies = slowBodies{Bodies: h.f.bodies, wait: func() { turn = clock; clock = clock.Add(5 * time.Second) }}
	cr, _ := h.crawl(t, srv.URL+"/page", nil)
	if cr.Log.ExitCode != crawl.ExitComplete {
		t.Fatalf("crawl: %v", cr.Log.ExitCode)
	}
	if cr.Log.TimeStarted != turn.Unix() || cr.Log.TimeTakenMS != 0 {
		t.Errorf("started %d, took %d ms; want %d, 0: neither the turn's wait nor the body's storing is the crawl's", cr.Log.TimeStarted, cr.Log.TimeTakenMS, turn.Unix())
	}
}

func TestConditionalGet(t *testing.T) {
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, "<p>hello</p>")
	})
	h := newHarness(t, nil, nil)
	cr, c := h.crawl(t, srv.URL+"/page", nil)
	if cr.Log.ExitCode != crawl.ExitComplete || c.LastContentfulETag == nil || *c.LastContentfulETag != `"v1"` || c.LastContentfulModified == nil {
		t.Fatalf("first crawl: %v, etag %v, modified %v", cr.Log.ExitCode, c.LastContentfulETag, c.LastContentfulModified)
	}
	first := *c.LastContentfulCrawlTime
	cr, c = h.crawl(t, srv.URL+"/page", nil)
	if cr.Log.ExitCode != crawl.ExitUnchanged || cr.File != nil {
		t.Errorf("recrawl: %v with file %v, want unchanged and no new body", cr.Log.ExitCode, cr.File)
	}
	if *c.LastContentfulCrawlTime != first || *c.LastContentfulETag != `"v1"` {
		t.Errorf("a 304 moved the last contentful crawl")
	}
	if len(h.parse.bodies) != 1 {
		t.Errorf("%d parse tasks, want 1 (a 304 has nothing to parse)", len(h.parse.bodies))
	}
	// The 304 was summarized as it was recorded (the store's contract,
	// NotModifiedRecorded): no summarize task.
	if n := len(h.summarize.bodies); n != 0 {
		t.Errorf("%d summarize tasks, want none (the store settles a 304 it records)", n)
	}
	// A redelivered task finds the 304 recorded, and sends it on to be
	// summarized: one recorded by an earlier version was not settled.
	if err := h.f.Handle(context.Background(), crawl.FetchTask{URL: srv.URL + "/page", CrawlUUID: cr.Log.CrawlUUID, CrawlType: cr.Log.CrawlType}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.summarize.bodies); n != 1 {
		t.Errorf("%d summarize tasks after a redelivery, want 1", n)
	}
}

func TestBlockedAddressIsRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the fetcher reached %s", r.URL)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	d := safedial.New(time.Second) // nothing allowed: "localhost" resolves to loopback
	h := newHarness(t, &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}, nil)
	// robots.txt is fetched first and refused by the dialer: the URL is
	// recorded as blocked-address (not as a robots.txt outage to retry).
	cr, c := h.crawl(t, "http://localhost:"+port+"/admin", nil)
	if cr.Log.ExitCode != crawl.ExitBlockedAddress || cr.Log.Message == nil || !strings.Contains(*cr.Log.Message, "refuses") {
		t.Fatalf("exit %v (%v), want blocked-address saying the address is refused", cr.Log.ExitCode, cr.Log.Message)
	}
	if c.State != crawl.StateCrawled {
		t.Errorf("candidate state %s, want crawled (not due again)", c.State)
	}
	// The page request itself is refused the same way.
	res, err := h.f.get(context.Background(), crawl.Candidate{URL: "http://localhost:" + port + "/admin"}, h.f.cfg)
	if err != nil || res.code != crawl.ExitBlockedAddress {
		t.Errorf("page fetch: %v %v, want blocked-address", res.code, err)
	}
}

func TestCrawlDelayHonoured(t *testing.T) {
	var mu sync.Mutex
	var starts []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.3\n")
			return
		}
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	h := newHarness(t, nil, nil) // --delay 0: only Crawl-delay spaces requests
	h.crawl(t, srv.URL+"/a", nil)
	h.crawl(t, srv.URL+"/b", nil)
	if len(starts) != 3 {
		t.Fatalf("%d requests, want robots.txt and two pages", len(starts))
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < 290*time.Millisecond {
			t.Errorf("request %d came %v after the previous; Crawl-delay is 0.3s", i, gap)
		}
	}
}

// TestRetryAfterBeyondLimitIsRecorded: a Retry-After longer than a crawl
// waits is recorded as the outcome, and honoured: the URL is due again
// when the server said (at most MaxBackOff later), and its host is sent
// nothing until then: a later crawl of another of its URLs sends no
// request and records nothing, and is due again then too.
func TestRetryAfterBeyondLimitIsRecorded(t *testing.T) {
	tests := []struct {
		name       string
		status     int
		retryAfter string
		exit       crawl.ExitCode
		wait       time.Duration
	}{
		{"429 for an hour", http.StatusTooManyRequests, "3600", crawl.ExitRateLimited, time.Hour},
		{"503 for two minutes", http.StatusServiceUnavailable, "120", crawl.ExitHTTPServerError, 2 * time.Minute},
		{"429 for a week, honoured a day", http.StatusTooManyRequests, "604800", crawl.ExitRateLimited, 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hits atomic.Int32
			srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				w.Header().Set("Retry-After", tt.retryAfter)
				w.WriteHeader(tt.status)
			})
			h := newHarness(t, nil, nil)
			before := time.Now()
			cr, c := h.crawl(t, srv.URL+"/busy", nil)
			if cr.Log.ExitCode != tt.exit || hits.Load() != 1 {
				t.Errorf("exit %v after %d requests, want %v after 1 (Retry-After beyond the limit)", cr.Log.ExitCode, hits.Load(), tt.exit)
			}
			due := func(c crawl.Candidate) bool {
				at := time.Unix(c.DueAt, 0)
				return c.State == crawl.StateDue && !at.Before(before.Add(tt.wait).Truncate(time.Second)) && !at.After(time.Now().Add(tt.wait+time.Second))
			}
			if !due(c) {
				t.Errorf("after the crawl: state %s, due %s; want due %s later", c.State, time.Unix(c.DueAt, 0), tt.wait)
			}
			ctx := context.Background()
			other := h.queue(t, srv.URL+"/other", "other-1")
			if err := h.f.Handle(ctx, other); err != nil {
				t.Fatal(err)
			}
			if hits.Load() != 1 {
				t.Errorf("%d requests: the host was sent one while it asked to wait", hits.Load())
			}
			if _, err := h.db.GetCrawl(ctx, "other-1"); !errors.Is(err, crawl.ErrNotFound) {
				t.Errorf("a crawl put off was recorded: %v", err)
			}
			oc, err := h.db.GetCandidate(ctx, other.URL)
			if err != nil || !due(oc) || oc.CrawlUUID != "" {
				t.Errorf("the URL put off: %+v, %v; want due %s later, under no crawl", oc, err, tt.wait)
			}
		})
	}
}

// TestBackOffHoldsWaitingTasks: crawls that wait for the host's turn
// while it answers "wait an hour" send nothing once their turn comes:
// one request in all.
func TestBackOffHoldsWaitingTasks(t *testing.T) {
	var hits atomic.Int32
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(20 * time.Millisecond) // the others queue at the host's slot meanwhile
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	var tasks []crawl.FetchTask
	for i := range 4 {
		tasks = append(tasks, h.queue(t, fmt.Sprintf("%s/p%d", srv.URL, i), fmt.Sprintf("c%d", i)))
	}
	var wg sync.WaitGroup
	for _, task := range tasks {
		wg.Go(func() {
			if err := h.f.Handle(ctx, task); err != nil {
				t.Errorf("handle %s: %v", task.URL, err)
			}
		})
	}
	wg.Wait()
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests; the host asked to wait after the first", n)
	}
	for _, task := range tasks {
		if c, err := h.db.GetCandidate(ctx, task.URL); err != nil || c.State != crawl.StateDue {
			t.Errorf("%s: %+v, %v; want due", task.URL, c, err)
		}
	}
}

// TestBackOffSendsNoRobotsTxt: a host that asked to wait is not sent
// its robots.txt either when its rules expire meanwhile: the URLs put
// off wait for the host's time, and robots.txt is asked for then.
func TestBackOffSendsNoRobotsTxt(t *testing.T) {
	var pages, robotsTxt atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsTxt.Add(1)
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		pages.Add(1)
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(srv.Close)
	// Rules that expire at once: each crawl would ask for robots.txt.
	h := newHarness(t, nil, func(c *Config) { c.RobotsTTL = time.Nanosecond })
	h.crawl(t, srv.URL+"/busy", nil)
	if pages.Load() != 1 || robotsTxt.Load() != 1 {
		t.Fatalf("first crawl: %d page and %d robots.txt requests, want 1 and 1", pages.Load(), robotsTxt.Load())
	}
	time.Sleep(1100 * time.Millisecond) // the rules' second is over
	ctx := context.Background()
	other := h.queue(t, srv.URL+"/other", "other-1")
	if err := h.f.Handle(ctx, other); err != nil {
		t.Fatal(err)
	}
	if pages.Load() != 1 || robotsTxt.Load() != 1 {
		t.Errorf("after the host asked to wait: %d page and %d robots.txt requests, want still 1 and 1", pages.Load(), robotsTxt.Load())
	}
	if c, err := h.db.GetCandidate(ctx, other.URL); err != nil || c.State != crawl.StateDue || c.CrawlUUID != "" {
		t.Errorf("the URL put off: %+v, %v; want due, under no crawl", c, err)
	}
}

// bumpingStore writes the candidate once (as an admission would) just
// before the first PutCandidate it is asked for, which then loses.
type bumpingStore struct {
	Store
	bumped bool
}

func (s *bumpingStore) PutCandidate(ctx context.Context, c crawl.Candidate) error {
	if !s.bumped {
		s.bumped = true
		cur, err := s.Store.GetCandidate(ctx, c.URL)
		if err != nil {
			return err
		}
		cur.Priority++
		if err := s.Store.PutCandidate(ctx, cur); err != nil {
			return err
		}
	}
	return s.Store.PutCandidate(ctx, c)
}

// TestPutOffAfterAConflict: a crawl put off whose candidate was written
// meanwhile is put off all the same, not left queued with no task.
func TestPutOffAfterAConflict(t *testing.T) {
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusTooManyRequests)
	})
	h := newHarness(t, nil, nil)
	h.crawl(t, srv.URL+"/first", nil)
	ctx := context.Background()
	task := h.queue(t, srv.URL+"/second", "second-1")
	h.f.store = &bumpingStore{Store: h.db}
	if err := h.f.Handle(ctx, task); err != nil {
		t.Fatal(err)
	}
	if c, err := h.db.GetCandidate(ctx, task.URL); err != nil || c.State != crawl.StateDue || c.CrawlUUID != "" || c.Priority != 1 {
		t.Errorf("after a lost write: %+v, %v; want due under no crawl, with the other writer's priority", c, err)
	}
}

func TestTransientErrorsRetriedThenRecorded(t *testing.T) {
	// A server that accepts and resets every connection.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepts int
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepts++
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	h := newHarness(t, nil, func(c *Config) { c.RobotsErrorTTL = 0 })
	res, err := h.f.get(context.Background(), crawl.Candidate{URL: "http://" + ln.Addr().String() + "/"}, h.f.cfg)
	if err != nil || res.code != crawl.ExitNetworkError || !res.transient {
		t.Fatalf("reset connection: %v %v transient=%v", res.code, err, res.transient)
	}
	if _, retry := h.f.retryAfter(res, 0, 0); !retry {
		t.Error("a reset connection is not retried")
	}
	if _, retry := h.f.retryAfter(res, h.f.cfg.MaxRetries, 0); retry {
		t.Error("retries are not bounded")
	}
}

func TestRobotsTag(t *testing.T) {
	tests := []struct {
		v                 string
		nofollow, noindex bool
	}{
		{"noindex", false, true},
		{"nofollow, noindex", true, true},
		{"none", true, true},
		{"otherbot: noindex", false, false},
		{"crawler-test: nofollow", true, false},
		{"unavailable_after: 25 Jun 2010 15:00:00 PST", false, false},
		{"otherbot: noindex, crawler-test: nofollow", true, false},
	}
	for _, tt := range tests {
		nf, ni := RobotsTag(tt.v, "crawler-test/1.0 (+x)")
		if nf != tt.nofollow || ni != tt.noindex {
			t.Errorf("RobotsTag(%q) = %v %v, want %v %v", tt.v, nf, ni, tt.nofollow, tt.noindex)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"5": 5 * time.Second, "0": 0, "Thu, 01 Jan 2026 00:00:10 GMT": 10 * time.Second,
	} {
		if got, ok := parseRetryAfter(v, now); !ok || got != want {
			t.Errorf("parseRetryAfter(%q) = %v %v, want %v", v, got, ok, want)
		}
	}
	if _, ok := parseRetryAfter("soon", now); ok {
		t.Error("parseRetryAfter accepted garbage")
	}
}

// busyPolite refuses the host's slot while busy is set, as the Lambda
// home's gate does when another invocation holds the host.
type busyPolite struct {
	busy  bool
	inner Politeness
}

var errHostBusy = fmt.Errorf("host busy elsewhere")

func (b *busyPolite) Wait(ctx context.Context, host string, d time.Duration) (func(), error) {
	if b.busy {
		return nil, errHostBusy
	}
	return b.inner.Wait(ctx, host, d)
}

func (b *busyPolite) Sleep(ctx context.Context, host string, d time.Duration) error {
	return b.inner.Sleep(ctx, host, d)
}

// A fetch that cannot get the host's slot, even for robots.txt, records
// nothing and fails transiently with the gate's error (the Lambda home
// re-sends it later); it does not record a robots verdict.
func TestBusyHostRecordsNothing(t *testing.T) {
	var requests sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Store(r.URL.Path, true)
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, "<p>hello</p>")
	}))
	defer srv.Close()
	h := newHarness(t, nil, nil)
	polite := &busyPolite{busy: true, inner: politeness.NewGate(0)}
	h.f.polite = polite
	ctx := context.Background()
	u := srv.URL + "/page"
	task := h.queue(t, u, "c1")
	err := h.f.Handle(ctx, task)
	if !errors.Is(err, errHostBusy) || !crawl.IsTransient(err) {
		t.Fatalf("Handle with the host busy = %v; want a transient error wrapping the gate's", err)
	}
	if _, err := h.db.GetCrawl(ctx, "c1"); !errors.Is(err, crawl.ErrNotFound) {
		t.Fatalf("a crawl was recorded while the host was busy: %v", err)
	}
	if _, ok := requests.Load("/robots.txt"); ok {
		t.Fatal("robots.txt was requested without the host's slot")
	}
	polite.busy = false
	if err := h.f.Handle(ctx, task); err != nil {
		t.Fatalf("Handle once the host is free: %v", err)
	}
	cr, err := h.db.GetCrawl(ctx, "c1")
	if err != nil || cr.Log.ExitCode != crawl.ExitComplete {
		t.Fatalf("crawl after the host freed up = %v, %v; want complete", cr.Log.ExitCode, err)
	}
}

// failingObjects is a blob store whose writes fail while down is set.
type failingObjects struct {
	*blobfs.Store
	down bool
}

func (f *failingObjects) Put(ctx context.Context, key string, data []byte) error {
	if f.down {
		return errors.New("the object store is down")
	}
	return f.Store.Put(ctx, key, data)
}

// TestBodyKeptBeforeRecord: the body is stored before the crawl is
// recorded. When it cannot be (its WARC file's PUT fails), the task
// fails and nothing is recorded, so no record names a missing body and
// the task's redelivery fetches the page again; once the store is back,
// the crawl is recorded with a key that reads the body back.
func TestBodyKeptBeforeRecord(t *testing.T) {
	srv := pageServer(t, "<p>kept</p>")
	ctx := context.Background()
	h := newHarness(t, nil, nil)
	fs, err := blobfs.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	objs := &failingObjects{Store: fs, down: true}
	packer := warc.NewPacker(objs, warc.PackConfig{Prefix: "warc/"})
	h.f.bodies = packer
	u := srv.URL + "/page"
	task := h.queue(t, u, "c1")
	if err := h.f.Handle(ctx, task); err == nil || !strings.Contains(err.Error(), "the object store is down") {
		t.Fatalf("handle with the store down: %v, want its error", err)
	}
	if _, err := h.db.GetCrawl(ctx, "c1"); !errors.Is(err, crawl.ErrNotFound) {
		t.Fatalf("a crawl was recorded without its body: %v", err)
	}
	objs.down = false
	if err := h.f.Handle(ctx, task); err != nil {
		t.Fatal(err)
	}
	cr, err := h.db.GetCrawl(ctx, "c1")
	if err != nil || cr.File == nil {
		t.Fatalf("crawl after the store came back: %+v, %v", cr, err)
	}
	body, err := packer.Get(ctx, cr.File.BodyKey)
	if err != nil || string(body) != "<p>kept</p>" {
		t.Errorf("body at %q: %q, %v", cr.File.BodyKey, body, err)
	}
}

// TestLinkHeaderCanonical: a canonical sent in an HTTP Link header is
// recorded, resolved against the page URL, as the file's canonical URL;
// one naming the page itself, or a header that does not parse, is not.
func TestLinkHeaderCanonical(t *testing.T) {
	tests := []struct {
		name, link, want string // want: the path of the canonical, "" for none
	}{
		{"relative target", `</print/a>; rel=next, </a>; rel="canonical"`, "/a"},
		{"absolute target, token rel", `<{srv}/b?x=1>; rel=canonical`, "/b?x=1"},
		{"the page itself", `</page>; rel=canonical`, ""},
		{"no canonical", `</a>; rel=alternate`, ""},
		{"malformed", `/a; rel=canonical`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srvURL string
			srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", strings.ReplaceAll(tt.link, "{srv}", srvURL))
				fmt.Fprint(w, "<p>hello</p>")
			})
			srvURL = srv.URL
			cr, _ := newHarness(t, nil, nil).crawl(t, srv.URL+"/page", nil)
			if cr.File == nil {
				t.Fatalf("no file recorded (%v)", cr.Log.ExitCode)
			}
			got := ""
			if cr.File.CanonicalURL != nil {
				got = strings.TrimPrefix(*cr.File.CanonicalURL, srv.URL)
			}
			if got != tt.want {
				t.Errorf("canonical = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestBinaryServedAsText: a body labelled text/plain whose first bytes
// are binary (WHATWG MIME sniffing) is recorded as its sniffed type, so
// that it is not parsed and searched as words; text stays text.
func TestBinaryServedAsText(t *testing.T) {
	tests := []struct {
		name, ct, body, want string
	}{
		{"text", "text/plain", "notes of the day\n", "text/plain"},
		{"UTF-16 text", "text/plain", "\xff\xfen\x00o\x00t\x00e\x00", "text/plain"},
		{"UTF-16 text named so, no byte order mark", "text/plain; charset=utf-16le", "n\x00o\x00t\x00e\x00", "text/plain"},
		{"a PDF", "text/plain", "%PDF-1.4\n1 0 obj\x00\x01", "application/pdf"},
		{"a PDF labelled UTF-8 text", "text/plain; charset=UTF-8", "%PDF-1.4\n1 0 obj\x00\x01", "application/pdf"},
		{"gzip", "text/plain; charset=iso-8859-1", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", "application/x-gzip"},
		{"unknown binary", "text/plain", "BLOB\x00\x01\x02\x03", "application/octet-stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.ct)
				fmt.Fprint(w, tt.body)
			})
			cr, _ := newHarness(t, nil, nil).crawl(t, srv.URL+"/file", nil)
			if cr.File == nil {
				t.Fatalf("no file recorded (%v)", cr.Log.ExitCode)
			}
			if cr.File.MIMEType != tt.want {
				t.Errorf("mimetype = %q, want %q", cr.File.MIMEType, tt.want)
			}
		})
	}
}

// TestTaskAgainstCandidateState: a fetch task is fetched while its
// candidate is queued for it, and again when the candidate shows it
// crawled but the log has no such crawl (a store stopped between its
// candidate and log writes); a task its candidate has moved on from
// fetches nothing.
func TestTaskAgainstCandidateState(t *testing.T) {
	var hits atomic.Int32
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "<p>page</p>")
	})
	tests := []struct {
		name      string
		state     crawl.CandidateState
		crawlUUID string
		wantFetch bool
	}{
		{"queued for the task", crawl.StateQueued, "c1", true},
		{"crawled by the task, no log", crawl.StateCrawled, "c1", true},
		{"due again after the task, no log", crawl.StateDue, "c1", true},
		{"queued for a later crawl", crawl.StateQueued, "c2", false},
		{"crawled by another crawl", crawl.StateCrawled, "c2", false},
		{"filtered since", crawl.StateFiltered, "c1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			h := newHarness(t, nil, nil)
			u := srv.URL + "/page"
			task := h.queue(t, u, "c1")
			c, err := h.db.GetCandidate(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			c.State, c.CrawlUUID = tt.state, tt.crawlUUID
			if err := h.db.PutCandidate(ctx, c); err != nil {
				t.Fatal(err)
			}
			before := hits.Load()
			if err := h.f.Handle(ctx, task); err != nil {
				t.Fatal(err)
			}
			fetched := hits.Load() > before
			_, err = h.db.GetCrawl(ctx, "c1")
			recorded := err == nil
			if fetched != tt.wantFetch || recorded != tt.wantFetch || (len(h.parse.bodies) == 1) != tt.wantFetch {
				t.Errorf("fetched %v, recorded %v, parse tasks %d; want fetched and recorded %v",
					fetched, recorded, len(h.parse.bodies), tt.wantFetch)
			}
		})
	}
}

// logReads counts the crawl log reads of the store it wraps.
type logReads struct {
	Store
	n atomic.Int32
}

func (s *logReads) GetCrawl(ctx context.Context, crawlUUID string) (crawl.Crawl, error) {
	s.n.Add(1)
	return s.Store.GetCrawl(ctx, crawlUUID)
}

// TestHandledTwice: a task's first delivery, its candidate queued for
// it, fetches without reading the crawl log; its redelivery finds the
// crawl recorded, fetches nothing and hands the crawl on again.
func TestHandledTwice(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			hits.Add(1)
		}
		fmt.Fprint(w, "<p>page</p>")
	}))
	defer srv.Close()
	h := newHarness(t, nil, nil)
	store := &logReads{Store: h.db}
	h.f.store = store
	task := h.queue(t, srv.URL+"/page", "c1")
	for i, want := range []struct{ hits, logReads, parseTasks int32 }{{1, 0, 1}, {1, 1, 2}} {
		if err := h.f.Handle(context.Background(), task); err != nil {
			t.Fatal(err)
		}
		if hits.Load() != want.hits || store.n.Load() != want.logReads || int32(len(h.parse.bodies)) != want.parseTasks {
			t.Errorf("delivery %d: %d fetches, %d log reads, %d parse tasks; want %d, %d, %d", i+1,
				hits.Load(), store.n.Load(), len(h.parse.bodies), want.hits, want.logReads, want.parseTasks)
		}
	}
}

// firstRecorder records another delivery's fetch of the same crawl
// just before the first RecordCrawl it is asked for.
type firstRecorder struct {
	Store
	done  bool
	other crawl.Crawl
}

func (s *firstRecorder) RecordCrawl(ctx context.Context, cr crawl.Crawl, c *crawl.Candidate) (bool, error) {
	if !s.done {
		s.done = true
		s.other = cr
		s.other.Log.TimeStarted--
		file := *cr.File
		file.BodyKey = "another-delivery's-body"
		s.other.File = &file
		if _, err := s.Store.RecordCrawl(ctx, s.other, c); err != nil {
			return false, err
		}
	}
	return s.Store.RecordCrawl(ctx, cr, c)
}

// TestRecordedByAnotherDelivery: when another delivery of the task
// recorded the crawl first, the parse task carries the crawl as
// recorded, not this delivery's fetch of it.
func TestRecordedByAnotherDelivery(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<p>page</p>")
	}))
	defer srv.Close()
	h := newHarness(t, nil, nil)
	store := &firstRecorder{Store: h.db}
	h.f.store = store
	task := h.queue(t, srv.URL+"/page", "c1")
	if err := h.f.Handle(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	if len(h.parse.bodies) != 1 {
		t.Fatalf("%d parse tasks, want 1", len(h.parse.bodies))
	}
	var pt crawl.ParseTask
	if err := json.Unmarshal(h.parse.bodies[0], &pt); err != nil {
		t.Fatal(err)
	}
	if pt.Crawl == nil || pt.Crawl.Log.TimeStarted != store.other.Log.TimeStarted || pt.Crawl.File.BodyKey != store.other.File.BodyKey {
		t.Errorf("the parse task carries %+v, want the crawl recorded first (started %d, body %s)", pt.Crawl, store.other.Log.TimeStarted, store.other.File.BodyKey)
	}
	if pt.BodyKey != store.other.File.BodyKey {
		t.Errorf("the parse task reads body %s, want %s", pt.BodyKey, store.other.File.BodyKey)
	}
}

// TestLocationByTheURLStandard: a redirect's Location that net/url
// cannot parse but the URL Standard can is followed as the URL Standard
// reads it, not failed as a network error by net/http's client.
func TestLocationByTheURLStandard(t *testing.T) {
	for _, loc := range []string{"/new", "/a%zz/b", `\bs-target`, `..\up\x`, "/sp ace"} {
		t.Run(loc, func(t *testing.T) {
			srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Location"] = []string{loc}
				w.WriteHeader(http.StatusFound)
			})
			from := srv.URL + "/dir/old"
			cr, _ := newHarness(t, nil, nil).crawl(t, from, nil)
			if cr.Log.ExitCode != crawl.ExitRedirect || cr.Redirect == nil {
				t.Fatalf("exit %v (%s), redirect %+v; want a redirect", cr.Log.ExitCode, ptrStr(cr.Log.Message), cr.Redirect)
			}
			want, err := urlnorm.Resolve(from, loc)
			if err != nil {
				t.Fatal(err)
			}
			if cr.Redirect.ToURL != want.URL {
				t.Errorf("redirect to %s, want %s", cr.Redirect.ToURL, want.URL)
			}
		})
	}
}

func ptrStr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestRedirectHandedOnAsRecorded: a redirect's target is enqueued as the
// crawl that followed it was recorded: a forced crawl's target as
// reenqueued, also when the crawl is handed on again by a task that
// names the type its candidate has since (a recrawl), as a resumed run
// hands on what a stopped one recorded (Scheduler.FetchTask).
func TestRedirectHandedOnAsRecorded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	h := newHarness(t, nil, nil)
	ctx := context.Background()
	u := srv.URL + "/old"
	c := crawl.Candidate{URL: u, Host: strings.TrimPrefix(srv.URL, "http://"), CrawlType: crawl.CrawlForced, State: crawl.StateQueued, CrawlUUID: "forced-1"}
	if err := h.db.PutCandidate(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		typ  crawl.CrawlType
	}{
		{"the forced crawl's own task", crawl.CrawlForced},
		{"handed on again with the candidate's later type", crawl.CrawlRecrawl},
	} {
		h.enqueue.bodies = nil
		if err := h.f.Handle(ctx, crawl.FetchTask{URL: u, CrawlUUID: "forced-1", CrawlType: tt.typ}); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		var target *crawl.EnqueueEvent
		for _, b := range h.enqueue.bodies {
			var ev crawl.EnqueueEvent
			if err := json.Unmarshal(b, &ev); err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(ev.URL, "/new") {
				target = &ev
			}
		}
		if target == nil {
			t.Fatalf("%s: the redirect's target not enqueued (%d events)", tt.name, len(h.enqueue.bodies))
		}
		if target.EnqueueType != crawl.EnqueueReenqueued {
			t.Errorf("%s: /new enqueued as %v, want reenqueued (a forced crawl follows its redirect now)", tt.name, target.EnqueueType)
		}
		// Asked for when the recorded crawl started, the same each time
		// it is handed on: a target crawled since is not crawled again.
		got, err := h.db.GetCandidate(ctx, u)
		if err != nil || got.LastCrawlTime == nil {
			t.Fatalf("%s: candidate %+v (%v), want its crawl recorded", tt.name, got, err)
		}
		if target.RequestedAt != *got.LastCrawlTime {
			t.Errorf("%s: /new requested at %d, want %d, when the redirect's recorded crawl started", tt.name, target.RequestedAt, *got.LastCrawlTime)
		}
	}
}

// TestRedirectTooLongToEnqueue: a redirect to a URL longer than an
// enqueue event may carry is recorded, its target with it, and no event
// is sent for the target (the scheduler could not take it, and would
// dead-letter the event).
func TestRedirectTooLongToEnqueue(t *testing.T) {
	target := "/" + strings.Repeat("x", crawl.MaxURLLength)
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target, http.StatusFound)
	})
	h := newHarness(t, nil, nil)
	cr, _ := h.crawl(t, srv.URL+"/old", nil)
	if cr.Log.ExitCode != crawl.ExitRedirect || cr.Redirect == nil || cr.Redirect.ToURL != srv.URL+target {
		t.Fatalf("crawl: exit %v, redirect %+v; want the redirect to the long URL recorded", cr.Log.ExitCode, cr.Redirect)
	}
	for _, b := range h.enqueue.bodies {
		if _, err := crawl.ParseEnqueueEvent(b); err != nil {
			t.Errorf("an enqueue event the scheduler cannot read: %v", err)
		}
	}
}

// TestLongStatusLineLogged: what a server says in its status line is
// kept in the crawl's message up to crawl.MaxLogMessage, however long:
// the message is an attribute of an item of at most 400 KB on AWS.
func TestLongStatusLineLogged(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					status := "404 Not Found"
					if req.URL.Path != "/robots.txt" {
						status = "500 " + strings.Repeat("é", 300<<10)
					}
					fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Length: 0\r\n\r\n", status)
				}
			}()
		}
	}()
	h := newHarness(t, nil, nil)
	cr, _ := h.crawl(t, "http://"+ln.Addr().String()+"/page", nil)
	if cr.Log.ExitCode != crawl.ExitHTTPServerError || cr.Log.Message == nil {
		t.Fatalf("exit %v, message %v; want a server error with its message", cr.Log.ExitCode, cr.Log.Message)
	}
	if m := *cr.Log.Message; len(m) > crawl.MaxLogMessage+len("…") || !utf8.ValidString(m) || !strings.HasPrefix(m, "HTTP 500 éé") {
		t.Errorf("message of %d bytes (valid UTF-8: %v) %q", len(m), utf8.ValidString(m), crawl.Truncate(m, 40))
	}
}

// pageServer serves body at every path but /robots.txt (404: no rules).
func pageServer(t *testing.T, body string) *httptest.Server {
	return noRobotsServer(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) })
}

// noRobotsServer serves h at every path but /robots.txt (404: no rules),
// until the test ends.
func noRobotsServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// rewriting is a store in which the candidate is written by another
// process (mod) just before the first crawl is recorded: a requeue of a
// release thought lost, a hold of its site.
type rewriting struct {
	*sqlite.DB
	t    *testing.T
	once sync.Once
	mod  func(*crawl.Candidate)
}

func (s *rewriting) RecordCrawl(ctx context.Context, cr crawl.Crawl, c *crawl.Candidate) (bool, error) {
	s.once.Do(func() {
		now, err := s.GetCandidate(ctx, cr.Log.URL)
		if err != nil {
			s.t.Fatal(err)
		}
		s.mod(&now)
		if err := s.PutCandidate(ctx, now); err != nil {
			s.t.Fatal(err)
		}
	})
	return s.DB.RecordCrawl(ctx, cr, c)
}

func TestCandidateWrittenDuringTheCrawl(t *testing.T) {
	srv := pageServer(t, "<p>hello</p>")
	later := time.Now().Add(time.Hour).Unix()
	for _, tt := range []struct {
		name string
		mod  func(*crawl.Candidate)
		// the candidate after: recorded into, or left as mod made it
		into  bool
		state crawl.CandidateState
	}{
		{"released again", func(c *crawl.Candidate) { c.CrawlUUID, c.QueuedAt = "newer", c.QueuedAt+1 }, false, crawl.StateQueued},
		{"crawled since, then held", func(c *crawl.Candidate) {
			c.CrawlUUID, c.State, c.LastCrawlTime = "", crawl.StateHeld, &later
		}, false, crawl.StateHeld},
		{"held", func(c *crawl.Candidate) { c.CrawlUUID, c.State = "", crawl.StateHeld }, true, crawl.StateCrawled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil, nil)
			h.f.store = &rewriting{DB: h.db, t: t, mod: tt.mod}
			u := srv.URL + "/page"
			if err := h.f.Handle(t.Context(), h.queue(t, u, "older")); err != nil {
				t.Fatal(err)
			}
			// The crawl is kept, and handed on, either way.
			cr, err := h.db.GetCrawl(t.Context(), "older")
			if err != nil || cr.Log.ExitCode != crawl.ExitComplete {
				t.Errorf("the crawl: %+v, %v; want it recorded, complete", cr.Log, err)
			}
			if len(h.parse.bodies) != 1 {
				t.Errorf("%d parse tasks, want the crawl's", len(h.parse.bodies))
			}
			c, err := h.db.GetCandidate(t.Context(), u)
			if err != nil {
				t.Fatal(err)
			}
			into := c.LastCrawlTime != nil && *c.LastCrawlTime == cr.Log.TimeStarted
			if into != tt.into || c.State != tt.state {
				t.Errorf("candidate: state %v, last crawl %v (the crawl's %d); want recorded into it %v, state %v",
					c.State, c.LastCrawlTime, cr.Log.TimeStarted, tt.into, tt.state)
			}
		})
	}
}

func TestUnsettled304s(t *testing.T) {
	var conditional atomic.Int32
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
			conditional.Add(1)
		}
		w.WriteHeader(http.StatusNotModified) // whatever was asked
	})

	t.Run("no content to confirm", func(t *testing.T) {
		h := newHarness(t, nil, nil)
		cr, _ := h.crawl(t, srv.URL+"/never-fetched", nil)
		if cr.Log.ExitCode != crawl.ExitUnchanged {
			t.Fatalf("exit %v, want unchanged", cr.Log.ExitCode)
		}
		if n := len(h.summarize.bodies); n != 1 {
			t.Errorf("%d summarize tasks, want 1: a 304 with no content before it is left to the summarizer", n)
		}
	})
	t.Run("fetched again after a lost log write", func(t *testing.T) {
		h := newHarness(t, nil, nil)
		u := srv.URL + "/page"
		// What a fetcher stopped between its two writes leaves (the
		// DynamoDB store's): the candidate shows the crawl, with the
		// validators it got, and there is no log of it.
		at, etag := int64(1700000000), `"v2"`
		c := crawl.Candidate{URL: u, Host: strings.TrimPrefix(srv.URL, "http://"), CrawlType: crawl.CrawlRecrawl,
			State: crawl.StateCrawled, CrawlUUID: "lost-log", LastCrawlTime: &at, LastContentfulCrawlTime: &at, LastContentfulETag: &etag}
		if err := h.db.PutCandidate(t.Context(), c); err != nil {
			t.Fatal(err)
		}
		conditional.Store(0)
		if err := h.f.Handle(t.Context(), crawl.FetchTask{URL: u, CrawlUUID: "lost-log", CrawlType: crawl.CrawlRecrawl}); err != nil {
			t.Fatal(err)
		}
		if n := conditional.Load(); n != 0 {
			t.Errorf("%d conditional requests: the validators were the lost crawl's own", n)
		}
		if _, err := h.db.GetCrawl(t.Context(), "lost-log"); err != nil {
			t.Errorf("the crawl's log: %v", err)
		}
		if n := len(h.summarize.bodies); n != 1 {
			t.Errorf("%d summarize tasks, want 1", n)
		}
	})
}

// TestStatusOutcomes: a status is named by its class, and one past 599
// (no HTTP status: RFC 9110 defines 100 to 599) is bad content, not a
// server error; the request row says the same. A 206 to a request that
// asked for no range is bad content too (its request row keeps what the
// server said).
func TestStatusOutcomes(t *testing.T) {
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/s"))
		w.WriteHeader(code)
	})
	h := newHarness(t, nil, func(c *Config) { c.RetryBase = time.Millisecond })
	tests := []struct {
		status int
		want   crawl.ExitCode
	}{
		{299, crawl.ExitComplete},
		{418, crawl.ExitHTTPClientError},
		{500, crawl.ExitHTTPServerError},
		{599, crawl.ExitHTTPServerError},
		{600, crawl.ExitBadContent},
		{999, crawl.ExitBadContent},
		{206, crawl.ExitBadContent}, // a part the crawler did not ask for
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			cr, _ := h.crawl(t, fmt.Sprintf("%s/s%d", srv.URL, tt.status), nil)
			if cr.Log.ExitCode != tt.want {
				t.Errorf("HTTP %d: %v, want %v", tt.status, cr.Log.ExitCode, tt.want)
			}
			if n := len(cr.Requests); n == 0 || tt.status != 206 && cr.Requests[n-1].ExitCode != tt.want {
				t.Errorf("HTTP %d: requests %+v, the last one %v", tt.status, cr.Requests, tt.want)
			}
		})
	}
}

// TestRetryLogSaysWhy: a retry after a 429 or 503 is logged with the
// status as its reason.
func TestRetryLogSaysWhy(t *testing.T) {
	var hits atomic.Int32
	srv := noRobotsServer(t, func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "<p>back</p>")
	})
	var logs bytes.Buffer
	h := newHarness(t, nil, nil)
	h.f.log = slog.New(slog.NewTextHandler(&logs, nil))
	if cr, _ := h.crawl(t, srv.URL+"/page", nil); cr.Log.ExitCode != crawl.ExitComplete {
		t.Fatalf("crawl: %v", cr.Log.ExitCode)
	}
	if !strings.Contains(logs.String(), `msg=retrying`) || !strings.Contains(logs.String(), `reason="HTTP 503 Service Unavailable"`) {
		t.Errorf("log %q; want the retry with its reason", logs.String())
	}
}
