package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/report"
	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
)

// openForReading opens a data directory's database read-only, without
// taking the crawl lock, so status and search work while a crawl runs
// and never write to it.
func openForReading(ctx context.Context, dir string) (*sqlite.DB, error) {
	path := filepath.Join(dir, "crawl.db")
	if _, err := os.Stat(path); err != nil {
		return nil, usagef("no crawl in %s (run 'crawler crawl --data %s URL' first)", dir, dir)
	}
	return sqlite.OpenReadOnly(ctx, path)
}

// reader is what status and search read: a data directory's database
// or a deployed stack's tables.
type reader interface {
	Status(ctx context.Context, url string) (crawl.URLStatus, error)
	Search(ctx context.Context, query string, limit int) ([]crawl.SearchHit, error)
	report.Source
	Close() error
}

type stackReader struct{ *dynamo.DB }

func (stackReader) Close() error { return nil }

// openReader opens the stack when one is named, else the data directory,
// and says which it opened.
func openReader(ctx context.Context, dir, stackName string) (reader, string, error) {
	if stackName != "" {
		db, err := openStack(ctx, stackName)
		if err != nil {
			return nil, "", err
		}
		return stackReader{db}, "stack " + stackName, nil
	}
	db, err := openForReading(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	return db, dir, nil
}

func cmdStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "crawl-data", "read the crawl in this data `directory`")
	stackName := stackFlag(fs, "read the crawl of this deployed stack instead of a data directory")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler status [flags] URL\n\nPrints what the crawl knows of URL as JSON: its state, last outcome and latest generation (docs/glossary.md).")
		printFlags(fs, stderr)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give exactly one URL")
	}
	n, err := urlnorm.Normalize(pos[0])
	if err != nil {
		return invalidURL(pos[0], err)
	}
	db, where, err := openReader(ctx, *data, *stackName)
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := db.Status(ctx, n.URL)
	if errors.Is(err, crawl.ErrNotFound) {
		return fmt.Errorf("%s is not known to the crawl in %s", n.URL, where)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(st)
}

func cmdSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "crawl-data", "search the crawl in this data `directory`")
	limit := fs.Int("limit", 10, "show at most `N` results")
	asJSON := fs.Bool("json", false, "print results as JSON: url, title, snippet and rank (larger is better)")
	stackName := stackFlag(fs, "search the crawl of this deployed stack instead of a data directory")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler search [flags] QUERY...")
		printFlags(fs, stderr)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	q := strings.TrimSpace(strings.Join(pos, " "))
	if q == "" {
		return usagef("give a query")
	}
	if *limit < 1 {
		return usagef("--limit must be at least 1")
	}
	db, _, err := openReader(ctx, *data, *stackName)
	if err != nil {
		return err
	}
	defer db.Close()
	hits, err := db.Search(ctx, q, *limit)
	if err != nil {
		return err
	}
	if crawl.QueryCut(q) {
		fmt.Fprintf(stderr, "note: only the first %d words of the query are searched (common words such as \"the\" left out first)\n", crawl.MaxQueryTerms)
	}
	if local, ok := db.(*sqlite.DB); ok {
		// Pages are indexed a second at a time while a crawl runs, and
		// the rest when it ends (sqlite.IndexPending).
		if n, err := local.Unindexed(ctx); err == nil && n > 0 {
			fmt.Fprintf(stderr, "note: %d pages summarized are not in the search index yet: a crawl is running, or stopped before it indexed them (the next 'crawler crawl --data %s' does)\n", n, *data)
		}
	}
	return printHits(stdout, q, hits, *asJSON)
}

func printHits(w io.Writer, q string, hits []crawl.SearchHit, asJSON bool) error {
	if asJSON {
		if hits == nil {
			hits = []crawl.SearchHit{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(hits)
	}
	if len(hits) == 0 {
		fmt.Fprintf(w, "no results for %q\n", q)
		return nil
	}
	for i, h := range hits {
		title := h.Title
		if title == "" {
			// A page without <title>, or a plain text file: its name, as
			// a browser's tab shows it.
			title = "(no title)"
			if u, err := url.Parse(h.URL); err == nil {
				if name := path.Base(u.Path); name != "/" && name != "." {
					title = name
				}
			}
		}
		fmt.Fprintf(w, "%d. %s\n   %s\n   %s\n", i+1, title, h.URL, strings.ReplaceAll(h.Snippet, "\n", " "))
	}
	return nil
}

func cmdReport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	data := fs.String("data", "crawl-data", "report on the crawl in this data `directory`")
	out := fs.String("out", "crawl-report.html", "write the report to this `file` (- for stdout)")
	stackName := stackFlag(fs, "report on the crawl of this deployed stack instead of a data directory (it scans the tables: docs/aws.md)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler report [flags]\n\nWrites one self-contained HTML page of what the crawl did: charts of crawls over time,\noutcomes, hops, body sizes and hosts; the count of duplicate pages; the slowest pages.\nOpen it in a browser.")
		printFlags(fs, stderr)
	}
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("report takes no arguments, got %q", pos)
	}
	db, where, err := openReader(ctx, *data, *stackName)
	if err != nil {
		return err
	}
	defer db.Close()
	r, err := report.Collect(ctx, db, time.Now())
	if err != nil {
		return err
	}
	w := stdout
	if *out != "-" {
		f, err := os.Create(*out)
		if err != nil {
			return usagef("--out: %v", err)
		}
		defer f.Close()
		w = f
	}
	if err := report.WriteHTML(w, r, "Crawl report: "+where); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if *out != "-" {
		fmt.Fprintf(stdout, "wrote %s: %d crawls of %d URLs\n", *out, r.Crawls, r.URLs)
	}
	return nil
}
