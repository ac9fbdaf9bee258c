// Command eval measures search quality (issue #18) on the make bench
// documentation tree: it crawls the tree served on loopback with the
// crawler (once; the data directory is kept), runs the judged queries of
// queries.tsv through the crawl's search, and prints precision at 1 and
// at 3, the share of queries with a relevant page in the top 3, the
// mean reciprocal rank (over the top 10), and how many HTML pages have a
// headline. `make eval` runs it; BENCHMARKS.md keeps the figures.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/serverless-crawler/crawler/bench/judged"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

func main() {
	root := flag.String("root", "", "the documentation tree to serve (bench/inputs.sh DOC_ROOT)")
	data := flag.String("data", ".local-bench/eval-data", "data directory of the crawl (crawled first if it has no crawl.db)")
	crawler := flag.String("crawler", "bin/crawler", "crawler binary")
	serve := flag.String("serve", "bin/bench-serve", "bench/serve binary")
	queries := flag.String("queries", "bench/eval/queries.tsv", "judged queries")
	verbose := flag.Bool("v", false, "print every query's top 3")
	flag.Parse()
	if err := run(*root, *data, *crawler, *serve, *queries, *verbose, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func run(root, data, crawler, serve, queriesFile string, verbose bool, w io.Writer) error {
	qs, err := judged.Read(queriesFile)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(data, "crawl.db")); err != nil {
		if root == "" {
			return fmt.Errorf("no crawl in %s and no -root to crawl", data)
		}
		if err := crawl(root, data, crawler, serve); err != nil {
			return err
		}
	}
	ctx := context.Background()
	db, err := sqlite.OpenReadOnly(ctx, filepath.Join(data, "crawl.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	var s score
	for _, q := range qs {
		hits, err := db.Search(ctx, q.Text, 10)
		if err != nil {
			return fmt.Errorf("judged.Query %q: %w", q.Text, err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, judged.Page(h.URL))
		}
		r := s.add(q, got)
		if verbose {
			mark := "  "
			if r != 1 {
				mark = "✗ "
			}
			fmt.Fprintf(w, "%s%-45q rank %-3s top 3: %s\n", mark, q.Text, rankText(r), strings.Join(got[:min(3, len(got))], " "))
		}
	}
	withHeadline, pages, err := headlines(ctx, db)
	if err != nil {
		return err
	}
	shares, err := boilerplate(ctx, db)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "queries\tP@1\tP@3\trelevant in top 3\tMRR@10\theadline filled\tboilerplate share (median, mean, p90)\t")
	fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%d of %d (%.1f%%)\t%.2f, %.2f, %.2f\t\n", s.n, s.p1/float64(s.n), s.p3/float64(s.n),
		s.hit3/float64(s.n), s.rr/float64(s.n), withHeadline, pages, 100*float64(withHeadline)/float64(max(pages, 1)),
		quantile(shares, 0.5), mean(shares), quantile(shares, 0.9))
	return tw.Flush()
}

// score sums the measures over the queries.
type score struct {
	n                int
	p1, p3, hit3, rr float64
}

// add scores one query's ranked pages and returns the rank of its first
// relevant page (0: none in the top 10).
func (s *score) add(q judged.Query, got []string) int {
	s.n++
	first := 0
	inTop3 := 0
	for i, p := range got {
		if !slices.Contains(q.Relevant, p) {
			continue
		}
		if first == 0 {
			first = i + 1
		}
		if i < 3 {
			inTop3++
		}
	}
	if first == 1 {
		s.p1++
	}
	s.p3 += float64(inTop3) / 3
	if inTop3 > 0 {
		s.hit3++
	}
	if first > 0 {
		s.rr += 1 / float64(first)
	}
	return first
}

func rankText(r int) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprint(r)
}

// headlines counts the HTML pages whose document description has a
// primary headline, of all HTML pages summarized.
func headlines(ctx context.Context, db *sqlite.DB) (int, int, error) {
	var with, all int
	err := db.SQL().QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE coalesce(dd.primary_headline, '') <> ''), count(*)
		FROM document_description dd JOIN entity_generation g ON g.entity_generation_id = dd.entity_generation_id
		WHERE g.confirmed_end_unix_utc IS NULL`).Scan(&with, &all)
	return with, all, err
}

// boilerplate is, for each open generation's text pile, the share of its
// text the extractor set aside as page chrome (secondary_text: navigation,
// headers, footers, sidebars, what lies outside a page's main landmark,
// and link-dense blocks), in characters.
func boilerplate(ctx context.Context, db *sqlite.DB) ([]float64, error) {
	rows, err := db.SQL().QueryContext(ctx, `SELECT length(p.secondary_text), length(p.text) + length(p.big_headlines) +
		length(p.small_headlines) + length(p.code_text) + length(p.quote_text)
		FROM text_pile p JOIN entity_generation g ON g.text_pile_id = p.text_pile_id WHERE g.confirmed_end_unix_utc IS NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []float64
	for rows.Next() {
		var chrome, content float64
		if err := rows.Scan(&chrome, &content); err != nil {
			return nil, err
		}
		if chrome+content > 0 {
			out = append(out, chrome/(chrome+content))
		}
	}
	slices.Sort(out)
	return out, rows.Err()
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(max(len(xs), 1))
}

// crawl serves the tree on loopback and crawls it into data.
func crawl(root, data, crawler, serve string) error {
	srv := exec.Command(serve, "-root", root)
	out, err := srv.StdoutPipe()
	if err != nil {
		return err
	}
	srv.Stderr = io.Discard
	if err := srv.Start(); err != nil {
		return fmt.Errorf("start %s: %w", serve, err)
	}
	defer func() { srv.Process.Signal(syscall.SIGTERM); srv.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("server's address: %w", err)
	}
	go io.Copy(io.Discard, out)
	base := strings.TrimSuffix(strings.TrimSpace(line), "/")
	cmd := exec.Command(crawler, "crawl", "--data", data, "--delay", "0", "--concurrency", "8", "--allow-private", "--quiet", base+"/index.html")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	fmt.Fprintf(os.Stderr, "eval: crawling %s into %s\n", root, data)
	if err := cmd.Run(); err != nil {
		os.Remove(filepath.Join(data, "crawl.db"))
		return fmt.Errorf("crawl: %w", err)
	}
	return nil
}
