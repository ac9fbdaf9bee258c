package crawl

import "strings"

// Search ranks the same way in both homes (the SQLite store with FTS5,
// the DynamoDB store by hand), as the contract tests check: a page
// holding any word of the query is a hit; hits are ordered by BM25 over
// a page's own content (title above headlines above text; not its
// navigation), plus SearchTitleBonus times the share of the query's
// words in its title; larger scores are better. Common English words are
// left out of a query when others remain (StopWord).

// SearchTitleBonus is what a page whose title holds every word of the
// query gains over one whose title holds none, in BM25's units. A word
// found in more than half the pages weighs almost nothing in BM25 (its
// IDF is clamped at zero), so for queries of common words the title is
// what tells pages apart. Chosen with make eval (BENCHMARKS.md): 0.5 to
// 5 all helped; 1 helped most.
const SearchTitleBonus = 1.0

// MaxQueryTerms bounds the words of a query that are searched.
const MaxQueryTerms = 16

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be by can do does for from how i in is it my of on or
		that the this to was what when where which who why will with your`) {
		stopWords[w] = true
	}
}

// StopWord reports whether a (lower-case) word is one a question is made
// of rather than what it is about.
func StopWord(w string) bool { return stopWords[w] }
