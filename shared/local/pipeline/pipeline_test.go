package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

const testUA = "crawler-test/1.0 (+https://example.org/bot)"

func testConfig(seed string) Config {
	fc := fetch.DefaultConfig()
	fc.UserAgent, fc.Delay, fc.Timeout = testUA, 5*time.Millisecond, time.Second
	cfg := Config{Seeds: []string{seed}, Concurrency: 4, Fetch: fc}
	cfg.Policy.MaxDepth = 8
	cfg.Summarize.Tokens = true
	return cfg
}

func crawlSite(t *testing.T, dir string, cfg Config) Result {
	t.Helper()
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	res, err := dd.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

func TestCrawlTestSite(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(3 * time.Second)
	dir := t.TempDir()
	res := crawlSite(t, dir, testConfig(site.URL+"/"))

	counts := site.Counts()
	for p, n := range counts {
		if n != 1 {
			t.Errorf("%s requested %d times, want once", p, n)
		}
	}
	want := append([]string{}, testsite.Ordinary...)
	for p := range testsite.Files {
		want = append(want, p)
	}
	for p := range testsite.Failing {
		want = append(want, p)
	}
	for p := range testsite.Redirects {
		want = append(want, p)
	}
	want = append(want, "/hang")
	for _, p := range want {
		if counts[p] == 0 {
			t.Errorf("%s was never requested", p)
		}
	}
	for _, r := range site.Requests() {
		if r.UserAgent != testUA {
			t.Errorf("request for %s had User-Agent %q", r.Path, r.UserAgent)
		}
	}

	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	db := dd.DB.SQL()
	for _, table := range []string{"url", "mimetype", "agent", "crawl_log", "request", "file", "file_text", "redirect",
		"crawl_candidate", "entity_generation", "duplicate_summary", "crawl_summary", "http_summary", "file_summary",
		"redirect_summary", "link_summary", "document_description", "text_pile", "token", "token_statistics",
		"full_text_entity_index"} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM ` + table).Scan(&n); err != nil {
			t.Errorf("table %s: %v", table, err)
		}
	}

	exitOf := func(path string) crawl.ExitCode {
		t.Helper()
		var code crawl.ExitCode
		err := db.QueryRow(`SELECT c.last_crawl_exit_code FROM crawl_candidate c JOIN url u ON u.url_id=c.url_id WHERE u.url=?`,
			site.URL+path).Scan(&code)
		if err != nil {
			t.Errorf("candidate %s: %v", path, err)
		}
		return code
	}
	for _, p := range testsite.Ordinary {
		if got := exitOf(p); got != crawl.ExitComplete {
			t.Errorf("%s: exit %v, want complete", p, got)
		}
	}
	for p, code := range map[string]crawl.ExitCode{
		"/missing.html": crawl.ExitHTTPClientError, "/gone.html": crawl.ExitHTTPClientError,
		"/broken.html": crawl.ExitHTTPServerError, "/hang": crawl.ExitTimeout, "/old.html": crawl.ExitRedirect,
		"/chain-1.html": crawl.ExitRedirect, "/files/report.pdf": crawl.ExitComplete,
	} {
		if got := exitOf(p); got != code {
			t.Errorf("%s: exit %v, want %v", p, got, code)
		}
	}
	for p, mt := range testsite.Files {
		var got string
		err := db.QueryRow(`SELECT m.mimetype FROM file f JOIN url u ON u.url_id=f.url_id JOIN mimetype m ON m.mimetype_id=f.mimetype_id
			WHERE u.url=?`, site.URL+p).Scan(&got)
		if err != nil || got != mt {
			t.Errorf("file %s: mimetype %q (%v), want %q", p, got, err, mt)
		}
	}
	// Every discovered URL has a candidate, crawlable or not.
	for u, code := range map[string]crawl.ExitCode{
		"http://other.invalid/elsewhere.html": crawl.ExitOutOfScope,
		"http://exa mple.com/":                crawl.ExitInvalidURL,
	} {
		var got crawl.ExitCode
		if err := db.QueryRow(`SELECT c.last_crawl_exit_code FROM crawl_candidate c JOIN url u ON u.url_id=c.url_id WHERE u.url=?`, u).Scan(&got); err != nil || got != code {
			t.Errorf("candidate %s: exit %v (%v), want %v", u, got, err, code)
		}
	}
	var redirects int
	if err := db.QueryRow(`SELECT count(*) FROM redirect`).Scan(&redirects); err != nil || redirects != len(testsite.Redirects) {
		t.Errorf("%d redirect rows (%v), want %d", redirects, err, len(testsite.Redirects))
	}
	if res.Outcomes[crawl.ExitComplete] < len(testsite.Ordinary) {
		t.Errorf("summary counts %d complete, want at least %d", res.Outcomes[crawl.ExitComplete], len(testsite.Ordinary))
	}

	// The full-text index finds a page by a word of its body.
	hits, err := dd.DB.Search(context.Background(), "Unique text for /docs/faq.html", 5)
	if err != nil || len(hits) == 0 || hits[0].URL != site.URL+"/docs/faq.html" {
		t.Errorf("search: %v, %+v", err, hits)
	}
}

func TestRerunFetchesNothingNew(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	dir := t.TempDir()
	crawlSite(t, dir, testConfig(site.URL+"/"))
	before := len(site.Requests())
	res := crawlSite(t, dir, testConfig(site.URL+"/"))
	if after := len(site.Requests()); after != before {
		t.Errorf("a second run on a finished crawl sent %d requests", after-before)
	}
	if res.Crawled != 0 {
		t.Errorf("second run crawled %d URLs, want 0", res.Crawled)
	}
}

// TestResumeKeepsRobots: a crawl stopped by --max-pages and run again
// keeps robots.txt from the first run (it is fresh for 24 h) instead of
// fetching it again, and still obeys it.
func TestResumeKeepsRobots(t *testing.T) {
	site := newCitizenSite("http://127.0.0.1:1")
	defer site.Close()
	dir := t.TempDir()
	cfg := testConfig(site.URL + "/")
	cfg.Fetch.UserAgent = "crawler-test/1.0 (+https://example.org/bot)"
	cfg.Fetch.Timeout = 300 * time.Millisecond
	cfg.MaxPages = 4
	for run := 1; run <= 3; run++ {
		if res := crawlSite(t, dir, cfg); res.Crawled == 0 {
			t.Fatalf("run %d crawled nothing", run)
		}
	}
	if n := site.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times over three runs, want once", n)
	}
	if len(site.requests()) < 10 {
		t.Fatalf("three runs sent only %d requests", len(site.requests()))
	}
	for _, p := range []string{"/private/secret.html", "/members"} {
		if n := site.count(p); n != 0 {
			t.Errorf("a resumed run fetched %s, which robots.txt disallows", p)
		}
	}
}

// TestMissingSitemapIsNotAnError: the test site has no robots.txt and
// no sitemap; the /sitemap.xml guessed for it answers 404, recorded as
// no-sitemap (seed 004 filtered), while a page's 404 stays an error.
func TestMissingSitemapIsNotAnError(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	dir := t.TempDir()
	res := crawlSite(t, dir, testConfig(site.URL+"/"))
	if site.Counts()["/sitemap.xml"] != 1 {
		t.Fatalf("/sitemap.xml requested %d times, want once", site.Counts()["/sitemap.xml"])
	}
	if res.Outcomes[crawl.ExitNoSitemap] != 1 {
		t.Errorf("outcomes %v, want one no-sitemap", res.Outcomes)
	}
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	for u, want := range map[string]crawl.ExitCode{
		site.URL + "/sitemap.xml":  crawl.ExitNoSitemap,
		site.URL + "/missing.html": crawl.ExitHTTPClientError,
	} {
		c, err := dd.DB.GetCandidate(context.Background(), u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		if c.LastCrawlExitCode == nil || *c.LastCrawlExitCode != want {
			t.Errorf("%s: exit %v, want %v", u, c.LastCrawlExitCode, want)
		}
	}
}

// TestRecrawlFetchesEachURLOnce: --recrawl makes every known URL due,
// redirect targets among them; following a redirect to a target already
// crawled in this recrawl does not fetch it again.
func TestRecrawlFetchesEachURLOnce(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	dir := t.TempDir()
	cfg := testConfig(site.URL + "/")
	crawlSite(t, dir, cfg)
	before := site.Counts()
	cfg.Recrawl = true
	crawlSite(t, dir, cfg)
	recrawled := 0
	for p, n := range site.Counts() {
		if d := n - before[p]; d > 1 {
			t.Errorf("the recrawl fetched %s %d times", p, d)
		} else if d == 1 {
			recrawled++
		}
	}
	if recrawled < len(before)/2 {
		t.Errorf("the recrawl fetched %d of %d paths", recrawled, len(before))
	}
	for from, to := range testsite.Redirects {
		if site.Counts()[to] <= before[to] && !strings.Contains(to, "://") {
			t.Errorf("redirect target %s (from %s) was not recrawled", to, from)
		}
	}
}

func TestMaxDepthAndMaxPages(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	cfg := testConfig(site.URL + "/")
	cfg.Policy.MaxDepth = 1
	crawlSite(t, t.TempDir(), cfg)
	for p := range site.Counts() {
		// /deep/1.html is one hop from the seed; /deep/2.html is two.
		if p == "/deep/2.html" || p == "/deep/3.html" || p == "/news/2024.html" {
			t.Errorf("--max-depth 1 fetched %s", p)
		}
	}
	if site.Counts()["/deep/1.html"] != 1 {
		t.Error("--max-depth 1 did not fetch a page one hop away")
	}

	site2 := testsite.New()
	defer site2.Close()
	cfg = testConfig(site2.URL + "/")
	cfg.MaxPages = 5
	res := crawlSite(t, t.TempDir(), cfg)
	if n := len(site2.Requests()) - site2.Counts()["/robots.txt"]; n != 5 {
		t.Errorf("--max-pages 5 sent %d requests besides robots.txt", n)
	}
	if !res.StillDue {
		t.Error("result does not say URLs are still due")
	}
}

func TestDataDirLocked(t *testing.T) {
	dir := t.TempDir()
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	if _, err := OpenDataDir(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("second open: %v, want a lock error", err)
	}
}

func TestUnreachableHostIsRecorded(t *testing.T) {
	site := testsite.New()
	u, _ := url.Parse(site.URL)
	site.Close() // nothing listens there now
	dir := t.TempDir()
	res := crawlSite(t, dir, testConfig("http://"+u.Host+"/"))
	// RFC 9309: an unreachable robots.txt means complete disallow, for a
	// while; the URL is recorded as such and due again later.
	if res.Outcomes[crawl.ExitRobotsDisallowed] != 1 || !res.StillDue {
		t.Errorf("outcomes %v (still due %v), want one robots-disallowed, due again later", res.Outcomes, res.StillDue)
	}
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	st, err := dd.DB.Status(context.Background(), "http://"+u.Host+"/")
	if err != nil || st.Message == nil || !strings.Contains(*st.Message, "unreachable") || st.State != "pending" {
		t.Errorf("status %+v (%v): want a pending URL whose message says robots.txt was unreachable", st, err)
	}
}

// TestResumeWithManyQueued resumes a crawl that had more candidates
// released than one page of requeueing: each is fetched once, and the
// resume ends.
func TestResumeWithManyQueued(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer srv.Close()
	ctx := context.Background()
	dir := t.TempDir()
	dd, err := OpenDataDir(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	const n = 700
	for i := 0; i < n; i++ {
		c := crawl.Candidate{URL: fmt.Sprintf("%s/p%d", srv.URL, i), Host: host, State: crawl.StateQueued,
			CrawlUUID: fmt.Sprintf("lost-%d", i), QueuedAt: time.Now().Unix(), CrawlType: crawl.CrawlFirst}
		if err := dd.DB.PutCandidate(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	dd.Close()
	cfg := testConfig(srv.URL + "/")
	cfg.Fetch.Delay = 0
	done := make(chan Result, 1)
	go func() { done <- crawlSite(t, dir, cfg) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("resume did not finish")
	}
	for i := 0; i < n; i++ {
		if got := hits[fmt.Sprintf("/p%d", i)]; got != 1 {
			t.Fatalf("/p%d requested %d times, want once", i, got)
		}
	}
}
