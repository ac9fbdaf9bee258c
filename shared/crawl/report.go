package crawl

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"time"
)

// CrawlReport is what `crawler report` shows of a crawl, the same in both
// homes: each store hands its crawls and candidates to a ReportBuilder.
type CrawlReport struct {
	Generated  time.Time
	Crawls     int           // crawls recorded (robots.txt refusals included)
	URLs       int           // candidates known
	Duplicates int           // open generations marked duplicate
	Bytes      int64         // body bytes stored
	Outcomes   []ReportCount // crawls by exit name, the most first; Status is the seed 004 status
	Over       []ReportCount // crawls started in each step of time, first to last (Label: the step's start, UTC)
	Step       time.Duration // the step of Over: at most 60 bars over the crawl's span
	First      time.Time     // the first crawl's start
	Hops       []ReportCount // candidates by hops from a seed
	Sizes      []ReportCount // stored bodies by size
	Hosts      []ReportCount // crawls per host, the most first (at most ReportTop)
	Slowest    []ReportCrawl // the slowest crawls (at most ReportTop)
}

// ReportCount is one bar of a report's chart.
type ReportCount struct {
	Label  string
	Status string `json:",omitempty"`
	N      int
}

// ReportCrawl is one crawl in a report's list.
type ReportCrawl struct {
	URL     string
	Started time.Time
	TookMS  int64
	Outcome string
}

// ReportTop is how many hosts and slow crawls a report lists.
const ReportTop = 15

// sizeBuckets are the upper bounds of the report's body size bars.
var sizeBuckets = []struct {
	max   int64
	label string
}{{1 << 10, "< 1 KiB"}, {10 << 10, "1-10 KiB"}, {100 << 10, "10-100 KiB"}, {1 << 20, "100 KiB-1 MiB"}, {10 << 20, "1-10 MiB"}, {1 << 62, "> 10 MiB"}}

// timeSteps are the steps the crawls-over-time chart may take: the
// first that gives at most maxTimeBars bars over the crawl's span.
var timeSteps = []time.Duration{time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute, 5 * time.Minute,
	15 * time.Minute, time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour}

const maxTimeBars = 60

// maxHopBar is the last hops bar; deeper candidates are counted in it.
const maxHopBar = 10

// ReportBuilder folds crawls and candidates into a CrawlReport.
type ReportBuilder struct {
	r        CrawlReport
	outcomes map[ExitCode]int
	seconds  map[int64]int
	hops     [maxHopBar + 1]int
	sizes    []int
	hosts    map[string]int
	slow     []ReportCrawl
}

// NewReportBuilder returns an empty builder.
func NewReportBuilder() *ReportBuilder {
	return &ReportBuilder{outcomes: map[ExitCode]int{}, seconds: map[int64]int{}, hosts: map[string]int{},
		sizes: make([]int, len(sizeBuckets))}
}

// ReportedExit is the outcome the crawl report shows for a crawl whose
// log says logged: duplicate when it fetched content that the
// summarizer found a duplicate (dup), which it learns after the log is
// written; else the log's. A 304 of a duplicate page stays unchanged,
// in both homes (the DynamoDB store keeps no summary of a 304).
func ReportedExit(logged ExitCode, dup bool) ExitCode {
	if dup && logged.Contentful() {
		return ExitDuplicate
	}
	return logged
}

// AddCrawl counts one recorded crawl; size is its stored body's (nil: none).
func (b *ReportBuilder) AddCrawl(l CrawlLog, size *int64) {
	b.r.Crawls++
	b.outcomes[l.ExitCode]++
	if l.TimeStarted > 0 {
		b.seconds[l.TimeStarted]++
	}
	if u, err := url.Parse(l.URL); err == nil && u.Host != "" {
		b.hosts[u.Host]++
	}
	if size != nil {
		b.r.Bytes += *size
		for i, s := range sizeBuckets {
			if *size < s.max {
				b.sizes[i]++
				break
			}
		}
	}
	if l.ExitCode.Requested() {
		b.slow = append(b.slow, ReportCrawl{URL: l.URL, Started: time.Unix(l.TimeStarted, 0).UTC(), TookMS: l.TimeTakenMS, Outcome: l.ExitCode.String()})
		if len(b.slow) > 4*ReportTop { // keep the slowest few, not every crawl
			b.trimSlow()
		}
	}
}

func (b *ReportBuilder) trimSlow() {
	slices.SortFunc(b.slow, func(x, y ReportCrawl) int { return cmp.Or(cmp.Compare(y.TookMS, x.TookMS), cmp.Compare(x.URL, y.URL)) })
	b.slow = b.slow[:min(len(b.slow), ReportTop)]
}

// AddCandidate counts one known URL.
func (b *ReportBuilder) AddCandidate(c Candidate) {
	b.r.URLs++
	b.hops[min(max(c.Hops, 0), maxHopBar)]++
}

// Report returns the report of what was added, with the count of
// duplicates, as of now.
func (b *ReportBuilder) Report(duplicates int, now time.Time) CrawlReport {
	r := b.r
	r.Generated, r.Duplicates = now.UTC(), duplicates
	for c, n := range b.outcomes {
		r.Outcomes = append(r.Outcomes, ReportCount{Label: c.String(), Status: c.Status(), N: n})
	}
	slices.SortFunc(r.Outcomes, byCountThenLabel)
	if len(b.seconds) > 0 {
		first := slices.Min(slices.Collect(maps.Keys(b.seconds)))
		last := slices.Max(slices.Collect(maps.Keys(b.seconds)))
		step := int64(timeSteps[len(timeSteps)-1] / time.Second)
		for _, d := range timeSteps {
			if s := int64(d / time.Second); (last-first)/s < maxTimeBars {
				step = s
				break
			}
		}
		counts := map[int64]int{}
		for t, n := range b.seconds {
			counts[t-t%step] += n
		}
		r.Step, r.First = time.Duration(step)*time.Second, time.Unix(first, 0).UTC()
		layout := "15:04:05"
		if last-first >= 24*3600 {
			layout = "2006-01-02 15:04"
		}
		for t := first - first%step; t <= last; t += step {
			r.Over = append(r.Over, ReportCount{Label: time.Unix(t, 0).UTC().Format(layout), N: counts[t]})
		}
	}
	for h, n := range b.hops {
		label := fmt.Sprint(h)
		if h == maxHopBar {
			label += "+"
		}
		r.Hops = append(r.Hops, ReportCount{Label: label, N: n})
	}
	for i, n := range b.sizes {
		r.Sizes = append(r.Sizes, ReportCount{Label: sizeBuckets[i].label, N: n})
	}
	for h, n := range b.hosts {
		r.Hosts = append(r.Hosts, ReportCount{Label: h, N: n})
	}
	slices.SortFunc(r.Hosts, byCountThenLabel)
	r.Hosts = r.Hosts[:min(len(r.Hosts), ReportTop)]
	b.trimSlow()
	r.Slowest = slices.Clone(b.slow)
	return r
}

func byCountThenLabel(x, y ReportCount) int {
	return cmp.Or(cmp.Compare(y.N, x.N), cmp.Compare(x.Label, y.Label))
}
