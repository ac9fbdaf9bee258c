package crawl

import (
	"testing"
	"time"
)

func TestReportBuilder(t *testing.T) {
	day := int64(24 * 3600)
	tests := []struct {
		name      string
		starts    []int64
		wantStep  time.Duration
		wantBars  int
		wantLabel string
	}{
		{"one crawl", []int64{1000}, time.Second, 1, "00:16:40"},
		{"a minute", []int64{1000, 1060}, 5 * time.Second, 13, "00:16:40"},
		{"ten minutes", []int64{1000, 1600}, 30 * time.Second, 21, "00:16:30"},
		{"three days", []int64{1000, 1000 + 3*day}, 6 * time.Hour, 13, "1970-01-01 00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewReportBuilder()
			for _, s := range tt.starts {
				b.AddCrawl(CrawlLog{URL: "http://example.com/", TimeStarted: s, ExitCode: ExitComplete}, nil)
			}
			r := b.Report(0, time.Unix(0, 0))
			n := 0
			for _, o := range r.Over {
				n += o.N
			}
			if r.Step != tt.wantStep || len(r.Over) != tt.wantBars || r.Over[0].Label != tt.wantLabel || n != len(tt.starts) {
				t.Errorf("step %v, %d bars from %q holding %d crawls; want %v, %d from %q holding %d",
					r.Step, len(r.Over), r.Over[0].Label, n, tt.wantStep, tt.wantBars, tt.wantLabel, len(tt.starts))
			}
		})
	}

	b := NewReportBuilder()
	for i, hops := range []int{0, 1, 1, 12, 40} {
		b.AddCandidate(Candidate{Hops: hops})
		size := []int64{10, 5000, 50 << 10, 2 << 20, 20 << 20}[i]
		b.AddCrawl(CrawlLog{URL: "http://a.example/x", TimeTakenMS: int64(i), ExitCode: ExitTimeout}, &size)
	}
	b.AddCrawl(CrawlLog{URL: "http://b.example/", ExitCode: ExitRobotsDisallowed}, nil) // not requested: not among the slowest
	r := b.Report(1, time.Unix(0, 0))
	if r.URLs != 5 || r.Hops[0].N != 1 || r.Hops[1].N != 2 || r.Hops[10].N != 2 || r.Hops[10].Label != "10+" {
		t.Errorf("hops %v of %d URLs", r.Hops, r.URLs)
	}
	for i, want := range []int{1, 1, 1, 0, 1, 1} {
		if r.Sizes[i].N != want {
			t.Errorf("size bar %s: %d, want %d", r.Sizes[i].Label, r.Sizes[i].N, want)
		}
	}
	if len(r.Slowest) != 5 || r.Slowest[0].TookMS != 4 || r.Outcomes[0] != (ReportCount{Label: "timeout", Status: StatusError, N: 5}) ||
		r.Hosts[0] != (ReportCount{Label: "a.example", N: 5}) || r.Crawls != 6 || r.Duplicates != 1 {
		t.Errorf("report %+v", r)
	}
}
