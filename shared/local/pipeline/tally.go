package pipeline

import (
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// tally is what the fetcher has recorded in this run, for the progress
// report: crawls and bytes, failed crawls by outcome, and the hosts
// crawled lately.
type tally struct {
	crawled, bytes atomic.Int64
	mu             sync.Mutex
	failed         map[crawl.ExitCode]int
	hosts          map[string]time.Time // host: when a crawl of it was last recorded
}

// currentFor is how long a host counts as being crawled after its last
// recorded crawl.
const currentFor = 3 * time.Second

// record counts one recorded crawl.
func (t *tally) record(cr crawl.Crawl, now time.Time) {
	t.crawled.Add(1)
	if cr.File != nil && cr.File.FileSize != nil {
		t.bytes.Add(*cr.File.FileSize)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := cr.Log.ExitCode; c.Failed() {
		if t.failed == nil {
			t.failed = map[crawl.ExitCode]int{}
		}
		t.failed[c]++
	}
	if u, err := url.Parse(cr.Log.URL); err == nil && u.Host != "" {
		if t.hosts == nil {
			t.hosts = map[string]time.Time{}
		}
		t.hosts[u.Host] = now
	}
}

// snapshot returns the failed crawls by outcome name and the hosts
// crawled within currentFor of now, the latest first (at most max).
func (t *tally) snapshot(now time.Time, max int) (failed map[string]int, hosts []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	failed = make(map[string]int, len(t.failed))
	for c, n := range t.failed {
		failed[c.String()] = n
	}
	for h, at := range t.hosts {
		if now.Sub(at) > currentFor {
			delete(t.hosts, h)
			continue
		}
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b string) int { return t.hosts[b].Compare(t.hosts[a]) })
	if len(hosts) > max {
		hosts = hosts[:max]
	}
	return failed, hosts
}

// progress is the report of the run so far, less what drive adds.
func (st *stages) progress(now time.Time, cfg Config, frontier int) Progress {
	failed, hosts := st.snapshot(now, 3)
	return Progress{Crawled: st.crawled.Load(), Bytes: st.bytes.Load(), Frontier: frontier, Failed: failed, Hosts: hosts, MaxPages: cfg.MaxPages}
}
