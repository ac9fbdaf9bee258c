package crawl

import (
	"testing"
	"time"
)

func TestObserveChange(t *testing.T) {
	for _, tt := range []struct {
		name     string
		seen     []bool
		from, to float64 // MRate after, within
	}{
		{"one change", []bool{true}, 0.75, 0.75},
		{"one unchanged", []bool{false}, 0.25, 0.25},
		{"half", []bool{true, false}, 0.5, 0.5},
		{"always", []bool{true, true, true, true, true, true, true, true, true, true}, 0.95, 1},
		{"never", []bool{false, false, false, false, false, false, false, false, false, false}, 0, 0.05},
		// Past the window, old observations fade: a page that stopped
		// changing falls below a half within six visits.
		{"stopped changing", []bool{true, true, true, true, true, true, true, true, false, false, false, false, false, false}, 0, 0.5},
	} {
		m, n := 0.0, int64(0)
		for _, c := range tt.seen {
			m, n = ObserveChange(m, n, c)
		}
		if n != int64(len(tt.seen)) || m < tt.from || m > tt.to {
			t.Errorf("%s: MRate %.3f after %d, want %.3f to %.3f after %d", tt.name, m, n, tt.from, tt.to, len(tt.seen))
		}
	}
}

func TestNextVisit(t *testing.T) {
	const day = 24 * time.Hour
	for _, tt := range []struct {
		name    string
		mrate   float64
		counter int64
		want    time.Duration
	}{
		{"no observation", 0, 0, day},
		{"changes at half the visits", 0.5, 4, day},
		{"never changed", 0, 5, 8 * day},
		{"changed every time", 1, 5, day / 4},
		{"a quarter", 0.25, 4, time.Duration(float64(day) * 2.828427)},
	} {
		got := time.Duration(NextVisit(1000, day, tt.mrate, tt.counter)-1000) * time.Second
		if d := got - tt.want; d < -time.Second || d > time.Second {
			t.Errorf("%s: next visit after %v, want %v", tt.name, got, tt.want)
		}
	}
	if NextVisit(1000, 0, 0.5, 3) != 0 {
		t.Error("no period: a next visit was given")
	}
}

func TestChangeFreqPrior(t *testing.T) {
	// From always to never, the first recrawl comes no sooner.
	last := 0.0
	for _, f := range []string{"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"} {
		p := ChangeFreqPrior(f)
		factor := RevisitFactor(p, 0)
		if p <= 0 || factor < last {
			t.Errorf("%s: prior %.3f, factor %.2f after %.2f", f, p, factor, last)
		}
		if m, _ := ObserveChange(p, 0, true); p < 1 && m <= p {
			t.Errorf("%s: a change observed moves MRate %.3f to %.3f", f, p, m)
		}
		last = factor
	}
	if RevisitFactor(ChangeFreqPrior("hourly"), 0) >= 1 || RevisitFactor(ChangeFreqPrior("never"), 0) <= 1 {
		t.Error("hourly is not recrawled sooner than the period, or never not later")
	}
	if ChangeFreqPrior("sometimes") != 0 || RevisitFactor(0, 0) != 1 {
		t.Error("an unknown changefreq is a hint")
	}
}
