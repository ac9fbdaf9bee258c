package crawl

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// prose returns n words of deterministic pseudo-English from seed.
func prose(seed uint64, n int) string {
	vocab := strings.Fields(`the a crawler fetches pages from each host politely and keeps their text
		in piles while links go to the frontier queue where a scheduler orders them by due time priority
		robots rules say which paths are allowed sitemaps list urls with dates summaries record what changed`)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w := make([]string, n)
	for i := range w {
		w[i] = vocab[r.IntN(len(vocab))]
	}
	return strings.Join(w, " ")
}

func TestSimHash(t *testing.T) {
	base := prose(1, 400)
	words := strings.Fields(base)
	tests := []struct {
		name    string
		a, b    TextPile
		near    bool
		maxDist int // when near; else the least distance expected
	}{
		{"the same text", TextPile{Text: base}, TextPile{Text: base}, true, 0},
		{"other chrome, same content", TextPile{Text: base, SecondaryText: "Home | About"},
			TextPile{Text: base, SecondaryText: prose(9, 300)}, true, 0},
		{"case and punctuation", TextPile{Text: base}, TextPile{Text: strings.ToUpper(base) + "!"}, true, 0},
		{"unrelated texts", TextPile{Text: base}, TextPile{Text: prose(2, 400)}, false, 10},
		{"half the text replaced", TextPile{Text: base},
			TextPile{Text: strings.Join(words[:200], " ") + " " + prose(3, 200)}, false, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ha, oka := tt.a.SimHash()
			hb, okb := tt.b.SimHash()
			if !oka || !okb {
				t.Fatalf("SimHash ok = %v, %v; want both", oka, okb)
			}
			d := bits.OnesCount64(ha ^ hb)
			if Near(ha, hb) != tt.near {
				t.Errorf("Near = %v (distance %d), want %v", !tt.near, d, tt.near)
			}
			if tt.near && d > tt.maxDist {
				t.Errorf("distance %d, want at most %d", d, tt.maxDist)
			}
			if !tt.near && d < tt.maxDist {
				t.Errorf("distance %d, want at least %d", d, tt.maxDist)
			}
		})
	}
}

// TestSimHashSmallEdits: one word changed in a page of 2,000 words
// leaves most fingerprints within NearDistance (SimHash is a sketch: a
// feature near a bit's balance can flip it), and unrelated pages are
// never near.
func TestSimHashSmallEdits(t *testing.T) {
	const pages, words = 40, 2000
	near, closest := 0, 64
	for s := range uint64(pages) {
		w := strings.Fields(prose(s, words))
		a, _ := TextPile{Text: strings.Join(w, " ")}.SimHash()
		w[int(s*37)%words] = "edited"
		b, _ := TextPile{Text: strings.Join(w, " ")}.SimHash()
		if Near(a, b) {
			near++
		}
		o, _ := TextPile{Text: prose(s+1000, words)}.SimHash()
		closest = min(closest, bits.OnesCount64(a^o))
	}
	if near < pages*8/10 {
		t.Errorf("%d of %d pages with one word changed are near their original, want at least 80%%", near, pages)
	}
	if closest <= 2*NearDistance {
		t.Errorf("two unrelated pages are %d bits apart, want more than %d", closest, 2*NearDistance)
	}
}

// TestSimHashWords: words are runs of letters and digits in any script,
// compared lower-cased.
func TestSimHashWords(t *testing.T) {
	base := prose(5, 300)
	a, _ := TextPile{Text: base + " Ünïcode ŒUVRE 42"}.SimHash()
	b, _ := TextPile{Text: base + " ünïcode,  œuvre—42"}.SimHash()
	c, _ := TextPile{Text: base + " unicode oeuvre 42"}.SimHash()
	if a != b {
		t.Errorf("case and separators changed the SimHash: %016x, %016x", a, b)
	}
	if a == c {
		t.Errorf("accented and plain words gave the same SimHash")
	}
}

func TestSimHashNeedsWords(t *testing.T) {
	for _, n := range []int{0, 3, MinSimHashWords - 1} {
		if _, ok := (TextPile{Text: prose(4, n), SecondaryText: prose(5, 500)}).SimHash(); ok {
			t.Errorf("%d words of content: SimHash ok, want none (chrome does not count)", n)
		}
	}
	if _, ok := (TextPile{Text: prose(4, MinSimHashWords)}).SimHash(); !ok {
		t.Errorf("%d words: no SimHash", MinSimHashWords)
	}
}

// TestSimHashFixed pins the fingerprint: it is stored, so a change to
// its features or hash would make old and new pages incomparable.
func TestSimHashFixed(t *testing.T) {
	h, _ := TextPile{Text: prose(1, 400)}.SimHash()
	if got, want := fmt.Sprintf("%016x", h), "a27f88998c577a41"; got != want {
		t.Errorf("SimHash = %s, want %s", got, want)
	}
}

// TestSimHashFixedLong pins fingerprints of texts long enough that the
// bit counts go through their byte lanes several times (255 features
// each), some with letters outside ASCII: the values are those of
// counting bit by bit, as SimHash once did.
func TestSimHashFixedLong(t *testing.T) {
	for _, tt := range []struct {
		p    TextPile
		want string
	}{
		{TextPile{Text: prose(2, 256)}, "5d00faa3822e5810"},
		{TextPile{Text: prose(3, 1000), BigHeadlines: "Überschrift und Straße"}, "3d525fae9b91d349"},
		{TextPile{Text: prose(4, 5000), CodeText: prose(5, 777)}, "7686bcd8cc80134c"},
		{TextPile{Text: strings.Repeat("ελληνικά κείμενα και λέξεις ", 300)}, "482c1015df443134"},
	} {
		h, ok := tt.p.SimHash()
		if got := fmt.Sprintf("%016x", h); !ok || got != tt.want {
			t.Errorf("SimHash of %.30q... = %s (%v), want %s", tt.p.Text, got, ok, tt.want)
		}
	}
}

func TestSimHashBandsFindEveryNearPair(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		a := r.Uint64()
		b := a
		for range r.IntN(NearDistance + 1) {
			b ^= 1 << r.IntN(64)
		}
		ba, bb := SimHashBands(a), SimHashBands(b)
		shared := false
		for i := range ba {
			shared = shared || ba[i] == bb[i]
		}
		if !shared {
			t.Fatalf("%016x and %016x (distance %d) share no band", a, b, bits.OnesCount64(a^b))
		}
	}
}

// BenchmarkSimHash: a page of about 10,000 words (a long reference page).
func BenchmarkSimHash(b *testing.B) {
	p := TextPile{Text: prose(1, 10000)}
	b.SetBytes(int64(len(p.Text)))
	for b.Loop() {
		p.SimHash()
	}
}
