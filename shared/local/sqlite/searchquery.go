package sqlite

import (
	"strconv"
	"strings"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// searchProximityBonus is what a page gains, in BM25's units, when every
// pair of neighbouring query words stands within searchProximityWindow
// words of each other in one of its content columns ("copy a file":
// "copy" and "file" two words apart). Chosen with make eval
// (BENCHMARKS.md, "Search quality"): it mattered little from 0.25 to 1,
// and a window of 1 to 7 words all helped; at 10, words of the same list
// ("module, method, stack frame, file") counted as near and it hurt.
const (
	searchProximityBonus  = 1.0
	searchProximityWindow = 2
)

// queryWord is one word of a query: its forms, each quoted for FTS5;
// the first is the word as written.
type queryWord []string

// match is an FTS5 expression matching any form of the word.
func (w queryWord) match() string { return "(" + strings.Join(w, " OR ") + ")" }

// queryWords are a query's words, without the common English words
// unless nothing else is left. A plural word also has its singular as a
// form ("threads": "thread"), so that it finds a title such as
// "Thread-based parallelism"; the index has no stemmer (FTS5's Porter
// stemmer was tried and made search worse, BENCHMARKS.md), and a
// singular is not widened to plurals (a rare plural, "news" for "new",
// outweighs the word itself).
func queryWords(s string) []queryWord {
	var all, kept []queryWord
	for _, w := range strings.Fields(s) {
		qw := queryWord{quote(w)}
		if sg := singular(w); sg != "" {
			qw = append(qw, quote(sg))
		}
		all = append(all, qw)
		if !crawl.StopWord(strings.ToLower(w)) {
			kept = append(kept, qw)
		}
	}
	if len(kept) == 0 {
		kept = all
	}
	return kept[:min(len(kept), crawl.MaxQueryTerms)]
}

func quote(w string) string { return `"` + strings.ReplaceAll(w, `"`, `""`) + `"` }

// singular is the singular of an English plural word of letters, by the
// spelling rules ("dictionaries": "dictionary", "classes": "class",
// "threads": "thread"), or "" for a word that does not look plural
// (short, ending in -ss, -us or -is, or not letters only).
func singular(w string) string {
	l := strings.ToLower(w)
	if len(l) <= 3 || strings.IndexFunc(l, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
		return ""
	}
	switch {
	case strings.HasSuffix(l, "ies"):
		return l[:len(l)-3] + "y"
	case strings.HasSuffix(l, "sses"), strings.HasSuffix(l, "xes"), strings.HasSuffix(l, "ches"), strings.HasSuffix(l, "shes"):
		return l[:len(l)-2]
	case strings.HasSuffix(l, "ss"), strings.HasSuffix(l, "us"), strings.HasSuffix(l, "is"), !strings.HasSuffix(l, "s"):
		return ""
	}
	return l[:len(l)-1]
}

// nearMatch is an FTS5 expression matching a form of a and a form of b
// at most window words apart, in either order.
func nearMatch(a, b queryWord, window int) string {
	var ors []string
	for _, x := range a {
		for _, y := range b {
			ors = append(ors, "NEAR("+x+" "+y+", "+strconv.Itoa(window)+")")
		}
	}
	return "(" + strings.Join(ors, " OR ") + ")"
}
