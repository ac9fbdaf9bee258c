// Sweeps: the crawler alone, over a range of one setting, one table.
//
//   - -scale 10000,30000,100000 crawls bench/serve's synthetic site at
//     each size (make bench-scale). If the crawl's time grows linearly
//     with the site, the table's "s per 1,000 pages" column is flat.
//     "last fetch at" is when the crawler sent its last request: the
//     time after it went to the links and pages queued behind.
//   - -levels 1,2,4,8,32 crawls the -root tree (or the -synth site) at
//     each --concurrency (make bench-concurrency): what more requests
//     in flight (and twice as many fetch workers) buy, with one request
//     at a time per host.
//
// Each run is a fresh server and a fresh data directory, as for the
// tools' table; the sweep goes round -runs times (every value once,
// then again) and the tables show medians. A run killed at -timeout is
// kept, marked, with what it had done by then; in -scale the larger
// sites are then skipped, as they would be killed too.
package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// sweep runs the crawler -runs times at each of values, set into the
// configuration by set. With growing, once a run is killed at -timeout
// its value and the larger ones are not run again.
func (c config) sweep(ctx context.Context, values []int, set func(config, int) config, growing bool) ([]Run, error) {
	var runs []Run
	limit := math.MaxInt
	for i := 1; i <= c.runs; i++ {
		for _, v := range values {
			if v >= limit {
				continue
			}
			r, err := set(c, v).one(ctx, "crawler", i, "")
			if err != nil {
				return runs, fmt.Errorf("crawler at %d, run %d: %w", v, i, err)
			}
			runs = append(runs, r)
			if r.TimedOut && growing {
				limit = v
				fmt.Fprintf(os.Stderr, "killed at -timeout at %d: skipping %d and up\n", v, v)
			}
		}
	}
	return runs, nil
}

// scaleTable is the medians of each site size's runs, and how the wall
// time grew from the smallest site to the largest one crawled to the end.
func scaleTable(sizes []int, runs []Run) string {
	var b strings.Builder
	b.WriteString("| pages on the site | pages found (crawler / server) | wall s | last fetch at s | pages/s | s per 1,000 pages | CPU s | peak RSS MB | requests |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var done []int // sizes whose runs all finished
	killedAt := 0  // the size a run was killed at
	for _, n := range sizes {
		rs := filter(runs, func(r Run) bool { return r.SitePages == n })
		if len(rs) == 0 && killedAt > 0 {
			fmt.Fprintf(&b, "| %d | skipped: the crawl of %d pages was killed at -timeout | | | | | | | |\n", n, killedAt)
			continue
		}
		if len(rs) == 0 {
			fmt.Fprintf(&b, "| %d | not crawled: a run failed | | | | | | | |\n", n)
			continue
		}
		wall := fmt.Sprintf("%.1f", med(rs, func(r Run) float64 { return r.WallSec }))
		if len(filter(rs, func(r Run) bool { return r.TimedOut })) > 0 {
			wall = "killed at " + wall
			killedAt = n
		} else {
			done = append(done, n)
		}
		fmt.Fprintf(&b, "| %d | %.0f / %.0f | %s | %.0f | %.1f | %.2f | %.1f | %.0f | %.0f |\n", n,
			med(rs, func(r Run) float64 { return float64(r.ToolPages) }),
			med(rs, func(r Run) float64 { return float64(r.Server.HTMLPages) }),
			wall, med(rs, func(r Run) float64 { return r.LastFetchSec }),
			med(rs, pagesPerSec), med(rs, func(r Run) float64 { return r.WallSec })/float64(n)*1000,
			med(rs, func(r Run) float64 { return r.UserSec + r.SysSec }),
			med(rs, func(r Run) float64 { return float64(r.MaxRSSKB) / 1024 }),
			med(rs, func(r Run) float64 { return float64(r.Server.Requests) }))
	}
	if len(done) > 1 {
		lo, hi := done[0], done[len(done)-1]
		wallOf := func(n int) float64 {
			return med(filter(runs, func(r Run) bool { return r.SitePages == n }), func(r Run) float64 { return r.WallSec })
		}
		fmt.Fprintf(&b, "\nFrom %d to %d pages (%.1f×), the wall time grew %.1f× (linear: the same).\n",
			lo, hi, float64(hi)/float64(lo), wallOf(hi)/wallOf(lo))
	}
	return b.String()
}

// levelsTable is the medians of each concurrency level's runs.
func levelsTable(levels []int, runs []Run) string {
	var b strings.Builder
	b.WriteString("| concurrency | wall s | pages/s | CPU s | peak RSS MB | HTML pages (crawler / server) | requests in flight s |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range levels {
		rs := filter(runs, func(r Run) bool { return r.Conc == n })
		if len(rs) == 0 {
			fmt.Fprintf(&b, "| %d | not crawled: a run failed | | | | | |\n", n)
			continue
		}
		wall := fmt.Sprintf("%.2f", med(rs, func(r Run) float64 { return r.WallSec }))
		if len(filter(rs, func(r Run) bool { return r.TimedOut })) > 0 {
			wall = "killed at " + wall
		}
		fmt.Fprintf(&b, "| %d | %s | %.1f | %.2f | %.0f | %.0f / %.0f | %.2f |\n", n, wall,
			med(rs, pagesPerSec),
			med(rs, func(r Run) float64 { return r.UserSec + r.SysSec }),
			med(rs, func(r Run) float64 { return float64(r.MaxRSSKB) / 1024 }),
			med(rs, func(r Run) float64 { return float64(r.ToolPages) }),
			med(rs, func(r Run) float64 { return float64(r.Server.HTMLPages) }),
			med(rs, func(r Run) float64 { return r.InFlightSec }))
	}
	return b.String()
}

// pagesPerSec is the HTML pages the server answered over the wall time.
func pagesPerSec(r Run) float64 { return float64(r.Server.HTMLPages) / r.WallSec }

func filter(runs []Run, keep func(Run) bool) []Run {
	var out []Run
	for _, r := range runs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// med is the median of f over runs.
func med(runs []Run, f func(Run) float64) float64 {
	xs := make([]float64, len(runs))
	for i, r := range runs {
		xs[i] = f(r)
	}
	return median(xs)
}

// parseInts parses a comma-separated list of positive numbers ("" is none).
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
