package stack

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// scripted answers Depth with the next of its counts, then the last.
type scripted struct{ counts [][3]int }

func (s *scripted) Depth(context.Context) (int, int, int, error) {
	c := s.counts[0]
	if len(s.counts) > 1 {
		s.counts = s.counts[1:]
	}
	return c[0], c[1], c[2], nil
}

func TestWaitSettled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		counts  [][3]int
		settles bool
		busy    []string // the progress reports
	}{
		{"empty from the start", [][3]int{{0, 0, 0}}, true, nil},
		{"in flight, then delayed, then empty", [][3]int{{0, 2, 0}, {0, 0, 1}, {0, 0, 0}}, true,
			[]string{"q: 0 visible, 2 in flight, 0 delayed", "q: 0 visible, 0 in flight, 1 delayed"}},
		{"a quiet moment is not enough", [][3]int{{0, 0, 0}, {1, 0, 0}, {0, 0, 0}}, true, []string{"q: 1 visible, 0 in flight, 0 delayed"}},
		{"never empty", [][3]int{{3, 0, 0}}, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			var busy []string
			err := WaitSettled(ctx, []NamedQueue{{"q", &scripted{tc.counts}}}, time.Millisecond, 3, func(b string) { busy = append(busy, b) })
			if tc.settles != (err == nil) {
				t.Fatalf("settled: %v, want %v", err, tc.settles)
			}
			if !tc.settles {
				if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "3 visible") {
					t.Errorf("error %v, want the deadline and the last depths", err)
				}
				return
			}
			if strings.Join(busy, "|") != strings.Join(tc.busy, "|") {
				t.Errorf("progress %q, want %q", busy, tc.busy)
			}
		})
	}
}
