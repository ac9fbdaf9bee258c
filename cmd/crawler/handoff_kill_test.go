package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// linkedSite serves n pages with links to one another (page i links to
// the next page and to 30 others), each with text of its own, and no
// robots.txt: at --delay 0 a crawl of it keeps pages in their hand-off
// (parse, admission, summary) all the time.
type linkedSite struct {
	*httptest.Server
	mu     sync.Mutex
	counts map[string]int
}

func newLinkedSite(n int) *linkedSite {
	s := &linkedSite{counts: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[r.URL.Path]++
		s.mu.Unlock()
		var i int
		if r.URL.Path == "/" {
			i = 0
		} else if _, err := fmt.Sscanf(r.URL.Path, "/p%d.html", &i); err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><title>Page %d</title><h1>Page %d of the lighthouse log</h1>", i, i)
		for k := range 40 {
			fmt.Fprintf(&b, "<p>Entry %d of page %d: keeper %d lit lamp %d at dusk, fog horn %d sounded.</p>", k, i, i*7+k, i*11+k, i*13+k)
		}
		b.WriteString("<ul>")
		for _, j := range append([]int{(i + 1) % n}, linkedPages(i, n)...) {
			fmt.Fprintf(&b, `<li><a href="/p%d.html">page %d</a>`, j, j)
		}
		b.WriteString("</ul>")
		fmt.Fprint(w, b.String())
	}))
	return s
}

func linkedPages(i, n int) []int {
	var out []int
	for k := 1; k <= 30; k++ {
		out = append(out, (i*7+k*13)%n)
	}
	return out
}

func (s *linkedSite) Counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for p, n := range s.counts {
		out[p] = n
	}
	return out
}

// TestKillInHandOff: a crawl killed with SIGKILL while pages it recorded
// are still being handed on (parsed, their links admitted, summarized:
// behind the fetch workers, in goroutines of their own) loses none of
// them. Each kill comes once the crawl has logged some more pages, at
// --delay 0, so that hand-offs are under way; the test checks that at
// least one kill left recorded crawls with neither a summary nor a task
// queued for them, then that the resumed crawl finished them: every page
// logged once, summarized, its links stored, indexed, and requested again
// only if it was in flight at a kill (requested and not yet recorded: at
// most one page a fetch worker).
func TestKillInHandOff(t *testing.T) {
	const pages = 400
	site := newLinkedSite(pages)
	defer site.Close()
	data := t.TempDir()
	args := []string{"crawl", "--data", data, "--delay", "0", "--concurrency", "8", "--allow-private", "--quiet", site.URL + "/"}
	dbPath := filepath.Join(data, "crawl.db")
	logged := func() int {
		if _, err := os.Stat(dbPath); err != nil {
			return 0
		}
		db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
		if err != nil {
			return 0
		}
		defer db.Close()
		var n int
		db.QueryRow(`SELECT count(*) FROM crawl_log`).Scan(&n)
		return n
	}
	// A page whose response a fetch worker had read, but not yet
	// recorded, at a kill is requested again: at most one a worker, and
	// there are two fetch workers a request (pipeline.fetchWorkers).
	const workers = 2 * 8
	kills, inHandOff, unrecorded := 0, 0, 0
	for _, at := range []int{40, 120, 200, 280} {
		cmd := crawlerCmd(args...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		finished := false
	wait:
		for {
			select {
			case <-done:
				finished = true
				break wait
			case <-time.After(2 * time.Millisecond):
			}
			if logged() >= at {
				break
			}
		}
		if finished {
			break
		}
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		kills++
		// Recorded, not summarized, and no parse or summarize task queued:
		// the kill cut these pages' hand-offs short.
		n := countRows(t, data, `SELECT count(*) FROM crawl_log l
			LEFT JOIN crawl_summary s ON s.crawl_uuid=l.crawl_uuid
			WHERE s.crawl_summary_id IS NULL AND l.exit_code IS NOT NULL AND NOT EXISTS (SELECT 1 FROM queue_message q
				WHERE q.queue IN ('parse', 'summarize') AND json_extract(q.body, '$.crawl_uuid')=l.crawl_uuid)`)
		inHandOff += n
		u := 0
		logs := map[string]int{}
		for _, p := range crawledPaths(t, data, site.URL) {
			logs[p]++
		}
		for p, c := range site.Counts() {
			if p != "/robots.txt" { // fetched once a run, by design
				u += max(0, c-logs[p])
			}
		}
		t.Logf("kill %d at %d pages logged: %d cut short in their hand-off, %d requested and not recorded", kills, logged(), n, u-unrecorded)
		if u-unrecorded > workers {
			t.Errorf("kill %d: %d pages requested and not recorded, want at most one a fetch worker (%d)", kills, u-unrecorded, workers)
		}
		unrecorded = u
	}
	if kills == 0 || inHandOff == 0 {
		t.Fatalf("%d kills, %d hand-offs cut short: the test did not kill a crawl inside a hand-off", kills, inHandOff)
	}
	if out, err := crawlerCmd(args...).CombinedOutput(); err != nil {
		t.Fatalf("resumed crawl: %v\n%s", err, out)
	}

	want := []string{"/", "/sitemap.xml"} // the origin's sitemap (no robots.txt names one): a 404
	for i := range pages {
		want = append(want, fmt.Sprintf("/p%d.html", i))
	}
	got := crawledPaths(t, data, site.URL)
	if strings.Join(got, " ") != strings.Join(slices.Sorted(slices.Values(want)), " ") {
		t.Errorf("logged %d crawls, want each of the %d pages once: %v", len(got), len(want), got)
	}
	twice := 0
	for p, n := range site.Counts() {
		if p != "/robots.txt" {
			twice += n - 1
			if n > 1 {
				t.Logf("%s requested %d times", p, n)
			}
		}
	}
	if twice != unrecorded {
		t.Errorf("%d repeated requests after %d kills; want only the %d pages requested and not recorded at the kills", twice, kills, unrecorded)
	}
	for _, c := range []struct {
		name  string
		query string
		want  int
	}{
		{"crawls without a summary", `SELECT count(*) FROM crawl_log l LEFT JOIN crawl_summary s ON s.crawl_uuid=l.crawl_uuid
			WHERE s.crawl_summary_id IS NULL`, 0},
		{"pages with their links stored", `SELECT count(*) FROM generation_links`, pages + 1},
		{"links stored", `SELECT count(*) FROM link_summary`, 31 * (pages + 1)},
		{"text piles not indexed", `SELECT (SELECT count(*) FROM text_pile) - (SELECT count(*) FROM full_text_entity_index)`, 0},
		{"pending index rows", `SELECT count(*) FROM text_pile_unindexed`, 0},
		{"messages left", `SELECT count(*) FROM queue_message`, 0},
	} {
		if n := countRows(t, data, c.query); n != c.want {
			t.Errorf("%s after the resumed crawl: %d, want %d", c.name, n, c.want)
		}
	}
}
