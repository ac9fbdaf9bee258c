package crawl

import "testing"

func TestSeedState(t *testing.T) {
	crawled := int64(1000)
	for _, tc := range []struct {
		name   string
		c      Candidate
		status string
		want   string
	}{
		{"never crawled, due", Candidate{State: StateDue, DueAt: 900}, StatusNone, "pending"},
		{"never crawled, due later", Candidate{State: StateDue, DueAt: 5000}, StatusNone, "pending"},
		{"released", Candidate{State: StateQueued, LastCrawlTime: &crawled}, StatusComplete, "pending"},
		{"complete, recrawl due later", Candidate{State: StateDue, DueAt: 5000, LastCrawlTime: &crawled}, StatusComplete, "success"},
		{"complete, recrawl due now", Candidate{State: StateDue, DueAt: 2000, LastCrawlTime: &crawled}, StatusComplete, "pending"},
		{"unchanged, recrawl due later", Candidate{State: StateDue, DueAt: 5000, LastCrawlTime: &crawled}, StatusUnchanged, "success"},
		{"duplicate, recrawl due later", Candidate{State: StateDue, DueAt: 5000, LastCrawlTime: &crawled}, StatusDuplicate, "warning"},
		{"error, retry due later", Candidate{State: StateDue, DueAt: 5000, LastCrawlTime: &crawled}, StatusError, "pending"},
		{"robots.txt unreachable, retry due later", Candidate{State: StateDue, DueAt: 5000, LastCrawlTime: &crawled}, "disallowed by robots.txt", "pending"},
		{"error, given up", Candidate{State: StateCrawled, LastCrawlTime: &crawled}, StatusError, "error"},
		{"crawled, no recrawl", Candidate{State: StateCrawled, LastCrawlTime: &crawled}, StatusComplete, "success"},
		{"filtered", Candidate{State: StateFiltered}, "robots", "warning"},
		{"held while its site is disabled", Candidate{State: StateHeld, LastCrawlTime: &crawled}, StatusComplete, "pending"},
	} {
		if got := SeedState(tc.c, tc.status, 3000); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestURLStatusWithTimes(t *testing.T) {
	at, end := int64(1700000000), int64(1700003600)
	s := URLStatus{LastCrawl: &at, Generation: &GenerationView{FirstSeen: 100, LastSeen: at, ConfirmedEnd: &end}}.WithTimes()
	g := s.Generation
	if s.LastCrawlAt != "2023-11-14T22:13:20Z" || s.LastContentAt != "" || g.FirstSeenAt != "1970-01-01T00:01:40Z" ||
		g.LastSeenAt != "2023-11-14T22:13:20Z" || g.ConfirmedEndAt != "2023-11-14T23:13:20Z" {
		t.Errorf("times: %q %q %+v", s.LastCrawlAt, s.LastContentAt, *g)
	}
}
