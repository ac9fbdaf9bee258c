package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// A simulated site: pages whose content changes as Poisson processes of
// known rates, visited by a recrawl policy over a span of simulated time.
// Time is a float64 of hours from the start: no clock is read, so a
// month runs in a fraction of a second and every run is the same.

// class is a kind of page: a share of the site changing at a rate.
type class struct {
	name  string
	share float64
	rate  float64 // changes per hour (0: never)
}

// page is one simulated page: the times its content changes.
type page struct {
	class   int
	changes []float64 // sorted, within the span
}

// site generates the pages of the classes, deterministic for a seed.
func site(classes []class, pages int, span float64, seed uint64) []page {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]page, 0, pages)
	for ci, c := range classes {
		n := int(math.Round(c.share * float64(pages)))
		for i := 0; i < n; i++ {
			p := page{class: ci}
			if c.rate > 0 {
				for t := r.ExpFloat64() / c.rate; t < span; t += r.ExpFloat64() / c.rate {
					p.changes = append(p.changes, t)
				}
			}
			out = append(out, p)
		}
	}
	return out
}

// version is the number of changes a page has seen by time t.
func (p page) version(t float64) int {
	return sort.SearchFloat64s(p.changes, t+1e-12)
}

// policy gives a page's next visit after a visit at t that did (or did
// not, or could not yet: first) see a change.
type policy interface {
	next(pageIndex int, t float64, changed, first bool) float64
}

// fixed visits every period.
type fixed struct{ period float64 }

func (f fixed) next(_ int, t float64, _, _ bool) float64 { return t + f.period }

// adaptive is the crawler's policy (crawl.ObserveChange, crawl.NextVisit)
// with recrawl period `period`, one MRate per page.
type adaptive struct {
	period  float64
	mrate   []float64
	counter []int64
}

func newAdaptive(period float64, pages int) *adaptive {
	return &adaptive{period: period, mrate: make([]float64, pages), counter: make([]int64, pages)}
}

func (a *adaptive) next(i int, t float64, changed, first bool) float64 {
	if !first {
		a.mrate[i], a.counter[i] = crawl.ObserveChange(a.mrate[i], a.counter[i], changed)
	}
	// crawl.NextVisit works in Unix seconds: hours become seconds here,
	// scaled back after.
	const unit = 3600
	p := time.Duration(a.period * unit * float64(time.Second))
	at := int64(math.Round(t * unit))
	return float64(crawl.NextVisit(at, p, a.mrate[i], a.counter[i])) / unit
}

// result is what a policy achieved over the span.
type result struct {
	fetches   int
	freshness float64   // time-averaged share of pages whose stored copy is current
	byClass   []float64 // the same per class
}

// run visits every page at time 0 (staggered over the first period, as a
// crawl would), then when the policy says, until span; it measures
// freshness: a page is fresh from a visit until its next change.
func run(pages []page, classes []class, pol policy, span, stagger float64) result {
	res := result{byClass: make([]float64, len(classes))}
	count := make([]int, len(classes))
	var total float64
	for i, p := range pages {
		count[p.class]++
		t := stagger * float64(i) / float64(len(pages))
		seen := -1
		fresh := 0.0
		for t < span {
			res.fetches++
			v := p.version(t)
			changed, first := seen >= 0 && v != seen, seen < 0
			seen = v
			nt := math.Max(pol.next(i, t, changed, first), t+1e-9)
			end := math.Min(nt, span)
			// Fresh until the first change after t, or the next visit.
			if k := v; k < len(p.changes) && p.changes[k] < end {
				fresh += p.changes[k] - t
			} else {
				fresh += end - t
			}
			t = nt
		}
		f := fresh / span
		res.byClass[p.class] += f
		total += f
	}
	for c := range res.byClass {
		if count[c] > 0 {
			res.byClass[c] /= float64(count[c])
		}
	}
	res.freshness = total / float64(len(pages))
	return res
}

// fixedForBudget finds the fixed period that spends the same number of
// fetches as budget (by bisection on the period), and its result.
func fixedForBudget(pages []page, classes []class, span, stagger float64, budget int) (float64, result) {
	lo, hi := 0.01, span
	var best result
	var period float64
	for i := 0; i < 60; i++ {
		mid := math.Sqrt(lo * hi)
		r := run(pages, classes, fixed{mid}, span, stagger)
		if r.fetches > budget {
			lo = mid
		} else {
			hi = mid
			best, period = r, mid
		}
	}
	return period, best
}
