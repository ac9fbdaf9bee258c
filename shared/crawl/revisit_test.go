package crawl

import (
	"testing"
	"time"
)

func TestObserveChange(t *testing.T) {
	for _, tt := range []struct {
		name    string
		seen    []bool
		want    float64
		wantN   int64
		compare string
	}{
		{"one change", []bool{true}, 1, 1, ""},
		{"one unchanged", []bool{false}, 0, 1, ""},
		{"half", []bool{true, false}, 0.5, 2, ""},
		{"always", []bool{true, true, true, true, true, true, true, true, true, true}, 1, 10, ""},
		// Past the window of 8, old observations fade: a page that stopped
		// changing falls below a half within six visits.
		{"stopped changing", []bool{true, true, true, true, true, true, true, true, false, false, false, false, false, false}, 0.5, 14, "<"},
	} {
		m, n := 0.0, int64(0)
		for _, c := range tt.seen {
			m, n = ObserveChange(m, n, c)
		}
		if n != tt.wantN || (tt.compare == "" && m != tt.want) || (tt.compare == "<" && m >= tt.want) {
			t.Errorf("%s: MRate %.3f after %d, want %s%.3f after %d", tt.name, m, n, tt.compare, tt.want, tt.wantN)
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
