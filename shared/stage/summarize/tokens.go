package summarize

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// MaxPileTokens bounds the distinct tokens counted in one text pile:
// past it, a token not yet seen in the pile is left out (those seen go
// on being counted). The largest page of eight documentation trees has
// 10,760; a page of random words had 825,000, each a new row of the
// token table, and wrote for more than a minute while the crawl waited
// (an exploratory test, 2026-11-30).
const MaxPileTokens = 50_000

// Tokens counts the tokens of a text pile for token_statistics: runs of
// letters, combining marks and digits, lower-cased and in Unicode NFC, 2
// to 64 bytes long, over every field, the first MaxPileTokens distinct
// ones.
//
// It scans ASCII a byte at a time: a token of ASCII letters and digits
// is already in NFC, and is lower-cased only if it has a capital. Only
// the rest is decoded and normalized. (Splitting with
// strings.FieldsFuncSeq, normalizing every word and copying every
// capitalized one, as this once did, took 1.5 times as long and 150
// times the allocations: BenchmarkTokens.) It runs on every page
// summarized.
func Tokens(p crawl.TextPile) map[string]int {
	out := map[string]int{}
	// A capitalized word is lower-cased once per spelling (the lowered
	// copy is kept by the spelling, itself a slice of the text): "The"
	// at the start of every sentence is not a copy each time.
	lowered := map[string]string{}
	for _, f := range []string{p.Text, p.SecondaryText, p.BigHeadlines, p.SmallHeadlines, p.CodeText, p.QuoteText} {
		for i := 0; i < len(f); {
			if n := separatorAt(f, i); n > 0 {
				i += n
				continue
			}
			start, ascii, upper := i, true, false
			for i < len(f) {
				if c := f[i]; c < utf8.RuneSelf {
					if !asciiWord(c) {
						break
					}
					upper = upper || 'A' <= c && c <= 'Z'
					i++
					continue
				}
				r, n := utf8.DecodeRuneInString(f[i:])
				if isSeparator(r) {
					break
				}
				ascii = false
				i += n
			}
			w := f[start:i]
			switch {
			case !ascii:
				w = norm.NFC.String(strings.ToLower(w))
			case upper:
				lw, ok := lowered[w]
				if !ok {
					lw = strings.ToLower(w)
					lowered[w] = lw
				}
				w = lw
			}
			if len(w) < 2 || len(w) > 64 {
				continue
			}
			if _, ok := out[w]; !ok && len(out) >= MaxPileTokens {
				continue
			}
			out[w]++
		}
	}
	return out
}

// separatorAt returns the length of the separator that starts f[i:], or
// 0 if a token starts there.
func separatorAt(f string, i int) int {
	if c := f[i]; c < utf8.RuneSelf {
		if asciiWord(c) {
			return 0
		}
		return 1
	}
	r, n := utf8.DecodeRuneInString(f[i:])
	if isSeparator(r) {
		return n
	}
	return 0
}

// asciiWord reports whether the ASCII byte c is part of a token: a
// letter or a digit (isSeparator's answer for ASCII).
func asciiWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isSeparator reports whether r ends a token. Combining marks do not:
// they are part of the letter before them (Devanagari and Thai vowel
// signs, a decomposed é).
func isSeparator(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
}
