package summarize

import (
	"strings"
	"unicode"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Tokens counts the tokens of a text pile for token_statistics: runs of
// letters and digits, lower-cased, 2 to 64 bytes long, over every field.
func Tokens(p crawl.TextPile) map[string]int {
	out := map[string]int{}
	for _, f := range []string{p.Text, p.SecondaryText, p.BigHeadlines, p.SmallHeadlines, p.CodeText, p.QuoteText} {
		for _, w := range strings.FieldsFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len(w) < 2 || len(w) > 64 {
				continue
			}
			out[strings.ToLower(w)]++
		}
	}
	return out
}
