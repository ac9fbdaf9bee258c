package main

import (
	"slices"
	"strings"
	"testing"
)

func TestParseInts(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"", nil, false},
		{"1,2,4", []int{1, 2, 4}, false},
		{" 10000 , 30000,", []int{10000, 30000}, false},
		{"1,x", nil, true},
		{"0", nil, true},
		{"-3", nil, true},
	}
	for _, tt := range tests {
		got, err := parseInts(tt.in)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("parseInts(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestScaleTable(t *testing.T) {
	run := func(pages int, wall float64, timedOut bool) Run {
		return Run{Tool: "crawler", SitePages: pages, WallSec: wall, TimedOut: timedOut, ToolPages: pages,
			Server: Stats{HTMLPages: pages, Requests: pages + 2}}
	}
	out := scaleTable([]int{1000, 3000, 10000, 30000}, []Run{
		run(1000, 50, false), run(3000, 150, false), run(10000, 600, true),
	})
	for _, want := range []string{
		"| 1000 | 1000 / 1000 | 50.0 |",
		"| 3000 | 3000 / 3000 | 150.0 |",
		"| 10000 | 10000 / 10000 | killed at 600.0 |",
		"| 30000 | skipped: the crawl of 10000 pages was killed",
		"From 1000 to 3000 pages (3.0×), the wall time grew 3.0×",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("scaleTable lacks %q:\n%s", want, out)
		}
	}
}
