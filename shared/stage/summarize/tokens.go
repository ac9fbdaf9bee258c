package summarize

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Tokens counts the tokens of a text pile for token_statistics: runs of
// letters, combining marks and digits, lower-cased and in Unicode NFC, 2
// to 64 bytes long, over every field.
func Tokens(p crawl.TextPile) map[string]int {
	out := map[string]int{}
	for _, f := range []string{p.Text, p.SecondaryText, p.BigHeadlines, p.SmallHeadlines, p.CodeText, p.QuoteText} {
		for w := range strings.FieldsFuncSeq(f, isSeparator) {
			w = norm.NFC.String(strings.ToLower(w))
			if len(w) < 2 || len(w) > 64 {
				continue
			}
			out[w]++
		}
	}
	return out
}

// isSeparator reports whether r ends a token. Combining marks do not:
// they are part of the letter before them (Devanagari and Thai vowel
// signs, a decomposed é).
func isSeparator(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}
