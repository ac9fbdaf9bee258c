package contract

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// longPile is a text pile of n words drawn from seed, long enough for
// a SimHash; edit changes one word of it.
func longPile(seed, n int, edit bool) *crawl.TextPile {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", r.IntN(5000))
	}
	if edit {
		w[n/2] = "edited"
	}
	return TextPile(strings.Join(w, " "))
}

// nearGen is TextGen with the pile's SimHash, as the summarizer makes it.
func nearGen(t *testing.T, u string, at int64, p *crawl.TextPile, title string) *crawl.NewGeneration {
	t.Helper()
	g := TextGen(u, at, p, title)
	h, ok := p.SimHash()
	if !ok {
		t.Fatalf("pile of %s has no SimHash", u)
	}
	g.SimHash = h
	return g
}

// nearDuplicates: FindNearOriginal finds another URL's open, indexable
// original within crawl.NearDistance of a SimHash, the earliest first;
// a near duplicate keeps its own text pile (it is found in its turn
// once its original closes) and is shown as a duplicate, not an exact
// one.
func nearDuplicates(t *testing.T, s Metadata) {
	const a, b, c, n = "http://example.com/a", "http://example.com/b", "http://example.com/c", "http://example.com/n"
	seen(t, s, a, b, c, n)
	pa, pb, far := longPile(1, 2000, false), longPile(1, 2000, true), longPile(2, 2000, false)
	ga := nearGen(t, a, 100, pa, "A")
	gb := nearGen(t, b, 110, pb, "B")
	if !crawl.Near(ga.SimHash, gb.SimHash) || crawl.Near(ga.SimHash, nearGen(t, c, 0, far, "").SimHash) {
		t.Fatal("fixture: the edited pile must be near, the other far")
	}
	find := func(h uint64, u string) crawl.Original {
		t.Helper()
		o, err := s.FindNearOriginal(t.Context(), h, u)
		if err != nil {
			t.Fatalf("FindNearOriginal(%016x, %s): %v", h, u, err)
		}
		return o
	}
	if o := find(ga.SimHash, b); o.ID != 0 {
		t.Fatalf("FindNearOriginal before any generation = %+v, want none", o)
	}
	// A noindex page is never an original.
	gn := nearGen(t, n, 90, longPile(1, 2000, false), "N")
	gn.NoIndex = true
	apply(t, s, SummaryUpdate(n, "cn", 90, crawl.GenerationReplace, 0, gn))
	apply(t, s, SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, ga))
	idA := openGen(t, s, a).Generation.ID
	if o := find(gb.SimHash, b); o.ID != idA || string(o.Digest) != string(pa.Digest) {
		t.Fatalf("FindNearOriginal(b's SimHash) = %d %x, want a's generation %d and its digest", o.ID, o.Digest, idA)
	}
	if o := find(gb.SimHash, a); o.ID != 0 {
		t.Errorf("FindNearOriginal from a's own URL = %d, want none", o.ID)
	}
	if o := find(^gb.SimHash, b); o.ID != 0 {
		t.Errorf("FindNearOriginal(a far SimHash) = %d, want none", o.ID)
	}

	gb.DuplicateOf, gb.Original, gb.Generation.MarkedDuplicate = idA, crawl.Original{ID: idA, Digest: pa.Digest}, true
	su := SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, gb)
	su.Crawl.ExitCode = crawl.ExitDuplicate
	apply(t, s, su)
	ob := openGen(t, s, b).Generation
	if !ob.MarkedDuplicate {
		t.Fatal("b's generation is not marked duplicate")
	}
	st := mustStatus(t, s, b)
	if st.Status != crawl.StatusDuplicate || st.ExactDuplicate || st.Generation.DuplicateOf != a {
		t.Errorf("status of the near copy: %q, exact-duplicate %v, of %q; want duplicate, not exact, of %s",
			st.Status, st.ExactDuplicate, st.Generation.DuplicateOf, a)
	}
	if o := find(gb.SimHash, c); o.ID != idA {
		t.Errorf("FindNearOriginal from c = %d, want the original %d, not its copy", o.ID, idA)
	}
	// a changes: b takes over as the original, and is found by its own
	// SimHash and text.
	apply(t, s, SummaryUpdate(a, "c3", 200, crawl.GenerationReplace, idA, nearGen(t, a, 200, far, "A2")))
	if o := find(gb.SimHash, c); o.ID != ob.ID || string(o.Digest) != string(pb.Digest) {
		t.Errorf("after a changed: FindNearOriginal = %d %x, want b's %d with b's digest", o.ID, o.Digest, ob.ID)
	}
	if id, err := s.FindOriginal(t.Context(), pb.Digest, c); err != nil || id != ob.ID {
		t.Errorf("after a changed: FindOriginal(b's text) = %d, %v; want %d", id, err, ob.ID)
	}
	hits, err := s.Search(t.Context(), "edited", 10)
	if err != nil || len(hits) != 1 || hits[0].URL != b {
		t.Errorf("Search(edited) = %v, %v; want b alone: its own text", hits, err)
	}
}

// nearAfterPromotion: an exact copy that takes over as the original
// when its original changes is found by SimHash in its turn.
func nearAfterPromotion(t *testing.T, s Metadata) {
	const a, c, x = "http://example.com/a", "http://example.com/c", "http://example.com/x"
	seen(t, s, a, c)
	pa := longPile(3, 400, false)
	ga := nearGen(t, a, 100, pa, "A")
	apply(t, s, SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, ga))
	idA := openGen(t, s, a).Generation.ID
	gc := nearGen(t, c, 110, pa, "C")
	gc.DuplicateOf, gc.Original, gc.Generation.MarkedDuplicate = idA, crawl.Original{ID: idA, Digest: pa.Digest}, true
	apply(t, s, SummaryUpdate(c, "c2", 110, crawl.GenerationReplace, 0, gc))
	idC := openGen(t, s, c).Generation.ID
	apply(t, s, SummaryUpdate(a, "c3", 200, crawl.GenerationReplace, idA, nearGen(t, a, 200, longPile(4, 400, false), "A2")))
	near := ga.SimHash // the same text, found from another URL
	o, err := s.FindNearOriginal(t.Context(), near, x)
	if err != nil || o.ID != idC {
		t.Errorf("FindNearOriginal after the copy took over = %+v, %v; want the copy %d", o, err, idC)
	}
}
