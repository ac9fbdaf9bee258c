package sqlite

import (
	"slices"
	"strconv"
	"strings"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// queryWord is one word of a query: its forms, each quoted for FTS5;
// the first is the word as written.
type queryWord []string

// match is an FTS5 expression matching any form of the word.
func (w queryWord) match() string { return "(" + strings.Join(w, " OR ") + ")" }

// titleMatch is match with the word's plurals too: a title names its
// subject in the plural as often as not ("Trigger Functions").
func (w queryWord) titleMatch() string {
	forms := slices.Clone(w)
	for _, p := range crawl.Plurals(strings.Trim(w[0], `"`)) {
		forms = append(forms, quote(p))
	}
	return "(" + strings.Join(forms, " OR ") + ")"
}

// queryWords are a query's words, cut as the index cuts text
// (crawl.WordRune: "pl/pgsql" is two words, as the DynamoDB store has
// them), without the common English words unless nothing else is left;
// a plural word also has its singular as a form (crawl.Singulars). A
// word appears once. (Before 2026-11-30 each run of non-spaces was one
// word, an FTS5 phrase: "zephyrword/oscar" found no page that did not
// hold both side by side.)
func queryWords(s string) []queryWord {
	var all, kept []queryWord
	seen := map[string]bool{}
	for _, w := range crawl.Words(s) {
		l := strings.ToLower(w)
		if seen[l] {
			continue
		}
		seen[l] = true
		qw := queryWord{quote(w)}
		for _, sg := range crawl.Singulars(w) {
			qw = append(qw, quote(sg))
		}
		all = append(all, qw)
		if !crawl.StopWord(l) {
			kept = append(kept, qw)
		}
	}
	if len(kept) == 0 {
		kept = all
	}
	return kept[:min(len(kept), crawl.MaxQueryTerms)]
}

func quote(w string) string { return `"` + strings.ReplaceAll(w, `"`, `""`) + `"` }

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
