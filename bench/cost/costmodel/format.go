package costmodel

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteMarkdown writes the estimate as Markdown tables: the bill per
// page, by service, by function, and what is priced apart.
func WriteMarkdown(w io.Writer, t *Totals, e *Estimate) {
	fmt.Fprintf(w, "%.0f pages, %d usage records, %d log lines (%d bytes)\n\n", e.Pages, t.Records, t.Lines, t.LogBytes)
	fmt.Fprintf(w, "**$%.3f per million pages** (AWS requests per page: %.1f)\n\n", e.PerMillionPages, e.PerPage(e.Requests))
	if e.Links > 0 {
		fmt.Fprintf(w, "%.0f links (enqueue events), %.1f a page: $%.3f per million links, %.3f AWS requests per link\n\n",
			e.Links, e.PerPage(e.Links), e.PerLink(e.USD)*1e6, e.PerLink(e.Requests))
	}

	fmt.Fprintln(w, "| service | $/M pages | share |")
	fmt.Fprintln(w, "|---|---:|---:|")
	by := e.ByService()
	services := make([]string, 0, len(by))
	for s := range by {
		services = append(services, s)
	}
	slices.SortFunc(services, func(a, b string) int { return cmpDesc(by[a], by[b]) })
	for _, s := range services {
		fmt.Fprintf(w, "| %s | %.3f | %.0f%% |\n", s, e.PerMillion(by[s]), 100*by[s]/e.USD)
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "| service | item | per page | unit | $/M pages |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|")
	items := slices.Clone(e.Items)
	slices.SortStableFunc(items, func(a, b Item) int { return cmpDesc(a.USD, b.USD) })
	for _, it := range items {
		fmt.Fprintf(w, "| %s | %s | %.3f | %s | %.4f |\n", it.Service, it.What, e.PerPage(it.Quantity), it.Unit, e.PerMillion(it.USD))
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "| function | invocations/page | messages/invocation | billed ms/invocation | GB-s/page | requests/page |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	var unreported int64
	for _, n := range t.Names() {
		f := t.Functions[n]
		tot := f.Ops.Total()
		unreported += tot.Unreported + f.InitOps.Total().Unreported
		fmt.Fprintf(w, "| %s | %.3f | %.2f | %.1f | %.5f | %.2f |\n", n, e.PerPage(float64(f.Invocations)),
			ratio(float64(f.Messages), float64(f.Invocations)), ratio(f.BilledMS, float64(f.Invocations)),
			e.PerPage(f.GBSeconds), e.PerPage(float64(tot.Calls+tot.Retries+f.ESMReceives+f.ESMDeletes)))
	}
	fmt.Fprintln(w)

	if e.ColdStarts > 0 {
		var parts []string
		for _, it := range e.ColdStartItems {
			parts = append(parts, fmt.Sprintf("%s %.4g %s", it.What, it.Quantity/float64(e.ColdStarts), it.Unit))
		}
		fmt.Fprintf(w, "Cold starts (not in the per-page total): %d, $%.7f each on average (%s).\n",
			e.ColdStarts, e.ColdStartUSD/float64(e.ColdStarts), strings.Join(parts, "; "))
	}
	fmt.Fprintf(w, "S3 storage (not in the total): %.0f bytes put per page, $%.4f per million pages per month in S3 Standard.\n",
		e.S3BytesPerPage, e.S3StoragePerMillionPagesMonth)
	fmt.Fprintf(w, "Idle polling by Lambda's event source mappings (not in the total): about $%.2f a month for the %d queues.\n",
		e.IdlePollingPerMonth, Queues)
	if unreported > 0 {
		fmt.Fprintf(w, "Not priced: %d DynamoDB calls whose answers carried no consumed capacity (emulators leave it out of some); the DynamoDB figures are that much low.\n", unreported)
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
