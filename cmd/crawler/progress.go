package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/serverless-crawler/crawler/shared/local/pipeline"
	"github.com/serverless-crawler/crawler/shared/report"
)

// progress shows a crawl's progress: on a terminal, three live lines
// drawn by mpb (pages done of known with a bar, rates and ETA; the
// frontier and failures by outcome; the hosts being crawled); otherwise
// the same facts as one plain line every plainEvery.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	quiet    bool
	last     pipeline.Progress
	rate     rateWindow
	lastLine time.Time

	live *mpb.Progress // nil: plain lines
	bars []*mpb.Bar    // the bar, then the text lines
}

// plainEvery is how often a crawl writes a progress line when its
// output is not a terminal.
const plainEvery = 5 * time.Second

func newProgress(w io.Writer, quiet bool) *progress {
	f, ok := w.(*os.File)
	return newProgressTo(w, quiet, ok && !quiet && term.IsTerminal(int(f.Fd())))
}

// newProgressTo is newProgress with the choice of live lines made (opts
// are the live view's further options).
func newProgressTo(w io.Writer, quiet, live bool, opts ...mpb.ContainerOption) *progress {
	p := &progress{w: w, quiet: quiet, lastLine: time.Now()}
	if !live || quiet {
		return p
	}
	p.live = mpb.New(append([]mpb.ContainerOption{mpb.WithOutput(w), mpb.WithRefreshRate(150 * time.Millisecond)}, opts...)...)
	line := func(i int) decor.Decorator {
		return decor.Any(func(decor.Statistics) string { return p.lines()[i] })
	}
	p.bars = []*mpb.Bar{
		p.live.New(0, mpb.BarStyle(), mpb.BarWidth(30), mpb.PrependDecorators(line(0)), mpb.AppendDecorators(line(1))),
		p.live.New(0, mpb.NopStyle(), mpb.PrependDecorators(line(2))),
		p.live.New(0, mpb.NopStyle(), mpb.PrependDecorators(line(3))),
	}
	return p
}

func (p *progress) update(s pipeline.Progress) {
	if p.quiet {
		return
	}
	now := time.Now()
	p.mu.Lock()
	p.last = s
	p.rate.add(now, s.Crawled, s.Bytes)
	var line string
	if p.live == nil && now.Sub(p.lastLine) >= plainEvery {
		p.lastLine = now
		line = strings.Join(slices.DeleteFunc(p.linesLocked(), func(l string) bool { return l == "" }), "; ")
	}
	p.mu.Unlock()
	// Outside the lock: mpb draws the lines (p.lines) on the bar's own
	// goroutine, which a bar method waits for.
	if p.live != nil {
		p.bars[0].SetTotal(max(s.Crawled+int64(s.Frontier), 1), false)
		p.bars[0].SetCurrent(s.Crawled)
		return
	}
	if line != "" {
		fmt.Fprintf(p.w, "progress: %s\n", line)
	}
}

// lines is what the progress says now: pages done of known, then rates
// and ETA, then the frontier and failures, then the current hosts.
func (p *progress) lines() [4]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return [4]string(p.linesLocked())
}

func (p *progress) linesLocked() []string {
	return describeProgress(p.last, p.rate)
}

// describeProgress words a progress report.
func describeProgress(s pipeline.Progress, r rateWindow) []string {
	known := s.Crawled + int64(s.Frontier)
	pages, bytes := r.perSecond()
	speed := fmt.Sprintf("%.1f pages/s, %s/s", pages, report.HumanBytes(int64(bytes)))
	// The ETA needs a bounded crawl: a frontier that new links keep
	// growing has no end in sight, unless --max-pages gives one.
	if left := int64(s.MaxPages) - s.Crawled; s.MaxPages > 0 && pages > 0 {
		left = min(left, int64(s.Frontier))
		speed += ", ETA " + (time.Duration(float64(left)/pages) * time.Second).Round(time.Second).String()
	}
	speed += ", " + s.Elapsed.Round(time.Second).String() + " elapsed"
	failed := "no failures"
	if len(s.Failed) > 0 {
		names := slices.SortedFunc(maps.Keys(s.Failed), func(a, b string) int {
			return cmp.Or(cmp.Compare(s.Failed[b], s.Failed[a]), cmp.Compare(a, b))
		})
		total, parts := 0, []string{}
		for _, n := range names {
			total += s.Failed[n]
			parts = append(parts, fmt.Sprintf("%d %s", s.Failed[n], n))
		}
		failed = fmt.Sprintf("%d failed (%s)", total, strings.Join(parts, ", "))
	}
	hosts := ""
	if len(s.Hosts) > 0 {
		hosts = "crawling " + strings.Join(s.Hosts, ", ")
	}
	return []string{
		fmt.Sprintf("%d of %d known pages, %s stored", s.Crawled, known, report.HumanBytes(s.Bytes)),
		speed,
		fmt.Sprintf("%d in the frontier, %s", s.Frontier, failed),
		hosts,
	}
}

func (p *progress) done() {
	if p.live == nil {
		return
	}
	for _, b := range p.bars {
		b.Abort(true) // the live lines leave no trace: the summary follows
	}
	p.live.Wait()
}

// rateWindow keeps the last few seconds of samples, for the pages and
// bytes per second of the recent past rather than of the whole run.
type rateWindow struct {
	samples []rateSample
}

type rateSample struct {
	at           time.Time
	pages, bytes int64
}

// rateSpan is how far back the rates look.
const rateSpan = 5 * time.Second

func (r *rateWindow) add(at time.Time, pages, bytes int64) {
	r.samples = append(r.samples, rateSample{at, pages, bytes})
	old := 0
	for old < len(r.samples)-2 && at.Sub(r.samples[old+1].at) >= rateSpan {
		old++
	}
	r.samples = r.samples[old:]
}

// perSecond is the pages and bytes per second between the oldest and the
// newest sample (0 with fewer than two).
func (r rateWindow) perSecond() (pages, bytes float64) {
	if len(r.samples) < 2 {
		return 0, 0
	}
	a, b := r.samples[0], r.samples[len(r.samples)-1]
	d := b.at.Sub(a.at).Seconds()
	if d <= 0 {
		return 0, 0
	}
	return float64(b.pages-a.pages) / d, float64(b.bytes-a.bytes) / d
}
