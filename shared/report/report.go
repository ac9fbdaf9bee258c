// Package report makes the crawl report: one self-contained HTML page
// (`crawler report`, both homes) with charts of what a crawl did: crawls
// over time, outcomes, hops, body sizes and hosts; the count of
// duplicate pages and the slowest pages. The charts are SVG drawn here, so the page needs no
// script, font or style sheet from anywhere.
package report

import (
	"context"
	"embed"
	"fmt"
	"html/template"
	"io"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Source is a crawl store as the report reads it.
type Source interface {
	EachCrawl(ctx context.Context, f func(crawl.CrawlLog, *int64) error) error
	EachCandidate(ctx context.Context, f func(crawl.Candidate) error) error
	DuplicateCount(ctx context.Context) (int, error)
}

// Collect reads a store into a report, as of now.
func Collect(ctx context.Context, src Source, now time.Time) (crawl.CrawlReport, error) {
	b := crawl.NewReportBuilder()
	if err := src.EachCrawl(ctx, func(l crawl.CrawlLog, size *int64) error { b.AddCrawl(l, size); return nil }); err != nil {
		return crawl.CrawlReport{}, fmt.Errorf("report: %w", err)
	}
	if err := src.EachCandidate(ctx, func(c crawl.Candidate) error { b.AddCandidate(c); return nil }); err != nil {
		return crawl.CrawlReport{}, fmt.Errorf("report: %w", err)
	}
	dups, err := src.DuplicateCount(ctx)
	if err != nil {
		return crawl.CrawlReport{}, fmt.Errorf("report: %w", err)
	}
	return b.Report(dups, now), nil
}

//go:embed page.html.tmpl
var files embed.FS

var page = template.Must(template.New("page.html.tmpl").Funcs(template.FuncMap{
	"bars":  bars,
	"bytes": HumanBytes,
}).ParseFS(files, "page.html.tmpl"))

// WriteHTML writes the report as one HTML page.
func WriteHTML(w io.Writer, r crawl.CrawlReport, title string) error {
	return page.Execute(w, struct {
		crawl.CrawlReport
		Title string
	}{r, title})
}

// chart is a bar chart laid out for the template.
type chart struct {
	Width, Height int
	Bars          []bar
}

type bar struct {
	X, Y, W, H int
	Label      string
	N          int
	Class      string // the seed 004 status, for the colour
	Tick       bool   // label the bar on the axis
}

// bars lays out counts as vertical bars in a width × 160 chart, every
// bar labelled if there are few, one in so many otherwise.
func bars(counts []crawl.ReportCount, width int) chart {
	const height, top, bottom = 200, 10, 40
	c := chart{Width: width, Height: height}
	if len(counts) == 0 {
		return c
	}
	most := 1
	for _, k := range counts {
		most = max(most, k.N)
	}
	slot := min(80, max(1, (width-20)/len(counts))) // a few bars stay bars, not slabs
	every := max(1, len(counts)/12)
	for i, k := range counts {
		h := k.N * (height - top - bottom) / most
		if k.N > 0 {
			h = max(h, 1)
		}
		c.Bars = append(c.Bars, bar{X: 10 + i*slot, Y: height - bottom - h, W: max(1, slot-2), H: h, Label: k.Label, N: k.N,
			Class: statusClass(k.Status), Tick: i%every == 0})
	}
	return c
}

func statusClass(s string) string {
	switch s {
	case crawl.StatusError:
		return "error"
	case "":
		return "plain"
	case crawl.StatusComplete, crawl.StatusDuplicate, crawl.StatusUnchanged, crawl.StatusRedir:
		return "ok"
	}
	return "warn"
}

// HumanBytes writes a byte count in B, KiB, MiB or GiB, as the report
// and the CLI show sizes.
func HumanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
