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

// detectSample is how much of a page's text the detector reads: a few
// pages of prose tell the language as well as the whole, and the
// detector allocates about 45 times what it reads (1.8 GB for a 40 MB
// page).
const detectSample = 16 << 10

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
	letters, wide := 0, 0
	for _, r := range text {
		switch {
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
			wide++
		case unicode.IsLetter(r):
			letters++
		}
	}
	if letters < minDetectLetters && wide < minDetectWide {
		return ""
	}
	info := whatlanggo.Detect(text)
	if !info.IsReliable() {
		return ""
	}
	return languageTag(info.Lang.Iso6391())
}
