package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/serverless-crawler/crawler/shared/local/pipeline"
)

// progress shows a crawl's progress: a live bar on a terminal, a plain
// line every few seconds otherwise.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	bar      *progressbar.ProgressBar
	lastLine time.Time
	quiet    bool
}

func newProgress(w io.Writer, quiet bool) *progress {
	p := &progress{w: w, quiet: quiet, lastLine: time.Now()}
	if f, ok := w.(*os.File); ok && !quiet && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("crawling"),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("pages"),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return p
}

func (p *progress) update(s pipeline.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("crawling: %s stored, %d queued", humanBytes(s.Bytes), s.Pending))
		p.bar.Set64(s.Crawled)
		return
	}
	if time.Since(p.lastLine) >= 5*time.Second {
		p.lastLine = time.Now()
		fmt.Fprintf(p.w, "progress: %d crawled, %s stored, %d queued, %s elapsed\n", s.Crawled, humanBytes(s.Bytes), s.Pending, s.Elapsed.Round(time.Second))
	}
}

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}
