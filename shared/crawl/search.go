package crawl

import "strings"

// Search ranks the same way in both homes (the SQLite store with FTS5,
// the DynamoDB store by hand), as the contract tests check: a page
// holding any word of the query is a hit; hits are ordered by BM25 over
// a page's own content (title above headlines above text; not its
// navigation), plus SearchTitleBonus times the share of the query's
// words in its title, plus SearchProximityBonus times the share of its
// neighbouring word pairs that stand close together; larger scores are
// better. Common English words are left out of a query when others
// remain (StopWord); a plural word also matches its singular (Singular),
// and for the title bonus alone a word also counts when the title holds
// its plural (Plurals).

// SearchTitleBonus is what a page whose title holds every word of the
// query gains over one whose title holds none, in BM25's units. A word
// found in more than half the pages weighs almost nothing in BM25 (its
// IDF is clamped at zero), so for queries of common words the title is
// what tells pages apart. Chosen with make eval (BENCHMARKS.md): 0.5 to
// 5 all helped; 1 helped most.
const SearchTitleBonus = 1.0

// SearchProximityBonus is what a page gains, in BM25's units, when every
// pair of neighbouring query words stands within SearchProximityWindow
// words of each other (at most that many words between them, in either
// order, as FTS5's NEAR) in one of its content fields ("copy a file":
// "copy" and "file"). Chosen with make eval (BENCHMARKS.md, "Search
// quality"): it mattered little from 0.25 to 1, and a window of 1 to 7
// words all helped; at 10, words of the same list ("module, method,
// stack frame, file") counted as near and it hurt.
const (
	SearchProximityBonus  = 1.0
	SearchProximityWindow = 2
)

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

// Singulars are the possible singulars of an English plural word of
// letters, lower-cased, by the spelling rules: "threads" gives
// "thread"; "dictionaries" "dictionary" and "dictionarie" (as "movies"
// needs "movie"); "classes" "class" and "classe" (as "caches" needs
// "cache"). A word that does not look plural (short, ending in -ss, -us
// or -is, or not letters only) has none. A query word also matches its
// singulars, so that "threads" finds a title such as "Thread-based
// parallelism" (the index has no stemmer: FTS5's Porter stemmer made
// search worse, BENCHMARKS.md); a singular is not widened to plurals
// (a rare plural, "news" for "new", outweighs the word itself). A
// wrong guess costs little: it is one more word that rarely occurs.
func Singulars(w string) []string {
	l := strings.ToLower(w)
	if len(l) <= 3 || strings.IndexFunc(l, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 {
		return nil
	}
	switch {
	case strings.HasSuffix(l, "ies"):
		return []string{l[:len(l)-3] + "y", l[:len(l)-1]}
	case strings.HasSuffix(l, "sses"), strings.HasSuffix(l, "xes"), strings.HasSuffix(l, "ches"), strings.HasSuffix(l, "shes"):
		return []string{l[:len(l)-2], l[:len(l)-1]}
	case strings.HasSuffix(l, "ss"), strings.HasSuffix(l, "us"), strings.HasSuffix(l, "is"), !strings.HasSuffix(l, "s"):
		return nil
	}
	return []string{l[:len(l)-1]}
}

// Plurals are the plurals of an English word of letters, lower-cased,
// by the spelling rules Singulars undoes: "function" gives "functions",
// "query" "queries", "box" "boxes". A word that looks plural already has
// none.
func Plurals(w string) []string {
	l := strings.ToLower(w)
	if len(l) < 3 || strings.IndexFunc(l, func(r rune) bool { return r < 'a' || r > 'z' }) >= 0 || len(Singulars(l)) > 0 {
		return nil
	}
	switch {
	case strings.HasSuffix(l, "y") && !strings.ContainsRune("aeiou", rune(l[len(l)-2])):
		return []string{l[:len(l)-1] + "ies"}
	case strings.HasSuffix(l, "s"), strings.HasSuffix(l, "x"), strings.HasSuffix(l, "ch"), strings.HasSuffix(l, "sh"):
		return []string{l + "es"}
	}
	return []string{l + "s"}
}
