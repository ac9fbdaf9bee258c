package main

import (
	"math"
	"testing"
)

// TestFixedMatchesTheory: a fixed period's freshness for Poisson changes
// of rate r visited every I is (1 - e^(-rI)) / (rI) (Cho and
// Garcia-Molina): the simulation measures what it should.
func TestFixedMatchesTheory(t *testing.T) {
	classes := []class{{"daily", 1, 1.0 / 24}}
	span := 400 * 24.0
	pages := site(classes, 400, span, 7)
	for _, period := range []float64{6, 24, 72} {
		got := run(pages, classes, fixed{period}, span, 0)
		x := period / 24
		want := (1 - math.Exp(-x)) / x
		if math.Abs(got.freshness-want) > 0.02 {
			t.Errorf("every %.0f h: freshness %.3f, theory %.3f", period, got.freshness, want)
		}
	}
}

// TestSameBudget: the fixed period found for a budget spends at most it,
// and a page that never changes is always fresh once visited.
func TestSameBudget(t *testing.T) {
	classes := []class{{"hourly", 0.1, 1}, {"never", 0.9, 0}}
	span := 10 * 24.0
	pages := site(classes, 200, span, 3)
	ad := run(pages, classes, newAdaptive(24, len(pages)), span, 0)
	_, fb := fixedForBudget(pages, classes, span, 0, ad.fetches)
	if fb.fetches > ad.fetches || fb.fetches < ad.fetches*95/100 {
		t.Errorf("fixed policy for a budget of %d fetches spent %d", ad.fetches, fb.fetches)
	}
	if ad.byClass[1] != 1 || fb.byClass[1] != 1 {
		t.Errorf("pages that never change: freshness %.3f and %.3f, want 1", ad.byClass[1], fb.byClass[1])
	}
}
