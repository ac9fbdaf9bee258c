package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestSiteCommands runs the site commands as a user would: add a site
// with settings, read it back, disable it (a crawl then fetches
// nothing), enable it (a crawl fetches its pages, within its filters).
func TestSiteCommands(t *testing.T) {
	site, data := testSiteAndData(t)
	crawlArgs := []string{"crawl", "--data", data, "--delay", "1ms", "--timeout", "2s"}

	stdout, stderr, code := runCLI(t, "site", "add", "--data", data, "--id", "test", "--priority", "4", "--max-errors", "50",
		"--exclude", `/news/`, "--delay", "2ms", site.URL+"/")
	if code != 0 || !strings.Contains(stdout, "site test: added") {
		t.Fatalf("site add: exit %d, %q %q", code, stdout, stderr)
	}
	if _, stderr, code := runCLI(t, "site", "add", "--data", data, "--id", "test", site.URL+"/other/"); code != exitUsage || !strings.Contains(stderr, "exists") {
		t.Errorf("adding a site twice: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runCLI(t, "site", "disable", "--data", data, "test"); code != 0 {
		t.Fatalf("site disable: %s", stderr)
	}
	if _, stderr, code := runCLI(t, crawlArgs...); code != 0 || len(site.Requests()) != 0 {
		t.Fatalf("a crawl of a disabled site: exit %d, %d requests (%s)", code, len(site.Requests()), stderr)
	}
	if stdout, stderr, code := runCLI(t, append(crawlArgs, "--recrawl")...); code != 0 || !strings.Contains(stdout, "note: --recrawl left the URLs of site test (disabled)") {
		t.Errorf("--recrawl with the site disabled: exit %d, stdout %q, stderr %q; want a note naming the site", code, stdout, stderr)
	}
	if _, stderr, code := runCLI(t, "site", "enable", "--data", data, "test"); code != 0 {
		t.Fatalf("site enable: %s", stderr)
	}
	if _, stderr, code := runCLI(t, crawlArgs...); code != 0 {
		t.Fatalf("crawl: %s", stderr)
	}
	counts := site.Counts()
	if counts["/about.html"] != 1 || counts["/news/2024.html"] != 0 {
		t.Errorf("the enabled site's crawl: /about.html %d times, excluded /news/2024.html %d times, want 1 and 0",
			counts["/about.html"], counts["/news/2024.html"])
	}

	// The filter taken off: what it kept out is crawled by the next run,
	// though the pages that link to it are not fetched again.
	if _, stderr, code := runCLI(t, "site", "set", "--data", data, "--no-filters", "test"); code != 0 {
		t.Fatalf("site set --no-filters: %s", stderr)
	}
	if _, stderr, code := runCLI(t, crawlArgs...); code != 0 {
		t.Fatalf("crawl after the filter was taken off: %s", stderr)
	}
	if counts := site.Counts(); counts["/news/2024.html"] != 1 || counts["/about.html"] != 1 {
		t.Errorf("after the filter was taken off: /news/2024.html %d times, /about.html %d times, want 1 and 1",
			counts["/news/2024.html"], counts["/about.html"])
	}
	if _, stderr, code := runCLI(t, "site", "set", "--data", data, "--exclude", `/news/`, "--exclude-media", `\.jpg$`, "test"); code != 0 {
		t.Fatalf("site set --exclude --exclude-media: %s", stderr)
	}

	stdout, stderr, code = runCLI(t, "site", "show", "--data", data, "--json", "test")
	if code != 0 {
		t.Fatalf("site show: %s", stderr)
	}
	var v siteView
	if err := json.Unmarshal([]byte(stdout), &v); err != nil {
		t.Fatalf("site show --json: %v\n%s", err, stdout)
	}
	if v.ID != "test" || v.State != "active" || v.Priority != 4 || v.MaxErrors != 50 || v.RequestDelayMS != 2 ||
		len(v.Filters) != 2 || v.Resources == 0 || v.CollectedURLs == 0 || v.Created == "" {
		t.Errorf("site show: %+v", v)
	}
	if len(v.Filters) == 2 && (v.Filters[0] != crawl.SiteFilter{Pattern: `/news/`, Type: crawl.FilterExclude, Mode: crawl.FilterURLs} ||
		v.Filters[1] != crawl.SiteFilter{Pattern: `\.jpg$`, Type: crawl.FilterExclude, Mode: crawl.FilterMedia}) {
		t.Errorf("site filters: %+v, want /news/ (urls) and \\.jpg$ (media), both exclude", v.Filters)
	}
	stdout, _, code = runCLI(t, "site", "list", "--data", data)
	if code != 0 || !strings.Contains(stdout, "test") || !strings.Contains(stdout, site.URL+"/") {
		t.Errorf("site list: exit %d\n%s", code, stdout)
	}
	if _, stderr, code = runCLI(t, "site", "set", "--data", data, "--no-filters", "--state", "suspended", "test"); code != 0 {
		t.Fatalf("site set: %s", stderr)
	}
	stdout, _, _ = runCLI(t, "site", "show", "--data", data, "test")
	if !strings.Contains(stdout, "suspended") || strings.Contains(stdout, "filter") {
		t.Errorf("site show after set --no-filters --state suspended:\n%s", stdout)
	}
	// Every setting shows, the recrawl's next date with its period.
	if _, stderr, code = runCLI(t, "site", "set", "--data", data, "--state", "active", "--recrawl-period", "2h", "test"); code != 0 {
		t.Fatalf("site set --recrawl-period: %s", stderr)
	}
	stdout, _, _ = runCLI(t, "site", "show", "--data", data, "test")
	for _, want := range []string{"request delay         2ms", "http timeout", "max resource size", "max urls from page",
		"recrawl period        2h0m0s", "next recrawl", "recrawls started      0"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("site show does not say %q:\n%s", want, stdout)
		}
	}
}

// TestSiteFiltersOfALaterRun: a filter given to a site (crawler site
// set --exclude) stops the site's URLs that an earlier run admitted and
// did not crawl yet, and they are no longer counted as its collected
// URLs; the filter taken off, they are crawled. A one-off run's own
// filters leave the site's URLs to the site.
func TestSiteFiltersOfALaterRun(t *testing.T) {
	site, data := testSiteAndData(t)
	args := []string{"crawl", "--data", data, "--delay", "1ms"}
	if _, stderr, code := runCLI(t, "site", "add", "--data", data, "--id", "test", site.URL+"/"); code != 0 {
		t.Fatalf("site add: %s", stderr)
	}
	if _, stderr, code := runCLI(t, append(args, "--max-depth", "1", "--max-pages", "2")...); code != 0 {
		t.Fatalf("first crawl: %s", stderr)
	}
	docs := `SELECT count(*) FROM crawl_log l JOIN url u ON u.url_id=l.url_id WHERE u.url LIKE '%/docs/%'`
	dueDocs := `SELECT count(*) FROM crawl_frontier f JOIN url u ON u.url_id=f.url_id WHERE u.url LIKE '%/docs/%' AND f.state='due'`
	before, due := countRows(t, data, docs), countRows(t, data, dueDocs)
	if due == 0 {
		t.Fatal("no /docs/ URL left due: the site is too small for this test")
	}
	counted := func(when string) {
		t.Helper()
		collected := countRows(t, data, `SELECT CollectedURLs FROM sites WHERE Id='test'`)
		notFiltered := countRows(t, data, `SELECT count(*) FROM crawl_frontier WHERE site_id='test' AND state<>'filtered'`)
		if collected != notFiltered {
			t.Errorf("%s: the site counts %d URLs collected, and has %d not filtered", when, collected, notFiltered)
		}
	}
	// A one-off run that asks for the root only: the site's URLs stay due.
	if _, stderr, code := runCLI(t, append(args, "--max-depth", "0", "--max-pages", "1")...); code != 0 {
		t.Fatalf("a run at --max-depth 0: %s", stderr)
	}
	if n := countRows(t, data, dueDocs); n != due {
		t.Errorf("%d /docs/ URLs due after a run at --max-depth 0, want the %d before it", n, due)
	}
	if _, stderr, code := runCLI(t, "site", "set", "--data", data, "--exclude", "/docs/", "test"); code != 0 {
		t.Fatalf("site set --exclude: %s", stderr)
	}
	if _, stderr, code := runCLI(t, append(args, "--max-depth", "1")...); code != 0 {
		t.Fatalf("crawl after the filter: %s", stderr)
	}
	if n := countRows(t, data, docs); n != before {
		t.Errorf("%d crawls of /docs/ pages after the filter, want the %d before it", n, before)
	}
	counted("after the filter")
	if _, stderr, code := runCLI(t, "site", "set", "--data", data, "--no-filters", "test"); code != 0 {
		t.Fatalf("site set --no-filters: %s", stderr)
	}
	if _, stderr, code := runCLI(t, append(args, "--max-depth", "1")...); code != 0 {
		t.Fatalf("crawl after the filter was taken off: %s", stderr)
	}
	if n := countRows(t, data, docs); n <= before {
		t.Errorf("%d crawls of /docs/ pages after the filter was taken off, want more than %d", n, before)
	}
	counted("after the filter was taken off")
}

// TestSiteShowOfAStack: a stack's site shows the counters AWS does not
// keep (NewURLs, Contents) as not counted, not as zeros.
func TestSiteShowOfAStack(t *testing.T) {
	s := crawl.Site{ID: "docs", State: crawl.SiteActive, Roots: []string{"http://docs.example/"}, CollectedURLs: 6, Resources: 4}
	var local strings.Builder
	printSite(&local, viewSite(s, false))
	v := viewSite(s, true)
	var onStack strings.Builder
	printSite(&onStack, v)
	for _, tt := range []struct {
		out  string
		want []string
	}{
		{local.String(), []string{"6 / 0", "4 / 0"}},
		{onStack.String(), []string{"6 / not counted on AWS", "4 / not counted on AWS"}},
	} {
		for _, w := range tt.want {
			if !strings.Contains(tt.out, w) {
				t.Errorf("site show:\n%s\nwant %q", tt.out, w)
			}
		}
	}
	b, _ := json.Marshal(v)
	if strings.Contains(string(b), "new_urls") || strings.Contains(string(b), `"contents"`) {
		t.Errorf("site show --json of a stack: %s; want no new_urls or contents", b)
	}
}

// TestSiteLimitRaised: a site's URLs recorded too-many-urls are admitted
// by the next run after its --max-urls is raised, as far as the new
// limit leaves room, though the pages that link to them are not fetched
// again.
func TestSiteLimitRaised(t *testing.T) {
	site, data := testSiteAndData(t)
	args := []string{"crawl", "--data", data, "--delay", "1ms"}
	if _, stderr, code := runCLI(t, "site", "add", "--data", data, "--id", "test", "--max-urls", "5", site.URL+"/"); code != 0 {
		t.Fatalf("site add: %s", stderr)
	}
	if _, stderr, code := runCLI(t, args...); code != 0 {
		t.Fatalf("first crawl: %s", stderr)
	}
	collected := `SELECT CollectedURLs FROM sites WHERE Id='test'`
	tooMany := `SELECT count(*) FROM crawl_candidate c JOIN crawl_frontier f ON f.url_id=c.url_id WHERE f.site_id='test' AND c.last_crawl_exit_code=` +
		strconv.Itoa(int(crawl.ExitTooManyURLs))
	if n, left := countRows(t, data, collected), countRows(t, data, tooMany); n != 5 || left < 5 {
		t.Fatalf("after the first crawl: %d URLs collected, %d too many; want 5, and at least 5 left out", n, left)
	}
	if _, stderr, code := runCLI(t, "site", "set", "--data", data, "--max-urls", "10", "test"); code != 0 {
		t.Fatalf("site set --max-urls: %s", stderr)
	}
	if _, stderr, code := runCLI(t, args...); code != 0 {
		t.Fatalf("crawl after the limit was raised: %s", stderr)
	}
	if n := countRows(t, data, collected); n != 10 {
		t.Errorf("after the limit was raised to 10: %d URLs collected", n)
	}
	notFiltered := countRows(t, data, `SELECT count(*) FROM crawl_frontier WHERE site_id='test' AND state<>'filtered'`)
	if notFiltered != 10 {
		t.Errorf("the site has %d URLs not filtered, want the 10 collected", notFiltered)
	}
}

// TestSiteFilterChangeKeepsPageCap: a change to a site's filters judges
// again what they excluded, not the links left out past a page's
// max_urls_from_page (recorded too-many-urls as well).
func TestSiteFilterChangeKeepsPageCap(t *testing.T) {
	site, data := testSiteAndData(t)
	if _, stderr, code := runCLI(t, "site", "add", "--data", data, "--id", "test", "--max-urls-from-page", "2", site.URL+"/"); code != 0 {
		t.Fatalf("site add: %s", stderr)
	}
	if _, stderr, code := runCLI(t, "crawl", "--data", data, "--delay", "1ms"); code != 0 {
		t.Fatalf("first crawl: %s", stderr)
	}
	crawls := `SELECT count(*) FROM crawl_log`
	before := countRows(t, data, crawls)
	if _, stderr, code := runCLI(t, "site", "set", "--data", data, "--exclude", "/nothing-here/", "test"); code != 0 {
		t.Fatalf("site set --exclude: %s", stderr)
	}
	if _, stderr, code := runCLI(t, "crawl", "--data", data, "--delay", "1ms"); code != 0 {
		t.Fatalf("crawl after the filter: %s", stderr)
	}
	if n := countRows(t, data, crawls); n != before {
		t.Errorf("%d crawls after a filter that excludes nothing, want the %d before it", n, before)
	}
}
