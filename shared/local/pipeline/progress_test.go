package pipeline

import (
	"sync"
	"testing"

	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

// TestProgressReports: a run's reports count its crawls, its failed
// crawls by outcome and what is left of the frontier; the last one
// agrees with the result, and --max-pages bounds it.
func TestProgressReports(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(0)
	cfg := testConfig(site.URL + "/")
	var mu sync.Mutex
	var reports []Progress
	cfg.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, p)
	}
	cfg.MaxPages = 12
	res := crawlSite(t, t.TempDir(), cfg)

	last := reports[len(reports)-1]
	if last.Crawled != res.Crawled || last.Bytes != res.Bytes || last.MaxPages != 12 {
		t.Errorf("last report %+v, result crawled %d bytes %d", last, res.Crawled, res.Bytes)
	}
	failed := 0
	for c, n := range res.Outcomes {
		if c.Failed() {
			failed += n
			if last.Failed[c.String()] != n {
				t.Errorf("last report counts %d %s, the result %d", last.Failed[c.String()], c, n)
			}
		}
	}
	total := 0
	for _, n := range last.Failed {
		total += n
	}
	if total != failed {
		t.Errorf("last report counts %d failed crawls, the result %d: %v", total, failed, last.Failed)
	}
	sawFrontier := false
	for _, p := range reports {
		sawFrontier = sawFrontier || p.Frontier > 0
		for _, h := range p.Hosts {
			if want := site.URL[len("http://"):]; h != want {
				t.Errorf("report names host %q, want %q", h, want)
			}
		}
	}
	if !sawFrontier || last.Frontier == 0 {
		t.Errorf("the frontier was never counted (last report: %d), though the run stopped at --max-pages with URLs left", last.Frontier)
	}
}
