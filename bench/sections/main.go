// Command sections is the experiment behind BENCHMARKS.md's "Sections"
// (#18, not kept): does a section-level score (BM25 over the sections of
// a documentation tree's pages, a section being a heading and the text
// up to the next heading) re-rank the top hits of the crawl's search for
// the better on the judged queries? It reads a crawl that `make eval`
// made (EVAL_DATA=DIR make eval keeps it in DIR, DIR-sphinx, DIR-pg and
// DIR-flask) and prints P@1, P@3 and MRR for each variant:
//
//	go run ./bench/sections -root $SPHINX_DOC_ROOT -data DIR-sphinx -queries bench/eval/sphinx-queries.tsv -n 20,50
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/serverless-crawler/crawler/bench/judged"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

var (
	headWeight   = flag.Float64("hw", 3, "weight of a heading's words")
	admonSplit   = flag.Bool("admon", false, "let a heading inside an admonition (DocBook div.note, tip, ...) start a section")
	noCode       = flag.Bool("nocode", false, "leave code blocks (pre) out of sections")
	dtHeadings   = flag.Bool("dt", false, "also treat a Sphinx object description's signature (dt.sig) as a heading")
	skipToctree  = flag.Bool("skiptoc", true, "treat div.toctree-wrapper as navigation")
	bodyPlurals  = flag.Bool("bodyplurals", false, "match plurals in section text too (headings always do)")
	withTitle    = flag.Bool("title", false, "prefix each section's heading with the page's h1")
	k1           = flag.Float64("k1", 1.2, "BM25 k1")
	bParam       = flag.Float64("b", 0.75, "BM25 b")
	show         = flag.String("show", "", "variant whose per-judged.Query rank changes to print")
	verboseQuery = flag.String("vq", "", "print the candidates and their section scores for this query")
	pool         = flag.Int("pool", 0, "also take as candidates the pages of the best sections of the whole tree, this many (0: the search's hits only)")
)

func main() {
	root := flag.String("root", "", "documentation tree")
	data := flag.String("data", "", "crawl data directory (crawl.db)")
	queries := flag.String("queries", "", "judged queries")
	ns := flag.String("n", "20,50", "candidate counts to try")
	flag.Parse()
	if err := run(*root, *data, *queries, *ns); err != nil {
		fmt.Fprintln(os.Stderr, "sections:", err)
		os.Exit(1)
	}
}

// ---- sections ----

type section struct {
	head, body []string
	headText   string
}

type corpus struct {
	pages    map[string][]int // page path -> section ids
	secs     []section
	postings map[string][]int32 // token -> ids of sections holding it (head or body)
	avgLen   float64
}

func (s section) length() float64 { return *headWeight*float64(len(s.head)) + float64(len(s.body)) }

func load(root string) (*corpus, error) {
	c := &corpus{pages: map[string][]int{}, postings: map[string][]int32{}}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		doc, err := html.Parse(bufio.NewReader(f))
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rel, _ := filepath.Rel(root, p)
		for _, s := range split(doc) {
			id := len(c.secs)
			c.secs = append(c.secs, s)
			c.pages[filepath.ToSlash(rel)] = append(c.pages[filepath.ToSlash(rel)], id)
			seen := map[string]bool{}
			for _, t := range append(slices.Clone(s.head), s.body...) {
				if !seen[t] {
					seen[t] = true
					c.postings[t] = append(c.postings[t], int32(id))
				}
			}
		}
		return nil
	})
	var total float64
	for _, s := range c.secs {
		total += s.length()
	}
	c.avgLen = total / float64(max(1, len(c.secs)))
	return c, err
}

func attr(n *html.Node, k string) string {
	for _, a := range n.Attr {
		if a.Key == k {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, cls string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), cls)
}

var navNames = []string{"navheader", "navfooter", "sphinxsidebar", "sphinxsidebarwrapper", "related", "footer", "header",
	"navigation", "nav", "sidebar", "breadcrumbs", "headerlink", "searchbox", "toc"}

func isNav(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Nav, atom.Header, atom.Footer, atom.Aside, atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Head:
		return true
	}
	if r := attr(n, "role"); r == "navigation" || r == "search" || r == "contentinfo" || r == "banner" {
		return true
	}
	names := append(strings.Fields(attr(n, "class")), attr(n, "id"))
	for _, nm := range names {
		nm = strings.ToLower(nm)
		if slices.Contains(navNames, nm) || (*skipToctree && nm == "toctree-wrapper") {
			return true
		}
	}
	return false
}

// mainContent is <main>, an element of role main, Sphinx's div.body or
// div.document, else <body>. (DocBook pages have none: their body less
// div.navheader/navfooter is the content.)
func mainContent(doc *html.Node) *html.Node {
	var found, body, document *html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if found != nil {
			return
		}
		if n.Type == html.ElementNode {
			switch {
			case n.DataAtom == atom.Main, attr(n, "role") == "main", n.DataAtom == atom.Div && hasClass(n, "body"):
				found = n
				return
			case n.DataAtom == atom.Div && hasClass(n, "document") && document == nil:
				document = n
			case n.DataAtom == atom.Body:
				body = n
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(doc)
	switch {
	case found != nil:
		return found
	case document != nil:
		return document
	case body != nil:
		return body
	}
	return doc
}

var blocks = map[atom.Atom]bool{atom.P: true, atom.Div: true, atom.Li: true, atom.Dt: true, atom.Dd: true, atom.Td: true,
	atom.Th: true, atom.Tr: true, atom.Br: true, atom.Pre: true, atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
	atom.Section: true, atom.Blockquote: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true}

func isHeading(n *html.Node) bool {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	case atom.Dt:
		return *dtHeadings && hasClass(n, "sig")
	}
	return false
}

func isAdmonition(n *html.Node) bool {
	if n.DataAtom != atom.Div {
		return false
	}
	for _, c := range []string{"note", "tip", "warning", "caution", "important", "admonition", "sidebar", "topic"} {
		if hasClass(n, c) {
			return true
		}
	}
	return false
}

func split(doc *html.Node) []section {
	m := mainContent(doc)
	type raw struct{ head, body strings.Builder }
	var out []*raw
	cur := &raw{}
	out = append(out, cur)
	var text func(n *html.Node, b *strings.Builder)
	text = func(n *html.Node, b *strings.Builder) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			return
		}
		if n.Type == html.ElementNode && isNav(n) {
			return
		}
		if blocks[n.DataAtom] {
			b.WriteByte(' ')
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			text(ch, b)
		}
		if blocks[n.DataAtom] {
			b.WriteByte(' ')
		}
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			cur.body.WriteString(n.Data)
			return
		case n.Type != html.ElementNode && n.Type != html.DocumentNode:
			return
		case n.Type == html.ElementNode && isNav(n):
			return
		case n.Type == html.ElementNode && *noCode && n.DataAtom == atom.Pre:
			return
		case n.Type == html.ElementNode && isAdmonition(n) && !*admonSplit:
			// its title is text of the section it stands in
			cur.body.WriteByte(' ')
			text(n, &cur.body)
			cur.body.WriteByte(' ')
			return
		case n.Type == html.ElementNode && isHeading(n):
			cur = &raw{}
			out = append(out, cur)
			text(n, &cur.head)
			return
		}
		if blocks[n.DataAtom] {
			cur.body.WriteByte(' ')
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
		if blocks[n.DataAtom] {
			cur.body.WriteByte(' ')
		}
	}
	walk(m)
	var secs []section
	var pageHead []string
	for _, r := range out {
		s := section{head: tokens(r.head.String()), body: tokens(r.body.String()), headText: strings.TrimSpace(r.head.String())}
		if len(s.head) == 0 && len(s.body) == 0 {
			continue
		}
		if pageHead == nil && len(s.head) > 0 {
			pageHead = s.head
		} else if *withTitle && pageHead != nil {
			s.head = append(slices.Clone(pageHead), s.head...)
		}
		secs = append(secs, s)
	}
	return secs
}

// tokens: lower-case runs of letters, digits and _; a word with _ also
// gives its parts.
func tokens(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
	}) {
		out = append(out, w)
		if strings.Contains(w, "_") {
			for _, p := range strings.Split(w, "_") {
				if p != "" {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// ---- judged.Query ----

type qword struct {
	word  string
	body  map[string]bool // forms matched in text
	head  map[string]bool // forms matched in a heading
	idf   float64
	nsecs int
}

func queryWords(q string, c *corpus) []*qword {
	var all, kept []string
	for _, f := range strings.Fields(q) {
		stop := crawl.StopWord(strings.ToLower(f))
		for _, t := range tokens(f) {
			all = append(all, t)
			if !stop && !crawl.StopWord(t) {
				kept = append(kept, t)
			}
		}
	}
	if len(kept) == 0 {
		kept = all
	}
	kept = kept[:min(len(kept), crawl.MaxQueryTerms)]
	var out []*qword
	n := float64(len(c.secs))
	for _, w := range kept {
		qw := &qword{word: w, body: map[string]bool{w: true}, head: map[string]bool{w: true}}
		for _, s := range crawl.Singulars(w) {
			qw.body[s], qw.head[s] = true, true
		}
		for _, p := range crawl.Plurals(w) {
			qw.head[p] = true
			if *bodyPlurals {
				qw.body[p] = true
			}
		}
		ids := map[int32]bool{}
		for f := range qw.head {
			for _, id := range c.postings[f] {
				ids[id] = true
			}
		}
		qw.nsecs = len(ids)
		df := float64(len(ids))
		qw.idf = math.Log(1 + (n-df+0.5)/(df+0.5))
		out = append(out, qw)
	}
	return out
}

// secScores are a page's section measures for a query: the best BM25 of
// its sections, the largest share of the query's words found in one
// section, whether one heading holds them all.
type secScores struct {
	bm25, cover float64
	allHead     bool
	bestHead    string
}

func score(c *corpus, page string, qs []*qword) secScores {
	var r secScores
	for _, id := range c.pages[page] {
		s := c.secs[id]
		var bm, found float64
		inHead := 0
		for _, q := range qs {
			var th, tb float64
			for _, t := range s.head {
				if q.head[t] {
					th++
				}
			}
			for _, t := range s.body {
				if q.body[t] {
					tb++
				}
			}
			tf := *headWeight*th + tb
			if tf > 0 {
				found++
				bm += q.idf * tf * (*k1 + 1) / (tf + *k1*(1-*bParam+*bParam*s.length()/c.avgLen))
			}
			if th > 0 {
				inHead++
			}
		}
		if bm > r.bm25 {
			r.bm25, r.bestHead = bm, s.headText
		}
		r.cover = max(r.cover, found/float64(len(qs)))
		if inHead == len(qs) {
			r.allHead = true
		}
	}
	return r
}

func ideal(qs []*qword) float64 {
	var t float64
	for _, q := range qs {
		t += q.idf * (*k1 + 1)
	}
	return t
}

// ---- evaluation ----

type result struct{ p1, p3, rr float64 }

func firstRel(q judged.Query, got []string) int {
	for i, p := range got[:min(10, len(got))] {
		if slices.Contains(q.Relevant, p) {
			return i + 1
		}
	}
	return 0
}

func measure(q judged.Query, got []string) result {
	var r result
	got = got[:min(10, len(got))]
	for i, p := range got[:min(3, len(got))] {
		if slices.Contains(q.Relevant, p) {
			r.p3 += 1.0 / 3
			if i == 0 {
				r.p1 = 1
			}
		}
	}
	if f := firstRel(q, got); f > 0 {
		r.rr = 1 / float64(f)
	}
	return r
}

type cand struct {
	path string
	rank float64
	sec  secScores
}

type variant struct {
	name  string
	order func(cs []cand, qs []*qword) []string
}

func byScore(cs []cand, f func(c cand) float64) []string {
	type sc struct {
		p    string
		s, r float64
		i    int
	}
	var xs []sc
	for i, c := range cs {
		xs = append(xs, sc{c.path, f(c), c.rank, i})
	}
	sort.SliceStable(xs, func(a, b int) bool {
		if xs[a].s != xs[b].s {
			return xs[a].s > xs[b].s
		}
		return xs[a].i < xs[b].i
	})
	var out []string
	for _, x := range xs {
		out = append(out, x.p)
	}
	return out
}

func variants() []variant {
	vs := []variant{{"base", func(cs []cand, _ []*qword) []string { return byScore(cs, func(c cand) float64 { return c.rank }) }}}
	for _, B := range []float64{0.5, 1, 2, 4} {
		vs = append(vs,
			variant{fmt.Sprintf("bm25/max B=%g", B), func(cs []cand, qs []*qword) []string {
				var m float64
				for _, c := range cs {
					m = max(m, c.sec.bm25)
				}
				return byScore(cs, func(c cand) float64 { return c.rank + B*c.sec.bm25/max(m, 1e-9) })
			}},
			variant{fmt.Sprintf("bm25/ideal B=%g", B), func(cs []cand, qs []*qword) []string {
				id := ideal(qs)
				return byScore(cs, func(c cand) float64 { return c.rank + B*c.sec.bm25/max(id, 1e-9) })
			}},
			variant{fmt.Sprintf("cover B=%g", B), func(cs []cand, qs []*qword) []string {
				return byScore(cs, func(c cand) float64 { return c.rank + B*c.sec.cover })
			}},
			variant{fmt.Sprintf("allhead B=%g", B), func(cs []cand, qs []*qword) []string {
				return byScore(cs, func(c cand) float64 {
					if c.sec.allHead {
						return c.rank + B
					}
					return c.rank
				})
			}},
		)
	}
	vs = append(vs,
		variant{"bm25 only", func(cs []cand, _ []*qword) []string {
			return byScore(cs, func(c cand) float64 { return c.sec.bm25 + 1e-6*c.rank })
		}},
		variant{"cover only", func(cs []cand, _ []*qword) []string {
			// tie-break by Rank: cover is a multiple of 1/len(qs), Rank a few tens at most
			return byScore(cs, func(c cand) float64 { return 1000*c.sec.cover + c.rank })
		}},
	)
	return vs
}

func run(root, data, queriesFile, ns string) error {
	qs, err := judged.Read(queriesFile)
	if err != nil {
		return err
	}
	c, err := load(root)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d pages, %d sections, avg length %.0f\n", root, len(c.pages), len(c.secs), c.avgLen)
	ctx := context.Background()
	db, err := sqlite.OpenReadOnly(ctx, filepath.Join(data, "crawl.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	vs := variants()
	for _, nstr := range strings.Split(ns, ",") {
		var n int
		fmt.Sscan(nstr, &n)
		sums := make([]result, len(vs))
		ranks := make([][]int, len(vs))
		tops := make([][]string, len(vs))
		missing := 0
		for _, q := range qs {
			hits, err := db.Search(ctx, q.Text, n)
			if err != nil {
				return fmt.Errorf("judged.Query %q: %w", q.Text, err)
			}
			qws := queryWords(q.Text, c)
			var cs []cand
			in := map[string]bool{}
			for _, h := range hits {
				p := judged.Page(h.URL)
				if _, ok := c.pages[p]; !ok {
					missing++
				}
				in[p] = true
				cs = append(cs, cand{path: p, rank: h.Rank, sec: score(c, p, qws)})
			}
			if *pool > 0 {
				cs, err = addPool(ctx, db, c, q.Text, qws, cs, in)
				if err != nil {
					return err
				}
			}
			baseRank := firstRel(q, byScore(cs, func(c cand) float64 { return c.rank }))
			if *verboseQuery == q.Text || (*verboseQuery == "fail" && baseRank != 1 && n == 20) {
				fmt.Printf("judged.Query %q words:", q.Text)
				for _, w := range qws {
					fmt.Printf(" %s(idf %.2f, %d secs)", w.word, w.idf, w.nsecs)
				}
				fmt.Println()
				for i, x := range cs[:min(len(cs), 12)] {
					rel := " "
					if slices.Contains(q.Relevant, x.path) {
						rel = "*"
					}
					fmt.Printf("  %2d %s %-50s rank %6.2f bm25 %6.2f cover %.2f allhead %v best %q\n", i+1, rel, x.path, x.rank, x.sec.bm25, x.sec.cover, x.sec.allHead, x.sec.bestHead)
				}
			}
			for i, v := range vs {
				got := v.order(cs, qws)
				r := measure(q, got)
				sums[i].p1 += r.p1
				sums[i].p3 += r.p3
				sums[i].rr += r.rr
				ranks[i] = append(ranks[i], firstRel(q, got))
				top := ""
				if len(got) > 0 {
					top = got[0]
				}
				tops[i] = append(tops[i], top)
			}
		}
		fmt.Printf("N=%d (%d hits not found under root)\n%-22s %6s %6s %6s\n", n, missing, "variant", "P@1", "P@3", "MRR")
		k := float64(len(qs))
		for i, v := range vs {
			fmt.Printf("%-22s %6.3f %6.3f %6.3f\n", v.name, sums[i].p1/k, sums[i].p3/k, sums[i].rr/k)
			if v.name == *show {
				for j, q := range qs {
					if ranks[i][j] != ranks[0][j] {
						fmt.Printf("    %-50q %s -> %s  (top: %s -> %s)\n", q.Text, rt(ranks[0][j]), rt(ranks[i][j]), tops[0][j], tops[i][j])
					}
				}
			}
		}
	}
	return nil
}

func rt(r int) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprint(r)
}

// addPool adds to cs the pages of the tree's best sections for the
// query (by the best section's BM25, -pool of them) that the search's
// hits do not hold, each with its page rank from a deeper search (or
// below every hit when that does not find it either).
func addPool(ctx context.Context, db *sqlite.DB, c *corpus, q string, qws []*qword, cs []cand, in map[string]bool) ([]cand, error) {
	deep, err := db.Search(ctx, q, 2000)
	if err != nil {
		return nil, fmt.Errorf("judged.Query %q: %w", q, err)
	}
	ranks := map[string]float64{}
	low := 0.0
	for _, h := range deep {
		p := judged.Page(h.URL)
		if _, ok := ranks[p]; !ok {
			ranks[p] = h.Rank
		}
		low = min(low, h.Rank)
	}
	secPage := make([]string, len(c.secs))
	for p, ids := range c.pages {
		for _, id := range ids {
			secPage[id] = p
		}
	}
	pages := map[string]bool{}
	for _, w := range qws {
		for f := range w.head {
			for _, id := range c.postings[f] {
				pages[secPage[id]] = true
			}
		}
	}
	type ps struct {
		p  string
		sc secScores
	}
	var all []ps
	for p := range pages {
		all = append(all, ps{p, score(c, p, qws)})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].sc.bm25 != all[j].sc.bm25 {
			return all[i].sc.bm25 > all[j].sc.bm25
		}
		return all[i].p < all[j].p
	})
	for _, x := range all[:min(*pool, len(all))] {
		if in[x.p] {
			continue
		}
		r, ok := ranks[x.p]
		if !ok {
			r = low - 1
		}
		in[x.p] = true
		cs = append(cs, cand{path: x.p, rank: r, sec: x.sc})
	}
	return cs, nil
}
