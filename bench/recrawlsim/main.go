// Command recrawlsim measures the adaptive recrawl policy (seed 001
// MRate; shared/crawl/revisit.go) against a fixed recrawl period that
// spends the same number of fetches, on a simulated site whose pages
// change at known rates, over simulated days (`make bench-recrawl`,
// BENCHMARKS.md). No clock is read: the run is fast and repeatable.
package main

import (
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
)

func main() {
	pages := flag.Int("pages", 10000, "pages on the simulated site")
	days := flag.Float64("days", 30, "simulated days")
	period := flag.Float64("period", 24, "the recrawl period, hours (the site's RecrawlPeriod)")
	seed := flag.Uint64("seed", 1, "the change processes' random seed")
	flag.Parse()

	classes := []class{
		{"hourly (5%)", 0.05, 1},
		{"daily (25%)", 0.25, 1.0 / 24},
		{"never (70%)", 0.70, 0},
	}
	span := *days * 24
	s := site(classes, *pages, span, *seed)
	ad := run(s, classes, newAdaptive(*period, len(s)), span, *period)
	same := run(s, classes, fixed{*period}, span, *period)
	fp, fb := fixedForBudget(s, classes, span, *period, ad.fetches)

	fmt.Printf("%d pages (5%% change hourly, 25%% daily, 70%% never), %.0f simulated days, recrawl period %.0f h, seed %d\n\n",
		len(s), *days, *period, *seed)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tfetches\tfetches/page/day\tfreshness\thourly\tdaily\tnever\t")
	row := func(name string, r result) {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", name, r.fetches,
			float64(r.fetches)/float64(len(s))/(*days), r.freshness, r.byClass[0], r.byClass[1], r.byClass[2])
	}
	row("adaptive, period "+fmt.Sprint(*period)+" h", ad)
	row(fmt.Sprintf("fixed %.1f h (same fetches)", fp), fb)
	row("fixed "+fmt.Sprint(*period)+" h", same)
	tw.Flush()
}
