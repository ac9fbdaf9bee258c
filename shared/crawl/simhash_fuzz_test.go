package crawl

import (
	"hash/fnv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// simHashPlain is SimHash written the plain way: split into words, hash
// each lower-cased word with FNV-1a, and count each feature's bits one
// by one. SimHash must give the same fingerprint for any text.
func simHashPlain(p TextPile) (uint64, bool) {
	var hashes []uint64
	for _, field := range []string{p.BigHeadlines, p.SmallHeadlines, p.Text, p.CodeText, p.QuoteText} {
		for _, w := range strings.FieldsFunc(field, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New64a()
			for _, r := range w {
				h.Write(utf8.AppendRune(nil, unicode.ToLower(r)))
			}
			hashes = append(hashes, h.Sum64())
		}
	}
	if len(hashes) < MinSimHashWords {
		return 0, false
	}
	var ones [64]int
	features := 0
	for i := 2; i < len(hashes); i++ {
		f := shingleHash([3]uint64{hashes[i-2], hashes[i-1], hashes[i]})
		for b := range ones {
			ones[b] += int(f >> b & 1)
		}
		features++
	}
	var h uint64
	for b, n := range ones {
		if 2*n > features {
			h |= 1 << b
		}
	}
	return h, true
}

// FuzzSimHash: SimHash, which reads every page's text, gives the plain
// computation's fingerprint on any input, valid UTF-8 or not.
func FuzzSimHash(f *testing.F) {
	f.Add("Heading", prose(1, 60), "x := 1", "")
	f.Add("", prose(2, 300), "", "quoted words here")
	f.Add("Überschrift", strings.Repeat("Straße ΑΒΓ émigré 日本語 ", 40), "", "")
	f.Add("", strings.Repeat("a\xffb\xc3 word9 ", 80), "", "")
	f.Fuzz(func(t *testing.T, head, text, code, quote string) {
		p := TextPile{BigHeadlines: head, Text: text, CodeText: code, QuoteText: quote}
		got, gotOK := p.SimHash()
		want, wantOK := simHashPlain(p)
		if got != want || gotOK != wantOK {
			t.Errorf("SimHash = %016x, %v; the plain computation gives %016x, %v", got, gotOK, want, wantOK)
		}
	})
}
