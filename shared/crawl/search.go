package crawl

import (
	"regexp"
	"strings"
	"unicode"
)

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
// its plural (Plurals). Two kinds of page that hold every word of an
// API and answer few questions lose a little: a source listing
// (SourceListing) loses SearchListingPenalty, a changelog
// (ChangelogTitle) SearchChangelogPenalty.

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

// SearchListingPenalty is what a source listing loses, in BM25's units:
// a documentation tree's pages of highlighted source code (Sphinx's
// viewcode pages under _modules/) hold every name of the API, often
// many times, and came first for questions that the prose pages answer
// ("send email with an attachment": the mail module's source above the
// email guide). Sphinx leaves them out of its own search index; here
// they still match, below the prose. Chosen with make eval over five
// trees (BENCHMARKS.md, "Source listings and changelogs"): 1 to 100 gave the same
// figures but for a place or two in MRR; 4 moves a listing below the
// prose pages of about the same score, not below every hit.
const SearchListingPenalty = 4.0

// listingCodeShare is the share of a page's text and code, in bytes,
// that is code when the page is a source listing (SourceListing).
const listingCodeShare = 0.9

// SourceListing reports whether a page whose main text is textBytes
// long and whose code is codeBytes long is a source listing: code is at
// least listingCodeShare of the two.
func SourceListing(textBytes, codeBytes int) bool {
	return codeBytes > 0 && float64(codeBytes) >= listingCodeShare*float64(textBytes+codeBytes)
}

// SearchChangelogPenalty is what a changelog or a page of release notes
// loses, in BM25's units, unless the query asks for changes
// (ChangelogPenalty): it names every feature of every version in a line
// or two, and came first for questions that the feature's own page
// answers ("check for broken links": Sphinx's changelog above its
// linkcheck builder). One unit, the title bonus's weight, moves it below
// pages of about its score. Chosen with make eval over seven trees
// (BENCHMARKS.md, "Source listings and changelogs"): 1, 2 and 4 gave
// the same P@1; without the exception for a query that asks for changes
// "what is new in python 3.11" lost its page.
const SearchChangelogPenalty = 1.0

// changeWords are the words of a query that asks for a changelog.
var changeWords = map[string]bool{"change": true, "changes": true, "changelog": true, "new": true, "news": true,
	"notes": true, "release": true, "releases": true, "version": true, "versions": true}

// ChangelogPenalty is what a changelog loses in a search for query:
// SearchChangelogPenalty, or 0 when a word of it asks for changes ("what
// is new", "release-notes", "changes in version 2"). Words are runs of
// letters and digits, case ignored, as the DynamoDB store's search
// splits them: both homes call this with the query as written.
func ChangelogPenalty(query string) float64 {
	for _, w := range strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if changeWords[strings.ToLower(w)] {
			return 0
		}
	}
	return SearchChangelogPenalty
}

// changelogTitle matches the titles documentation tools give their
// changelogs and release notes (Sphinx's "Changelog", Flask's "Changes
// — Flask Documentation", Django's "Django 3.2 release notes",
// Python's "What’s New In Python 3.11", SQLAlchemy's "1.4 Changelog"),
// in English only. "Changes" counts only as the whole title before the
// site's name: "Changes to the API" and "Tracking Session Changes with
// Events" are not changelogs.
var changelogTitle = regexp.MustCompile(`(?i)\b(changelog|change log|release notes|what['’]s new)\b|^changes\s*($|[—–|:(-])`)

// ChangelogTitle reports whether a page titled title is a changelog or
// release notes (changelogTitle).
func ChangelogTitle(title string) bool { return changelogTitle.MatchString(title) }

// WordRune reports whether r is part of a word, as the search indexes
// cut text into words (FTS5's unicode61 tokenizer; the DynamoDB store's
// own): letters and digits, and a combining mark inside a word. Both
// homes cut a query the same way, so "lru_cache" or "pl/pgsql" is two
// words in either, each of which finds a page.
func WordRune(r rune, inWord bool) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || inWord && unicode.Is(unicode.Mn, r)
}

// Words cuts s into words as WordRune has them.
func Words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !WordRune(r, true) })
}

// MaxQueryTerms bounds the words of a query that are searched.
const MaxQueryTerms = 16

// QueryCut reports whether a query has more words than are searched
// (MaxQueryTerms, common words left out first), as the CLI tells its
// user: words cut as both stores cut them (WordRune), each once.
func QueryCut(query string) bool {
	var all, kept int
	seen := map[string]bool{}
	for _, w := range Words(query) {
		w = strings.ToLower(w)
		if seen[w] {
			continue // both stores search a word once
		}
		seen[w] = true
		all++
		if !StopWord(w) {
			kept++
		}
	}
	if kept == 0 {
		kept = all
	}
	return kept > MaxQueryTerms
}

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
