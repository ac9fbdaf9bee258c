package parse

import (
	"testing"
	"unicode"
)

// TestLetterCounts: the ASCII shortcut counts as the Unicode tables do.
func TestLetterCounts(t *testing.T) {
	// The count by Unicode's tables alone, character by character.
	reference := func(text string) (letters, wide int) {
		for _, r := range []rune(text) {
			isWide := unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
			letters += map[bool]int{true: 1}[!isWide && unicode.IsLetter(r)]
			wide += map[bool]int{true: 1}[isWide]
		}
		return letters, wide
	}
	for _, text := range []string{
		"",
		"The quick brown fox, 42 times: @[`{ AZaz az}]",
		"\x00\x1f\x7f ~!\"#$%&'()*+,-./0123456789:;<=>?@[\\]^_`{|}",
		"Café déjà vu, naïve Ærø; Straße",
		"Ελληνικά и русский текст",
		"日本語のテキスト、カタカナ、한국어 텍스트 and English",
		"bad \xff\xfe bytes \xc3",
	} {
		gl, gw := letterCounts(text)
		wl, ww := reference(text)
		if gl != wl || gw != ww {
			t.Errorf("letterCounts(%q) = %d letters, %d wide; want %d, %d", text, gl, gw, wl, ww)
		}
	}
}
