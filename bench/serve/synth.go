// The synthetic site (serve -synth N): N HTML pages, made up on each
// request from a seeded PRNG, so that the same N and seed always give
// the same pages and links and nothing is kept in memory or on disk.
//
// Page 0 is /index.html, page i is /p/i.html. Each page has 5 to 20 KB
// of text (paragraphs under headings) and 50 to 300 links:
//
//   - a nav bar repeated on every page: the home page and nine section
//     pages (N/10, 2N/10, ...), again in the footer;
//   - the previous and next pages (i-1, i+1) and a table of contents
//     tree: the parent page (i-1)/10 and the children 10i+1 ... 10i+10;
//   - neighbors i±2 ... i±6 and pages drawn at random, inline in the
//     paragraphs;
//   - 2 to 6 links to other hosts (example.com and the like), which a
//     crawler scoped to the seed's host must not follow;
//   - fragment links: "On this page" to the page's own headings, and
//     one to a heading of another page.
//
// Every page is reachable from /index.html (through i-1 → i, and in
// few hops through the tree and the random links). /robots.txt allows
// everything. Pages carry an ETag and a fixed Last-Modified, so a
// recrawl's conditional requests are answered 304.
package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// synthModified is every synthetic page's Last-Modified.
var synthModified = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// synth serves the synthetic site of n pages made with seed.
type synth struct {
	n    int
	seed uint64
}

func (s synth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		http.ServeContent(w, r, "robots.txt", synthModified, strings.NewReader("User-agent: *\nAllow: /\n"))
		return
	}
	i, ok := s.pageNumber(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("ETag", fmt.Sprintf(`"synth-%d-%d-%d"`, s.seed, s.n, i))
	http.ServeContent(w, r, "", synthModified, bytes.NewReader(s.page(i)))
}

// pageNumber is the page at path, if there is one.
func (s synth) pageNumber(path string) (int, bool) {
	if path == "/index.html" {
		return 0, true
	}
	num, ok := strings.CutPrefix(path, "/p/")
	if !ok {
		return 0, false
	}
	num, ok = strings.CutSuffix(num, ".html")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(num)
	// Only the canonical spelling: /p/7.html, not /p/07.html or /p/+7.html.
	if err != nil || i < 1 || i >= s.n || strconv.Itoa(i) != num {
		return 0, false
	}
	return i, true
}

// pagePath is page i's path.
func pagePath(i int) string {
	if i == 0 {
		return "/index.html"
	}
	return "/p/" + strconv.Itoa(i) + ".html"
}

// externalHosts are the out-of-scope hosts pages link to.
var externalHosts = []string{"www.example.com", "example.org", "docs.example.net", "blog.example.com", "cdn.example.org"}

// words are the text's vocabulary.
var words = strings.Fields(`the a of and to in is for on with that as by this from at be are or an it
	crawler page link server request response queue frontier host scope robots fetch parse store index
	document section table content header footer network latency bandwidth cache memory disk storage
	function handler event message batch retry timeout error status body length type encoding charset
	random graph node edge tree path depth breadth search order politeness delay concurrency worker
	database transaction commit schema column row query plan statistics token summary report figure
	measure benchmark median peak wall time second minute hour day week growth linear scale size
	synthetic generated deterministic seed number value range limit budget cost bill region zone`)

// page renders page i.
func (s synth) page(i int) []byte {
	rng := rand.New(rand.NewPCG(s.seed, uint64(i)))
	text := 5000 + rng.IntN(15001) // bytes of text in the paragraphs
	total := 50 + rng.IntN(251)    // links on the page
	paras := max(1, text/560)      // a paragraph is about 80 words
	heads := (paras + 2) / 3       // a heading every three paragraphs

	var b bytes.Buffer
	b.Grow(text + total*48 + 2048)
	links := 0
	a := func(href, label string) {
		fmt.Fprintf(&b, `<a href="%s">%s</a>`, href, label)
		links++
	}

	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Page %d: %s</title>\n</head>\n<body>\n", i, phrase(rng, 4))
	s.nav(&b, a)
	fmt.Fprintf(&b, "<main>\n<h1>Page %d: %s</h1>\n<p class=\"pager\">", i, phrase(rng, 4))
	if i > 0 {
		a(pagePath(i-1), "Previous")
		b.WriteString(" ")
	}
	if i+1 < s.n {
		a(pagePath(i+1), "Next")
	}
	b.WriteString("</p>\n<nav class=\"toc\">\n<h2>Contents</h2>\n<ul>\n")
	if i > 0 {
		b.WriteString("<li>")
		a(pagePath((i-1)/10), "Up")
		b.WriteString("</li>\n")
	}
	for c := 10*i + 1; c <= 10*i+10 && c < s.n; c++ {
		b.WriteString("<li>")
		a(pagePath(c), fmt.Sprintf("Page %d", c))
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n<h2>On this page</h2>\n<ul>\n")
	for h := 1; h <= heads; h++ {
		b.WriteString("<li>")
		a(fmt.Sprintf("#s%d", h), fmt.Sprintf("Section %d", h))
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n</nav>\n")

	// The rest of the budget goes inline in the paragraphs: the
	// footer's links (counted here), the external and fragment links
	// and the neighbors first, then random pages.
	external := 2 + rng.IntN(5)
	footer := 10 + external
	var inline []string
	for d := 2; d <= 6; d++ {
		if i-d >= 0 {
			inline = append(inline, pagePath(i-d))
		}
		if i+d < s.n {
			inline = append(inline, pagePath(i+d))
		}
	}
	inline = append(inline, fmt.Sprintf("%s#s%d", pagePath(rng.IntN(s.n)), 1+rng.IntN(3)))
	for links+footer+len(inline) < total {
		inline = append(inline, pagePath(rng.IntN(s.n)))
	}
	rng.Shuffle(len(inline), func(x, y int) { inline[x], inline[y] = inline[y], inline[x] })

	perPara := (len(inline) + paras - 1) / paras
	for p := 0; p < paras; p++ {
		if p%3 == 0 {
			fmt.Fprintf(&b, "<h2 id=\"s%d\">%s</h2>\n", p/3+1, phrase(rng, 3))
		}
		n := min(perPara, len(inline))
		mine := inline[:n]
		inline = inline[n:]
		b.WriteString("<p>")
		// Words (and the links' labels) up to the paragraph's share of
		// the text, the links spread at random among the words.
		for left := text / paras; left > 0; {
			word := words[rng.IntN(len(words))]
			if len(mine) > 0 && rng.IntN(max(1, left/7)) < len(mine) {
				word = phrase(rng, 2)
				a(mine[0], word)
				mine = mine[1:]
			} else {
				b.WriteString(word)
			}
			b.WriteString(" ")
			left -= len(word) + 1
		}
		for _, href := range mine {
			a(href, "more")
			b.WriteString(" ")
		}
		b.WriteString("</p>\n")
	}
	b.WriteString("</main>\n<footer>\n<p>")
	for e := 0; e < external; e++ {
		host := externalHosts[rng.IntN(len(externalHosts))]
		a(fmt.Sprintf("https://%s/%s/%d", host, words[rng.IntN(len(words))], rng.IntN(1000)), "Elsewhere: "+host)
		b.WriteString(" ")
	}
	b.WriteString("</p>\n")
	s.nav(&b, a)
	b.WriteString("</footer>\n</body>\n</html>\n")
	return b.Bytes()
}

// nav writes the links every page has: home and nine section pages.
func (s synth) nav(b *bytes.Buffer, a func(href, label string)) {
	b.WriteString("<nav class=\"site\"><ul>\n<li>")
	a(pagePath(0), "Home")
	b.WriteString("</li>\n")
	for k := 1; k <= 9; k++ {
		b.WriteString("<li>")
		a(pagePath(s.n*k/10), fmt.Sprintf("Section %d", k))
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul></nav>\n")
}

// phrase is n words drawn from the vocabulary.
func phrase(rng *rand.Rand, n int) string {
	w := make([]string, n)
	for k := range w {
		w[k] = words[rng.IntN(len(words))]
	}
	return strings.Join(w, " ")
}
