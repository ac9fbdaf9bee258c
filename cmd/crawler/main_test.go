package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

// TestMain lets the test binary run as the crawler command, so tests can
// start it as a real process (and SIGKILL it).
func TestMain(m *testing.M) {
	if os.Getenv("CRAWLER_AS_MAIN") == "1" {
		main() // with its signal handling
	}
	os.Exit(m.Run())
}

func crawlerCmd(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CRAWLER_AS_MAIN=1")
	return cmd
}

// testSiteAndData serves the test site (its slow page answering at
// once) until the test ends, and gives a data directory of its own.
func testSiteAndData(t *testing.T) (*testsite.Site, string) {
	t.Helper()
	site := testsite.New()
	t.Cleanup(site.Close)
	site.SetHang(0)
	return site, t.TempDir()
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return o.String(), e.String(), code
}

func TestUsageErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage"},
		{"unknown command", []string{"fly"}, "unknown command"},
		{"no URL", []string{"crawl", "--data", t.TempDir()}, "no URL"},
		{"bad URL", []string{"crawl", "--data", t.TempDir(), "not a url"}, "invalid URL"},
		{"ftp URL", []string{"crawl", "--data", t.TempDir(), "ftp://example.org/"}, "invalid URL"},
		{"URL too long", []string{"crawl", "--data", t.TempDir(), "http://example.org/" + strings.Repeat("a", 3000)}, "3019 bytes long once normalized, more than the 2048"},
		{"host name too long", []string{"crawl", "--data", t.TempDir(), "http://" + strings.Repeat("a", 300) + ".example.org/"}, "host name is 312 bytes long, more than the 253"},
		{"URL too long once normalized", []string{"crawl", "--data", t.TempDir(), "http://example.org/" + strings.Repeat("é", 400)}, "more than the 2048"},
		{"host without a scheme", []string{"crawl", "--data", t.TempDir(), "example.org"}, "no scheme (did you mean https://example.org?)"},
		{"bad flag", []string{"crawl", "--no-such-flag", "http://example.org/"}, "flag provided but not defined"},
		{"bad duration", []string{"crawl", "--delay", "soon", "http://example.org/"}, "invalid value"},
		{"bad regexp", []string{"crawl", "--include", "(", "http://example.org/"}, "invalid value"},
		{"empty exclude", []string{"crawl", "--exclude", "", "http://example.org/"}, "filter pattern of 0 bytes"},
		{"empty include", []string{"crawl", "--include", "", "http://example.org/"}, "filter pattern of 0 bytes"},
		{"zero concurrency", []string{"crawl", "--concurrency", "0", "http://example.org/"}, "--concurrency"},
		{"huge concurrency", []string{"crawl", "--concurrency", "2147483647", "http://example.org/"}, "--concurrency must be from 1 to 256"},
		{"depth below -1", []string{"crawl", "--max-depth", "-2", "http://example.org/"}, "--max-depth must be -1"},
		{"negative links per page", []string{"crawl", "--max-urls-from-page", "-1", "http://example.org/"}, "--max-urls-from-page must be from 0"},
		{"huge body limit", []string{"crawl", "--max-resource-size", "2147483648", "http://example.org/"}, "--max-resource-size must be from 1 to 1073741824"},
		{"day-long delay", []string{"crawl", "--delay", "24h", "http://example.org/"}, "--delay must be from 0 to 1h0m0s"},
		{"hour-long timeout", []string{"crawl", "--timeout", "1h", "http://example.org/"}, "--timeout must be more than 0 and at most 10m0s"},
		{"data is a file", []string{"crawl", "--data", file, "http://example.org/"}, "is a file"},
		{"status of unknown dir", []string{"status", "--data", filepath.Join(t.TempDir(), "none"), "http://example.org/"}, "no crawl"},
		{"search without query", []string{"search", "--data", t.TempDir()}, "give a query"},
		{"site without operation", []string{"site"}, "needs an operation"},
		{"unknown site operation", []string{"site", "remove", "x"}, "unknown site operation"},
		{"site without roots", []string{"site", "add", "--data", t.TempDir()}, "root URLs"},
		{"site with a bad root", []string{"site", "add", "--data", t.TempDir(), "not a url"}, "root URL"},
		{"site with negative max urls", []string{"site", "add", "--max-urls", "-1", "http://example.org/"}, "max_urls must be from 0"},
		{"site with a bad filter", []string{"site", "add", "--exclude", "(", "http://example.org/"}, "filter pattern"},
		{"site recrawl in seconds", []string{"site", "add", "--recrawl-period", "90s", "http://example.org/"}, "whole minutes"},
		{"unknown site", []string{"site", "set", "--data", t.TempDir(), "--priority", "2", "nosuch"}, "no site"},
		{"show unknown site", []string{"site", "show", "--data", t.TempDir(), "nosuch"}, "no crawl"},
		// enqueue refuses before it sends (the queue here takes nothing).
		{"enqueue an ftp URL", []string{"enqueue", "--queue-url", "http://127.0.0.1:1/q", "ftp://example.org/x"}, "invalid URL"},
		{"enqueue a host without a scheme", []string{"enqueue", "--queue-url", "http://127.0.0.1:1/q", "example.org"}, "did you mean https://example.org?"},
		{"enqueue a host name too long", []string{"enqueue", "--queue-url", "http://127.0.0.1:1/q", "http://" + strings.Repeat("a", 300) + ".example.org/"}, "more than the 253"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tt.want) {
				t.Errorf("stderr %q does not say %q", stderr, tt.want)
			}
			if strings.Contains(stderr, strings.Repeat("a", 200)) {
				t.Errorf("stderr %q: a long URL is not echoed whole", crawl.Truncate(stderr, 300))
			}
		})
	}
}

func TestCrawlStatusSearch(t *testing.T) {
	site, data := testSiteAndData(t)
	stdout, stderr, code := runCLI(t, "crawl", "--data", data, "--max-depth", "8", "--delay", "5ms", "--timeout", "2s", site.URL+"/")
	if code != 0 {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	for _, want := range []string{"crawled", "pages/s", "complete", "http-client-error", "out-of-scope"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}

	report := filepath.Join(t.TempDir(), "report.html")
	stdout, stderr, code = runCLI(t, "report", "--data", data, "--out", report)
	page, err := os.ReadFile(report)
	if code != 0 || !strings.Contains(stdout, "wrote "+report) || err != nil {
		t.Fatalf("report exit %d: %s %s (%v)", code, stdout, stderr, err)
	}
	host := strings.TrimPrefix(site.URL, "http://")
	for _, want := range []string{`<svg class="chart"`, "http-client-error", host, "Crawl report: " + data} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	stdout, stderr, code = runCLI(t, "status", "--data", data, site.URL+"/final.html")
	if code != 0 {
		t.Fatalf("status exit %d: %s", code, stderr)
	}
	var st crawl.URLStatus
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("status is not JSON: %v\n%s", err, stdout)
	}
	if st.Status != crawl.StatusComplete || st.Generation == nil || st.NRedirs == 0 || st.OrigURL == "" {
		t.Errorf("status of a redirect target: %+v", st)
	}

	stdout, stderr, code = runCLI(t, "search", "--data", data, "--json", "Unique", "text", "/team/alice.html")
	var hits []crawl.SearchHit
	if code != 0 || json.Unmarshal([]byte(stdout), &hits) != nil || len(hits) == 0 || hits[0].URL != site.URL+"/team/alice.html" {
		t.Errorf("search: exit %d, %s", code, stdout)
	}
	if strings.Contains(stderr, "not in the search index") {
		t.Errorf("a finished crawl left pages out of the index: %s", stderr)
	}
	stdout, stderr, _ = runCLI(t, "search", "--data", data, "zzzznothing")
	if !strings.Contains(stdout, "no results") {
		t.Errorf("search for nothing printed %q", stdout)
	}
	if strings.Contains(stderr, "words of the query") {
		t.Errorf("a one-word query is said to be cut: %s", stderr)
	}
	var long string
	for i := range crawl.MaxQueryTerms {
		long += fmt.Sprintf("junk%c ", 'a'+i) // distinct: a word written twice is searched once
	}
	long += "Unique"
	if _, stderr, _ = runCLI(t, "search", "--data", data, long); !strings.Contains(stderr, fmt.Sprintf("only the first %d words", crawl.MaxQueryTerms)) {
		t.Errorf("a query of %d words: stderr %q does not say it was cut", crawl.MaxQueryTerms+1, stderr)
	}
}

// TestSearchSaysWhatIsNotIndexed: a page summarized but not yet in the
// search index (a crawl running, or killed before it indexed) is not
// found by a search that cannot write, which says so; a search that can
// write (the library's) indexes it first.
func TestSearchSaysWhatIsNotIndexed(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	const u = "http://example.com/lamps"
	up := contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("lamps and lighthouses"), "Lamps"))
	if _, err := db.ApplySummary(ctx, up); err != nil {
		t.Fatal(err)
	}
	db.Close()
	stdout, stderr, code := runCLI(t, "search", "--data", data, "lighthouses")
	if code != 0 || !strings.Contains(stdout, "no results") || !strings.Contains(stderr, "1 pages summarized are not in the search index yet") {
		t.Errorf("search before indexing: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if db, err = sqlite.Open(ctx, filepath.Join(data, "crawl.db")); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if hits, err := db.Search(ctx, "lighthouses", 10); err != nil || len(hits) != 1 || hits[0].URL != u {
		t.Errorf("search that can index: %v, %v", hits, err)
	}
}

// TestRecrawlWithoutSeeds: `crawler crawl --recrawl` names no URL, yet
// the scope kept in the data directory (here a loopback seed) is still
// allowed through the address check.
func TestRecrawlWithoutSeeds(t *testing.T) {
	site, data := testSiteAndData(t)
	if _, stderr, code := runCLI(t, "crawl", "--data", data, "--delay", "1ms", "--max-depth", "1", site.URL+"/"); code != 0 {
		t.Fatalf("crawl: %s", stderr)
	}
	stdout, stderr, code := runCLI(t, "crawl", "--data", data, "--delay", "1ms", "--max-depth", "1", "--recrawl")
	if code != 0 {
		t.Fatalf("recrawl: %s", stderr)
	}
	if strings.Contains(stdout, "blocked-address") || strings.Contains(stdout, "robots-disallowed") || !strings.Contains(stdout, "complete") {
		t.Errorf("recrawl of a loopback seed without naming it:\n%s", stdout)
	}
}

// TestRunWithoutURLs: crawl without URLs continues what a run left due
// (--max-pages), in a data directory without sites, and says when there
// is nothing at all to crawl; crawler recrawl with nothing due is no
// mistake (cron runs it).
func TestRunWithoutURLs(t *testing.T) {
	site, data := testSiteAndData(t)
	args := []string{"--data", data, "--delay", "1ms"}
	stdout, stderr, code := runCLI(t, append(append([]string{"crawl"}, args...), "--max-pages", "2", site.URL+"/")...)
	if code != 0 || !strings.Contains(stdout, "URLs are still due") {
		t.Fatalf("crawl of 2 pages: exit %d, %s%s; want URLs left due", code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, append([]string{"crawl"}, args...)...)
	if code != 0 || strings.Contains(stdout, "crawled 0 URLs") || strings.Contains(stdout, "still due") {
		t.Fatalf("crawl without URLs: exit %d, %s%s; want the rest crawled", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, append([]string{"crawl"}, args...)...)
	if code != exitUsage || !strings.Contains(stderr, "nothing to crawl") {
		t.Errorf("crawl without URLs, nothing due: exit %d, %s; want a usage error saying there is nothing to crawl", code, stderr)
	}
	stdout, stderr, code = runCLI(t, append([]string{"recrawl"}, args...)...)
	if code != 0 || !strings.Contains(stdout, "crawled 0 URLs") {
		t.Errorf("recrawl, nothing due: exit %d, %s%s; want nothing crawled, exit 0", code, stdout, stderr)
	}
}

// TestRecrawlPeriodRemembered: a run given no --recrawl-period keeps to
// the period the data directory's pages were crawled under, for the
// pages it finds too (crawler recrawl from cron); --recrawl-period 0
// stops it.
func TestRecrawlPeriodRemembered(t *testing.T) {
	site, data := testSiteAndData(t)
	args := []string{"--data", data, "--delay", "1ms", "--max-depth", "2"}
	notDue := `SELECT count(*) FROM crawl_frontier f JOIN crawl_candidate c ON c.url_id=f.url_id
		WHERE c.last_crawl_time_unix_utc IS NOT NULL AND (f.state<>'due' OR f.recrawl_every<>3600)`
	if _, stderr, code := runCLI(t, append(append([]string{"crawl"}, args...), "--recrawl-period", "1h", "--max-pages", "2", site.URL+"/")...); code != 0 {
		t.Fatalf("first crawl: %s", stderr)
	}
	if _, stderr, code := runCLI(t, append([]string{"crawl"}, args...)...); code != 0 {
		t.Fatalf("crawl without URLs: %s", stderr)
	}
	crawled := countRows(t, data, `SELECT count(*) FROM crawl_candidate WHERE last_crawl_time_unix_utc IS NOT NULL`)
	if n := countRows(t, data, notDue); crawled <= 2 || n != 0 {
		t.Errorf("%d of the %d pages crawled are not due again an hour on; want every one, those found by the run given no period too", n, crawled)
	}
	if _, stderr, code := runCLI(t, append(append([]string{"crawl"}, args...), "--recrawl", "--recrawl-period", "0")...); code != 0 {
		t.Fatalf("recrawl with period 0: %s", stderr)
	}
	if n := countRows(t, data, `SELECT count(*) FROM crawl_frontier WHERE state='due'`); n != 0 {
		t.Errorf("%d pages due after a recrawl with --recrawl-period 0, want none", n)
	}
}

// TestRecrawlPeriodZeroStops: a run given --recrawl-period 0 stops the
// recrawls an earlier period scheduled, though it crawls nothing; then
// nothing is left to crawl.
func TestRecrawlPeriodZeroStops(t *testing.T) {
	site, data := testSiteAndData(t)
	args := []string{"crawl", "--data", data, "--delay", "1ms", "--max-depth", "1"}
	if _, stderr, code := runCLI(t, append(args, "--recrawl-period", "1h", site.URL+"/")...); code != 0 {
		t.Fatalf("first crawl: %s", stderr)
	}
	due := `SELECT count(*) FROM crawl_frontier WHERE state='due'`
	n := countRows(t, data, due)
	if n == 0 {
		t.Fatal("no page due again after a crawl with --recrawl-period 1h")
	}
	requests := len(site.Requests())
	stdout, stderr, code := runCLI(t, append(args, "--recrawl-period", "0")...)
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("stopped the recrawls of %d pages", n)) {
		t.Errorf("--recrawl-period 0: exit %d, stdout %q, stderr %q; want the %d recrawls stopped", code, stdout, stderr, n)
	}
	if left := countRows(t, data, due); left != 0 || len(site.Requests()) != requests {
		t.Errorf("after --recrawl-period 0: %d pages due, %d requests sent; want none", left, len(site.Requests())-requests)
	}
	if stdout, stderr, code := runCLI(t, "crawl", "--data", data); code != exitUsage || !strings.Contains(stderr, "nothing to crawl") {
		t.Errorf("a crawl after the recrawls stopped: exit %d, %q %q; want nothing to crawl", code, stdout, stderr)
	}
}

// TestFiltersOfALaterRun: a run's --exclude keeps URLs an earlier run
// admitted from being fetched (a crawler trap stopped), and a larger
// --max-depth admits the links a smaller one left, without the pages
// that link to them being parsed again.
func TestFiltersOfALaterRun(t *testing.T) {
	site, data := testSiteAndData(t)
	args := []string{"crawl", "--data", data, "--delay", "1ms"}
	if _, stderr, code := runCLI(t, append(args, "--max-depth", "1", "--max-pages", "2", site.URL+"/")...); code != 0 {
		t.Fatalf("first crawl: %s", stderr)
	}
	docs := `SELECT count(*) FROM crawl_log l JOIN url u ON u.url_id=l.url_id WHERE u.url LIKE '%/docs/%'`
	before := countRows(t, data, docs)
	if _, stderr, code := runCLI(t, append(args, "--max-depth", "1", "--exclude", "/docs/")...); code != 0 {
		t.Fatalf("crawl with --exclude: %s", stderr)
	}
	if n := countRows(t, data, docs); n != before {
		t.Errorf("%d crawls of /docs/ pages after a run given --exclude /docs/, want the %d before it", n, before)
	}
	tooDeep := `SELECT count(*) FROM crawl_candidate WHERE last_crawl_exit_code=` + strconv.Itoa(int(crawl.ExitTooDeep))
	if countRows(t, data, tooDeep) == 0 {
		t.Fatal("no URL too deep at --max-depth 1: the site is too shallow for this test")
	}
	if _, stderr, code := runCLI(t, append(args, "--max-depth", "8")...); code != 0 {
		t.Fatalf("crawl with a larger --max-depth: %s", stderr)
	}
	if n := countRows(t, data, tooDeep); n != 0 {
		t.Errorf("%d URLs still too deep after a run at --max-depth 8", n)
	}
}

// TestKillAndResume kills a crawl with SIGKILL several times and runs it
// to the end, then compares it with an uninterrupted crawl: the same
// URLs, each crawled once.
func TestKillAndResume(t *testing.T) {
	args := func(data, url string) []string {
		return []string{"crawl", "--data", data, "--max-depth", "8", "--delay", "40ms", "--timeout", "2s", "--quiet", url + "/"}
	}

	ref := testsite.New()
	defer ref.Close()
	ref.SetHang(0)
	refData := t.TempDir()
	if out, err := crawlerCmd(args(refData, ref.URL)...).CombinedOutput(); err != nil {
		t.Fatalf("reference crawl: %v\n%s", err, out)
	}

	site, data := testSiteAndData(t)
	kills := 0
	for _, after := range []time.Duration{700 * time.Millisecond, 500 * time.Millisecond, 900 * time.Millisecond} {
		cmd := crawlerCmd(args(data, site.URL)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			continue // finished before the kill
		case <-time.After(after):
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		kills++
	}
	if kills == 0 {
		t.Fatal("the crawl always finished before it could be killed")
	}
	if out, err := crawlerCmd(args(data, site.URL)...).CombinedOutput(); err != nil {
		t.Fatalf("resumed crawl: %v\n%s", err, out)
	}

	if got, want := crawledPaths(t, data, site.URL), crawledPaths(t, refData, ref.URL); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed crawl logged\n%s\nuninterrupted crawl logged\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A page in flight at a SIGKILL never reached the database, so it is
	// requested again on resume: the one request in flight (one host),
	// and the pages fetched and not yet recorded, which the fetch workers
	// hold (twice --concurrency, 4 by default: README). On a quiet
	// machine that is about one a kill; under load (the race detector, and
	// other work beside) the writer falls behind and it is more. Nothing
	// else is requested twice.
	twice := 0
	for p, n := range site.Counts() {
		if p == "/robots.txt" {
			// The robots.txt cache lives in the process: each run fetches it once.
			if n > kills+1 {
				t.Errorf("robots.txt requested %d times in %d runs", n, kills+1)
			}
			continue
		}
		if n > 1 {
			twice += n - 1
			t.Logf("%s requested %d times", p, n)
		}
	}
	if twice > kills*2*4 {
		t.Errorf("%d repeated requests after %d kills; at most the fetch workers' pages (8) per kill are expected", twice, kills)
	}
	if got, want := len(site.Counts()), len(ref.Counts()); got != want {
		t.Errorf("resumed crawl requested %d distinct paths, uninterrupted %d", got, want)
	}
	// What a killed run had parsed or summarized but not finished (links
	// admitted, summaries, the search index) was finished on resume.
	for _, c := range []struct{ name, query string }{
		{"crawls without a summary", `SELECT count(*) FROM crawl_log l LEFT JOIN crawl_summary s ON s.crawl_uuid=l.crawl_uuid
			WHERE s.crawl_summary_id IS NULL`},
		{"text piles not indexed", `SELECT (SELECT count(*) FROM text_pile) - (SELECT count(*) FROM full_text_entity_index)`},
		{"pending index rows", `SELECT count(*) FROM text_pile_unindexed`},
		{"messages left", `SELECT count(*) FROM queue_message`},
	} {
		if n := countRows(t, data, c.query); n != 0 {
			t.Errorf("%s after the resumed crawl: %d", c.name, n)
		}
	}
	if got, want := countRows(t, data, `SELECT count(*) FROM crawl_frontier`), countRows(t, refData, `SELECT count(*) FROM crawl_frontier`); got != want {
		t.Errorf("resumed crawl knows %d URLs, uninterrupted %d", got, want)
	}
}

// TestTermAndResume: SIGTERM ends a crawl within a few seconds, even with
// a request hanging at the server (/hang answers after 30 s, the timeout
// is 60 s), says how to continue, and the next run finishes the crawl as
// if nothing had happened.
func TestTermAndResume(t *testing.T) {
	args := func(data, url, timeout string) []string {
		return []string{"crawl", "--data", data, "--max-depth", "8", "--delay", "40ms", "--timeout", timeout, "--quiet", url + "/"}
	}
	ref := testsite.New()
	defer ref.Close()
	ref.SetHang(0)
	refData := t.TempDir()
	if out, err := crawlerCmd(args(refData, ref.URL, "2s")...).CombinedOutput(); err != nil {
		t.Fatalf("reference crawl: %v\n%s", err, out)
	}

	site := testsite.New() // /hang hangs
	defer site.Close()
	data := t.TempDir()
	cmd := crawlerCmd(args(data, site.URL, "60s")...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	time.Sleep(1500 * time.Millisecond)
	sent := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		took := time.Since(sent)
		t.Logf("ended %v after SIGTERM, /hang requested %d times", took, site.Counts()["/hang"])
		if took > 5*time.Second {
			t.Errorf("the crawl took %v to end after SIGTERM", took)
		}
		if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
			t.Errorf("interrupted crawl: %v, exit status %d (want 143, 128 and SIGTERM's number)\n%s", err, code, stderr.String())
		}
		if !strings.Contains(stderr.String(), "interrupted; run the same command again to continue") {
			t.Errorf("interrupted crawl said %q", stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the crawl did not end within 20 s of SIGTERM")
	}

	site.SetHang(0)
	if out, err := crawlerCmd(args(data, site.URL, "2s")...).CombinedOutput(); err != nil {
		t.Fatalf("resumed crawl: %v\n%s", err, out)
	}
	if got, want := crawledPaths(t, data, site.URL), crawledPaths(t, refData, ref.URL); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed crawl logged\n%s\nuninterrupted crawl logged\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := countRows(t, data, `SELECT (SELECT count(*) FROM text_pile) - (SELECT count(*) FROM full_text_entity_index)`); n != 0 {
		t.Errorf("%d text piles not indexed after the resumed crawl", n)
	}
}

func countRows(t *testing.T, data, query string) int {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// crawledPaths returns every crawl_log URL (site prefix removed), sorted,
// with one entry per crawl, so a URL crawled twice shows twice.
func crawledPaths(t *testing.T, data, prefix string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(data, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT u.url FROM crawl_log l JOIN url u ON u.url_id=l.url_id ORDER BY u.url`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		rows.Scan(&u)
		out = append(out, strings.TrimPrefix(u, prefix))
	}
	return out
}

// TestDamagedStore: a data directory whose database is damaged in the
// middle is refused by every command with exit 2 and advice, and the
// file is not written to.
func TestDamagedStore(t *testing.T) {
	site, data := testSiteAndData(t)
	if _, stderr, code := runCLI(t, "crawl", "--data", data, "--delay", "0", "--timeout", "2s", site.URL+"/"); code != 0 {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	path := filepath.Join(data, "crawl.db")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 16*4096 {
		t.Fatalf("crawl.db is only %d bytes", len(b))
	}
	mid := len(b) / 4096 / 2 * 4096
	for i := mid; i < mid+4096; i++ {
		b[i] = 0xA5
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"crawl", "--data", data, "--delay", "0", site.URL + "/"},
		{"crawl", "--data", data, "--recrawl"},
	} {
		_, stderr, code := runCLI(t, args...)
		if code != exitUsage || !strings.Contains(stderr, "damaged") || !strings.Contains(stderr, "restore crawl.db") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and advice", args, code, stderr, exitUsage)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, b) {
		t.Error("the damaged crawl.db was written to")
	}
}

// TestHelp: every subcommand's -h starts with its usage line and lists
// its flags with two dashes, each with a text; the hidden flag is left
// out, and no flag borrows another command's wording.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{
		{"crawl"}, {"recrawl"}, {"status"}, {"search"}, {"export"}, {"report"}, {"enqueue"}, {"wait"}, {"demo"},
		{"site", "add"}, {"site", "set"}, {"site", "show"}, {"site", "list"}, {"site", "disable"},
	} {
		name := strings.Join(args, " ")
		t.Run(name, func(t *testing.T) {
			_, stderr, _ := runCLI(t, append(args, "-h")...)
			if !strings.HasPrefix(stderr, "usage: crawler "+name) {
				t.Errorf("help does not start with its usage line:\n%s", stderr)
			}
			lines := strings.Split(stderr, "\n")
			flags := 0
			for i, l := range lines {
				if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") {
					t.Errorf("flag written with one dash: %q", l)
				}
				if strings.HasPrefix(l, "  --") {
					flags++
					if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) == "" {
						t.Errorf("flag %q has no text", l)
					}
				}
			}
			if flags == 0 && name != "site disable" {
				t.Error("no flags listed")
			}
			if strings.Contains(stderr, cpuProfileFlag) {
				t.Error("the hidden flag is shown")
			}
			if name == "enqueue" && strings.Contains(stderr, "instead of a data directory") {
				t.Errorf("enqueue's --stack is described as a reader's:\n%s", stderr)
			}
		})
	}
}

// TestHitTitles: a hit without a title (a plain text file, a page
// without <title>) is listed by its file name.
func TestHitTitles(t *testing.T) {
	tests := []struct{ url, title, want string }{
		{"http://example.com/docs/lamps.html", "Lamp manual", "1. Lamp manual\n"},
		{"http://example.com/files/logbook-template.txt", "", "1. logbook-template.txt\n"},
		{"http://example.com/", "", "1. (no title)\n"},
		{"http://example.com", "", "1. (no title)\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := printHits(&b, "q", []crawl.SearchHit{{URL: tt.url, Title: tt.title}}, false); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), tt.want) {
			t.Errorf("%s with title %q: %q, want it to start %q", tt.url, tt.title, b.String(), tt.want)
		}
	}
}

// TestSeedLeavingScopeIsNamed: a seed that redirects to another host
// (http://example.com/ to https://www.example.com/) ends the crawl at
// once; the summary says so, and names the URL to crawl instead.
func TestSeedLeavingScopeIsNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, port, _ := strings.Cut(r.Host, ":"); host == "127.0.0.1" {
			http.Redirect(w, r, "http://localhost:"+port+"/home", http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "<p>home</p>")
	}))
	defer srv.Close()
	stdout, stderr, code := runCLI(t, "crawl", "--data", t.TempDir(), "--delay", "0", "--allow-private", "--quiet", srv.URL+"/")
	want := "note: " + srv.URL + "/ redirects to " + strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/home, outside the crawl's scope"
	if code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d, stdout %q (stderr %q); want the note %q", code, stdout, stderr, want)
	}
	// A seed that stays in scope gets no note.
	stdout, _, _ = runCLI(t, "crawl", "--data", t.TempDir(), "--delay", "0", "--allow-private", "--quiet", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/")
	if strings.Contains(stdout, "note:") {
		t.Errorf("a seed in scope: %q", stdout)
	}
}

// TestSignalledBeforeTheCrawl: a crawl stopped by a signal before it
// has begun (here, before it opens its data directory) exits with the
// signal's status and says how to continue, as a crawl stopped midway
// does.
func TestSignalledBeforeTheCrawl(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalled{syscall.SIGTERM})
	var o, e bytes.Buffer
	code := run(ctx, []string{"crawl", "--data", t.TempDir(), "--allow-private", "http://127.0.0.1:1/"}, &o, &e)
	if code != 143 || !strings.Contains(e.String(), "run the same command again to continue") {
		t.Errorf("exit %d, stderr %q; want 143 and how to continue", code, e.String())
	}
}
