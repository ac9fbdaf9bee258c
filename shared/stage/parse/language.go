package parse

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/abadojack/whatlanggo"
	"golang.org/x/text/language"
)

// Detection needs this much text: letters for scripts written with
// spaces between words, or characters for Han, kana and Hangul, which
// carry about a syllable or a word each. Below it the detector guesses
// (it reads "Home About Contact Blog" as French, "reliably").
const (
	minDetectLetters = 60
	minDetectWide    = 20
)

// detectSample is how much of a page's text the detector reads: 2 KiB,
// because whatlanggo grows less sure with more text, not more. It ranks
// every distinct trigram of what it reads against profiles of 300, and
// scores against a fixed maximum distance (300 x 300), so past a few
// KiB of varied text its confidence turns negative and it reports
// itself unreliable. Over the pages of two documentation trees
// (BenchmarkDetectLanguage) it gave no language for 233 of Python's 530
// and 173 of PostgreSQL's 1,169 at 16 KiB, and for 31 and 18 at 2 KiB.
// It was also the detector's cost: 2.85 ms a page at 16 KiB on
// PostgreSQL's pages, a third of that crawl's CPU (BENCHMARKS.md, "A
// tree of short pages").
const detectSample = 2 << 10

// language returns the page's primary language subtag: from <html lang>
// (or <meta http-equiv="Content-Language">), else from the
// Content-Language header, else detected from the page's own text; ""
// when none of them tells.
func (e *extractor) language(contentLanguage string) string {
	if l := languageTag(e.lang); l != "" {
		return l
	}
	if l := languageTag(strings.Split(contentLanguage, ",")[0]); l != "" {
		return l
	}
	p := e.doc.Text
	// Each part cut to the sample first: a huge page's text is not copied.
	return detectLanguage(sample(p.BigHeadlines) + "\n" + sample(p.SmallHeadlines) + "\n" + sample(p.Text))
}

// languageTag reduces a language tag to its IANA primary language subtag
// ("en-US" -> "en"), or "" when it is not a valid tag.
func languageTag(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	t, err := language.Parse(s)
	if err != nil {
		return ""
	}
	b, conf := t.Base()
	if conf == language.No || b.String() == "und" {
		return ""
	}
	return b.String()
}

// sample is the start of text the detector reads: at most detectSample
// bytes, cut at a character boundary.
func sample(text string) string {
	if len(text) <= detectSample {
		return text
	}
	cut := detectSample
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// detectLanguage returns the ISO 639-1 code of the language text is
// written in, or "" when the text is too short, the detector is not
// sure, or the language has no two-letter code.
func detectLanguage(text string) string {
	text = sample(text)
	letters, wide := letterCounts(text)
	if letters < minDetectLetters && wide < minDetectWide {
		return ""
	}
	if wide < minDetectWide && plainlyEnglish(text) {
		return "en"
	}
	info := whatlanggo.Detect(text)
	if !info.IsReliable() {
		return ""
	}
	return languageTag(info.Lang.Iso6391())
}

// letterCounts counts text's Han, kana and Hangul characters (wide) and
// its other letters.
func letterCounts(text string) (letters, wide int) {
	for _, r := range text {
		if r < utf8.RuneSelf {
			// ASCII, most of most pages: a letter is a-z or A-Z, without
			// the Unicode table lookups below (more than half of the
			// detector's time on the PostgreSQL tree).
			if l := r | 0x20; 'a' <= l && l <= 'z' {
				letters++
			}
			continue
		}
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			wide++
		case unicode.IsLetter(r):
			letters++
		}
	}
	return letters, wide
}

// englishWords are common English words that other languages written in
// Latin letters rarely use: in English prose they are about a fifth of
// the words; in the translated pages of the Apache HTTP Server manual
// (German, Spanish, French, Portuguese, Turkish, Danish) at most 6%.
var englishWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("the and of that for with this are be was from which have not it by as you can will or an") {
		englishWords[w] = true
	}
}

// Past minEnglishWords words, text is plainly English when at least
// minEnglishShare of them are englishWords.
const (
	minEnglishWords = 30
	minEnglishShare = 0.12
)

// plainlyEnglish reports whether text is English beyond doubt, by its
// share of common English words. It is written here, not taken from a
// library, because whatlanggo takes about 2 ms a page, most of the
// detection's cost on a tree of short pages with no <html lang>, and
// this takes a few hundredths of that. It is only a shortcut to the
// answer whatlanggo gives: over the pages of the Python and PostgreSQL
// documentation and of the Apache HTTP Server manual in eleven languages
// (4,384 pages; BenchmarkDetectLanguage with CRAWLER_LANG_TREES) it took
// 3,538, and whatlanggo called every one of them English with
// confidence (BENCHMARKS.md, "A tree of short pages"). Text with Han,
// kana or Hangul in it is never taken here (detectLanguage): those are
// not split into words by spaces, so the English words of its code
// would be most of its words.
func plainlyEnglish(text string) bool {
	words, common := 0, 0
	for w := range strings.FieldsFuncSeq(text, func(r rune) bool { return !unicode.IsLetter(r) }) {
		words++
		if len(w) <= 5 && englishWords[strings.ToLower(w)] {
			common++
		}
	}
	return words >= minEnglishWords && float64(common) >= minEnglishShare*float64(words)
}
