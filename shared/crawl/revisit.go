package crawl

import (
	"math"
	"time"
)

// Adaptive recrawl (seed 001 MRate, MRateCounter). Each recrawl of a URL
// is an observation: did its content change since the last visit (a new
// entity generation: another text pile, not merely other bytes) or not.
// MRate is the average of those observations and of a prior of one half
// worth one observation, fading past the last mrateWindow, so that it
// follows a page whose habits change; MRateCounter counts them all.
//
// The next visit follows the recrawl period P (the site's RecrawlPeriod,
// or the crawl's) scaled by the observed rate: 2^(3-6*MRate) times P,
// within [P/4, 8P]. A page that changed at half of its visits keeps P; one
// that never changed backs off to 8P; one that changed at every visit
// comes back at P/4. The policy seeks the interval at which about half of
// the visits find a change: for a page that changes as a Poisson process
// of rate r, that is ln 2 / r, bounded so that no page is dropped or
// hammered. (Cho and Garcia-Molina, 2003, show that the best revisit rate
// for freshness is not proportional to the change rate, and that pages
// changing much faster than they can be visited are not worth chasing:
// the lower bound P/4 is that.) BENCHMARKS.md measures it against a fixed
// period with the same number of fetches.

const (
	mrateWindow   = 8
	minRevisit    = 0.25 // of the period
	maxRevisit    = 8.0
	unknownChange = 0.5 // the prior: no observation yet
)

// ChangeFreqPrior is the MRate a sitemap's <changefreq> stands for
// before any change of the URL is observed (0 for a value that is not
// the protocol's). It is a hint, as the protocol says: the first
// observations soon outweigh it.
func ChangeFreqPrior(changefreq string) float64 {
	switch changefreq {
	case "always":
		return 1
	case "hourly":
		return 0.875
	case "daily":
		return 0.625
	case "weekly":
		return 0.5
	case "monthly":
		return 0.375
	case "yearly":
		return 0.25
	case "never":
		return 0.125
	}
	return 0
}

// ObservedAtFetch reports whether the fetch stage makes a crawl's
// observation, folding it into the candidate it writes with the crawl:
// a 304 says "unchanged" before anything is summarized. Every other
// revisit is observed by the summary, which alone sees whether the
// content changed. One write of the candidate a 304, not two: on AWS the
// summarizer's was 3 write units per unchanged page (BENCHMARKS.md).
func ObservedAtFetch(code ExitCode) bool { return code == ExitUnchanged }

// ObserveChange folds one observation into a URL's MRate and
// MRateCounter. Before the first, MRate is the prior: a sitemap's hint
// (ChangeFreqPrior) if it had one, else one half.
func ObserveChange(mrate float64, counter int64, changed bool) (float64, int64) {
	if counter == 0 && mrate == 0 {
		mrate = unknownChange
	}
	x := 0.0
	if changed {
		x = 1
	}
	// The prior counts as one observation until the window is full, so
	// that a single visit does not swing the rate to 0 or 1.
	n := float64(min(counter+2, mrateWindow))
	return mrate + (x-mrate)/n, counter + 1
}

// RevisitFactor is how many recrawl periods to wait before the next
// visit of a URL with this MRate and MRateCounter.
func RevisitFactor(mrate float64, counter int64) float64 {
	if counter == 0 && mrate == 0 {
		return 1 // nothing known
	}
	f := math.Exp2(3 - 6*mrate)
	return min(max(f, minRevisit), maxRevisit)
}

// NextVisit is when a URL crawled at `at` (Unix seconds) is due again
// with recrawl period p; 0 when p is 0 (not recrawled periodically).
func NextVisit(at int64, p time.Duration, mrate float64, counter int64) int64 {
	if p <= 0 {
		return 0
	}
	return at + int64(math.Round(p.Seconds()*RevisitFactor(mrate, counter)))
}
