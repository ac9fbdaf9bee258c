package summarize

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		pile crawl.TextPile
		want map[string]int
	}{
		{"empty pile", crawl.TextPile{}, map[string]int{}},
		{"lower-cased and counted", crawl.TextPile{Text: "The lamp. THE Lamp, the lamp!"},
			map[string]int{"the": 3, "lamp": 3}},
		{"punctuation, underscores and hyphens split", crawl.TextPile{Text: "lamp_on x-ray (2024) e-mail:keeper"},
			map[string]int{"lamp": 1, "on": 1, "ray": 1, "2024": 1, "mail": 1, "keeper": 1}},
		{"one-byte tokens are dropped", crawl.TextPile{Text: "a I 7 x9 ok"},
			map[string]int{"x9": 1, "ok": 1}},
		{"64 bytes is the longest token", crawl.TextPile{Text: strings.Repeat("a", 64) + " " + strings.Repeat("b", 65)},
			map[string]int{strings.Repeat("a", 64): 1}},
		{"every field counts", crawl.TextPile{Text: "lamp", SecondaryText: "lamp home", BigHeadlines: "Lamp",
			SmallHeadlines: "lamp", CodeText: "lamp.on()", QuoteText: "keep the lamp"},
			map[string]int{"lamp": 6, "home": 1, "on": 1, "keep": 1, "the": 1}},
		{"letters beyond ASCII", crawl.TextPile{Text: "Café CRÈME über Straße"},
			map[string]int{"café": 1, "crème": 1, "über": 1, "straße": 1}},
		{"a decomposed accent is the same token as a composed one", crawl.TextPile{Text: "cafe\u0301 café"},
			map[string]int{"café": 2}},
		{"combining vowel signs stay in their word", crawl.TextPile{Text: "नमस्ते दुनिया"},
			map[string]int{"नमस्ते": 1, "दुनिया": 1}},
		{"scripts without spaces are one run up to punctuation", crawl.TextPile{Text: "灯台の案内。灯台"},
			map[string]int{"灯台の案内": 1, "灯台": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokens(tt.pile); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Tokens = %v, want %v", got, tt.want)
			}
		})
	}
}

// tokensPlain is Tokens written the plain way: split into words, then
// lower-case and normalize each. Tokens must count the same for any text.
func tokensPlain(p crawl.TextPile) map[string]int {
	out := map[string]int{}
	for _, f := range []string{p.Text, p.SecondaryText, p.BigHeadlines, p.SmallHeadlines, p.CodeText, p.QuoteText} {
		for _, w := range strings.FieldsFunc(f, isSeparator) {
			w = norm.NFC.String(strings.ToLower(w))
			if len(w) >= 2 && len(w) <= 64 {
				out[w]++
			}
		}
	}
	return out
}

// FuzzTokens: Tokens, which reads every page's text, counts what the
// plain computation counts on any input, valid UTF-8 or not.
func FuzzTokens(f *testing.F) {
	f.Add("The lamp. THE Lamp, the lamp!", "home", "x := Lamp_on(2024)")
	f.Add("Café CRÈME über Straße cafe\u0301", "नमस्ते दुनिया", "灯台の案内。灯台")
	f.Add("a\xffb\xc3 ÀB\u0300C İstanbul ǅ", "K\u212a", strings.Repeat("x", 70))
	f.Fuzz(func(t *testing.T, text, secondary, code string) {
		p := crawl.TextPile{Text: text, SecondaryText: secondary, CodeText: code}
		if got, want := Tokens(p), tokensPlain(p); !reflect.DeepEqual(got, want) {
			t.Errorf("Tokens = %v; the plain computation gives %v", got, want)
		}
	})
}

// BenchmarkTokens: a long reference page, most of it ASCII prose.
func BenchmarkTokens(b *testing.B) {
	para := "The Lamp keeper's log, 2024: every lighthouse (and its Fresnel lens) is checked; café crème at dawn. "
	p := crawl.TextPile{Text: strings.Repeat(para, 600), BigHeadlines: "Lighthouses and Lamps", CodeText: strings.Repeat("lamp.on(x_1) ", 200)}
	b.SetBytes(int64(len(p.Text) + len(p.CodeText)))
	for b.Loop() {
		Tokens(p)
	}
}

// TestTokensBounded: past MaxPileTokens distinct tokens, new ones are
// left out and those already seen are still counted.
func TestTokensBounded(t *testing.T) {
	var b strings.Builder
	for i := range MaxPileTokens + 100 {
		fmt.Fprintf(&b, "w%d ", i)
	}
	b.WriteString("w0 w1 late")
	got := Tokens(crawl.TextPile{Text: b.String()})
	if len(got) != MaxPileTokens {
		t.Errorf("%d distinct tokens, want %d", len(got), MaxPileTokens)
	}
	if got["w0"] != 2 || got["w1"] != 2 {
		t.Errorf("w0 %d and w1 %d times, want 2 each: tokens seen are counted past the bound", got["w0"], got["w1"])
	}
	if _, ok := got["late"]; ok {
		t.Error("a new token past the bound was counted")
	}
}
