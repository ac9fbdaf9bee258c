package pipeline

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// TestAdaptiveRecrawl: a page whose text changes at every visit is due
// again sooner than the recrawl period, one that never changes later,
// and one whose bytes change but not its text counts as unchanged.
func TestAdaptiveRecrawl(t *testing.T) {
	var visits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/changing">c</a> <a href="/static">s</a> <a href="/noisy">n</a> <a href="/etag">e</a>`)
		case "/changing":
			fmt.Fprintf(w, "<title>news</title><p>edition %d</p>", visits.Add(1))
		case "/static":
			fmt.Fprint(w, "<title>about</title><p>the same words</p>")
		case "/noisy":
			// Other bytes every time (a comment), the same text.
			fmt.Fprintf(w, "<title>noisy</title><!-- %d --><p>the same words again</p>", time.Now().UnixNano())
		case "/etag":
			// Answers a revisit 304: the fetch observes it (crawl.ObservedAtFetch).
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			fmt.Fprint(w, "<title>tagged</title><p>validated words</p>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := testConfig(srv.URL + "/")
	const period = time.Hour
	cfg.Fetch.RecrawlPeriod = period
	crawlSite(t, dir, cfg)
	// Three recrawls, made due now (as crawler crawl --recrawl does): three
	// observations of each page.
	cfg.Seeds, cfg.Recrawl = nil, true
	for i := 0; i < 3; i++ {
		crawlSite(t, dir, cfg)
	}
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	// Three observations each, once each: the changing page every time,
	// the others never (the noisy page's bytes change, its text does
	// not; the tagged page answers 304).
	rate := func(changed bool) (float64, int64) {
		m, n := 0.0, int64(0)
		for i := 0; i < 3; i++ {
			m, n = crawl.ObserveChange(m, n, changed)
		}
		return m, n
	}
	var dues = map[string]int64{}
	for path, changed := range map[string]bool{"/changing": true, "/static": false, "/noisy": false, "/etag": false} {
		c, err := dd.DB.GetCandidate(context.Background(), srv.URL+path)
		if err != nil {
			t.Fatal(err)
		}
		m, n := rate(changed)
		if c.MRate != m || c.MRateCounter != n || c.RecrawlEvery != int64(period/time.Second) {
			t.Errorf("%s: MRate %.3f over %d observations, period %ds; want %.3f over %d, %ds",
				path, c.MRate, c.MRateCounter, c.RecrawlEvery, m, n, int64(period/time.Second))
		}
		wantDue := crawl.NextVisit(*c.LastCrawlTime, period, m, n)
		if c.State != crawl.StateDue || c.DueAt != wantDue {
			t.Errorf("%s: %s at %d, want due at %d", path, c.State, c.DueAt, wantDue)
		}
		dues[path] = c.DueAt - *c.LastCrawlTime
	}
	if p := int64(period / time.Second); !(dues["/changing"] < p && dues["/static"] > p && dues["/noisy"] == dues["/static"] && dues["/etag"] == dues["/static"]) {
		t.Errorf("next visits after %v: want the changing page sooner than the period %ds, the others later", dues, p)
	}
}

// TestGonePageComesBack: a page that answers 404 or 410, or redirects,
// leaves search at that recrawl, and when it is put back as it was, the
// next recrawl asks for it without validators (a 304 to the old ETag
// would confirm content no longer open) and it is found again.
func TestGonePageComesBack(t *testing.T) {
	for _, away := range []int{http.StatusNotFound, http.StatusGone, http.StatusMovedPermanently} {
		t.Run(http.StatusText(away), func(t *testing.T) {
			var gone atomic.Bool
			var conditional atomic.Int64 // requests for the page with If-None-Match while it is back
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				switch r.URL.Path {
				case "/":
					fmt.Fprint(w, `<a href="/beacon">b</a>`)
				case "/beacon":
					switch {
					case gone.Load() && away == http.StatusMovedPermanently:
						http.Redirect(w, r, "/elsewhere", away)
					case gone.Load():
						w.WriteHeader(away)
					case r.Header.Get("If-None-Match") == `"b1"`:
						conditional.Add(1)
						w.WriteHeader(http.StatusNotModified)
					default:
						w.Header().Set("ETag", `"b1"`)
						fmt.Fprint(w, "<title>Beacon</title><p>the vanished beacon of the harbour</p>")
					}
				case "/elsewhere":
					fmt.Fprint(w, "<title>Elsewhere</title><p>nothing of note</p>")
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			dir := t.TempDir()
			cfg := testConfig(srv.URL + "/")
			cfg.Fetch.RecrawlPeriod = time.Hour
			found := func() bool {
				t.Helper()
				dd, err := OpenDataDir(context.Background(), dir)
				if err != nil {
					t.Fatal(err)
				}
				defer dd.Close()
				hits, err := dd.DB.Search(context.Background(), "beacon", 10)
				if err != nil {
					t.Fatal(err)
				}
				return len(hits) == 1 && hits[0].URL == srv.URL+"/beacon"
			}
			crawlSite(t, dir, cfg)
			if !found() {
				t.Fatal("the page is not in search after the first crawl")
			}
			cfg.Seeds, cfg.Recrawl = nil, true
			gone.Store(true)
			crawlSite(t, dir, cfg)
			if found() {
				t.Errorf("the page answered %d and is still in search", away)
			}
			gone.Store(false)
			crawlSite(t, dir, cfg)
			if !found() {
				t.Errorf("the page is back and not in search (conditional requests after the %d: %d)", away, conditional.Load())
			}
			if n := conditional.Load(); n != 0 {
				t.Errorf("%d conditional requests for the page after its %d, want 0", n, away)
			}
		})
	}
}

// TestDuplicatesRecrawledCountUnchanged: a copy found at the first crawl
// counts as a duplicate in that run's summary; recrawled and answered
// 304, it counts as unchanged, in the run's summary as in the report.
func TestDuplicatesRecrawledCountUnchanged(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		etag := `"` + r.URL.Path + `"`
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/a">a</a> <a href="/b">b</a>`)
		case "/a", "/b":
			fmt.Fprint(w, "<title>Copy</title><p>the same words on two pages, word for word</p>")
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	dir := t.TempDir()
	cfg := testConfig(srv.URL + "/")
	cfg.Fetch.RecrawlPeriod = time.Hour
	first := crawlSite(t, dir, cfg)
	if first.Outcomes[crawl.ExitDuplicate] != 1 || first.Outcomes[crawl.ExitComplete] != 2 {
		t.Errorf("first run's outcomes %v, want 2 complete, 1 duplicate", first.Outcomes)
	}
	cfg.Seeds, cfg.Recrawl = nil, true
	again := crawlSite(t, dir, cfg)
	if again.Outcomes[crawl.ExitUnchanged] != 3 || again.Outcomes[crawl.ExitDuplicate] != 0 {
		t.Errorf("recrawl's outcomes %v, want 3 unchanged", again.Outcomes)
	}
	dd, err := OpenDataDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	all, err := dd.DB.OutcomeCounts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if all[crawl.ExitDuplicate] != 1 || all[crawl.ExitUnchanged] != 3 || all[crawl.ExitComplete] != 2 {
		t.Errorf("all runs' outcomes %v, want 2 complete, 1 duplicate, 3 unchanged", all)
	}
}

// TestStoppedRecrawlContinues: a --recrawl run stopped before it is done
// (here by --max-pages, as by a signal) and run again as it was
// continues the pass: every page is requested once in the pass, not
// once more for each start. A pass that is done leaves the next
// --recrawl to begin another.
func TestStoppedRecrawlContinues(t *testing.T) {
	srv, count := pagesSite(t, func(string) bool { return false })
	each := func(want int) {
		t.Helper()
		hits := count()
		if len(hits) != 9 {
			t.Fatalf("%d pages requested, want 9: %v", len(hits), hits)
		}
		for p, n := range hits {
			if n != want {
				t.Errorf("%s requested %d times, want %d: %v", p, n, want, hits)
			}
		}
	}
	dir := t.TempDir()
	cfg := testConfig(srv.URL + "/")
	crawlSite(t, dir, cfg)
	each(1)

	cfg.Recrawl, cfg.MaxPages = true, 3
	crawlSite(t, dir, cfg) // stopped after three pages
	cfg.MaxPages = 0
	crawlSite(t, dir, cfg) // the same command, without the stop
	each(2)

	crawlSite(t, dir, cfg) // the pass is done: another begins
	each(3)
}

// TestRecrawlPassWaitsForWhatIsPutOff: a pass whose run ends with a URL
// put off (a long Retry-After) is not done: the same --recrawl run again
// crawls none of the pages the pass has crawled. A pass older than
// sqlite.RecrawlPassLife is begun again.
func TestRecrawlPassWaitsForWhatIsPutOff(t *testing.T) {
	// The recrawl's first request is answered "wait ten minutes": every
	// other URL of the host is then put off, whatever order they come in.
	var recrawling, answered atomic.Bool
	srv, count := pagesSite(t, func(string) bool { return recrawling.Load() && answered.CompareAndSwap(false, true) })
	dir := t.TempDir()
	cfg := testConfig(srv.URL + "/")
	crawlSite(t, dir, cfg)
	recrawling.Store(true)
	// Crawl times are seconds: the pass begins in a later one than the
	// crawl before it, as it would but in a test.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	cfg.Recrawl = true
	crawlSite(t, dir, cfg) // the host's URLs put off for ten minutes
	after := count()
	crawlSite(t, dir, cfg) // the same command: the pass goes on
	if again := count(); !maps.Equal(again, after) {
		t.Errorf("requests after the pass was continued %v, want none more than %v", again, after)
	}
	// A day later, a --recrawl begins a new pass.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := db.Exec(`UPDATE recrawl_pass SET started_unix_utc=started_unix_utc-?`, int64(sqlite.RecrawlPassLife/time.Second)+1); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d recrawl passes under way, want the one put off", n)
	}
	// Its ten minutes are over too (a run keeps them past itself).
	if _, err := db.Exec(`UPDATE host_back_off SET until_unix_ms=until_unix_ms-?`, int64(sqlite.RecrawlPassLife/time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// The host no longer asks to wait (else which of its URLs are put off
	// without a request depends on the order they come in).
	recrawling.Store(false)
	res := crawlSite(t, dir, cfg)
	again := count()
	for p, n := range after {
		if again[p] != n+1 {
			t.Errorf("a day later: %s requested %d times after %d; want once more, in a new pass", p, again[p], n)
		}
	}
	if res.RecrawlPassContinued != 0 {
		t.Errorf("a day later: the pass begun at %d was continued; want a new one", res.RecrawlPassContinued)
	}
}

// pagesSite serves / linking /p0 to /p7, and those pages, and counts
// the requests to each path (robots.txt and sitemap.xml are 404s, not
// counted); a path busy says is answered 429, Retry-After 600.
func pagesSite(t *testing.T, busy func(path string) bool) (*httptest.Server, func() map[string]int) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" || r.URL.Path == "/sitemap.xml" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if busy(r.URL.Path) {
			w.Header().Set("Retry-After", "600")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			for i := range 8 {
				fmt.Fprintf(w, `<a href="/p%d">%d</a> `, i, i)
			}
			return
		}
		fmt.Fprintf(w, "<title>%s</title><p>words of %s</p>", r.URL.Path, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(hits)
	}
}

// TestRetryAfterOutlivesTheRun: a host that answered "wait ten minutes"
// is sent nothing by the runs that follow until then, not even by a
// --recrawl that makes every URL due now, nor by `crawler recrawl`.
func TestRetryAfterOutlivesTheRun(t *testing.T) {
	srv, count := pagesSite(t, func(p string) bool { return p == "/p3" })
	dir := t.TempDir()
	cfg := testConfig(srv.URL + "/")
	res := crawlSite(t, dir, cfg)
	after := count()
	if after["/p3"] != 1 || res.Outcomes[crawl.ExitRateLimited] != 1 {
		t.Fatalf("the first run: requests %v, outcomes %v; want /p3 asked once and rate-limited", after, res.Outcomes)
	}
	cfg.Recrawl = true
	crawlSite(t, dir, cfg) // every URL due now: the host still asked to wait
	cfg.Recrawl, cfg.Seeds = false, nil
	crawlSite(t, dir, cfg) // what is due now, as `crawler recrawl` runs it
	if again := count(); !maps.Equal(again, after) {
		t.Errorf("requests after the host asked to wait %v, want none more than %v", again, after)
	}
}
