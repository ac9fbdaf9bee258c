package warc

import (
	"context"
	"sync"
)

// ReadAhead is a Packer that reads the records a batch is about to ask
// for before its handlers start, the records of one file together
// (ReadRefs: one ranged GET for a batch's bodies where each handler's
// Get was one), and hands each to the first Get of its key. Keys it did
// not read ahead, or could not, are read as they come.
type ReadAhead struct {
	*Packer
	// MaxBytes bounds the records read ahead for one batch, in bytes as
	// stored (compressed: a batch's bodies wait decompressed until their
	// handlers take them, before the parser's own bound on the bodies it
	// parses at once, crawl.ParseRoom); the records past it are read as
	// they are asked for. What a batch's handlers did not ask for is
	// dropped by the next batch's Prefetch.
	MaxBytes int64

	mu    sync.Mutex
	ready map[string][]byte
}

// aheadGap is the most bytes between two records that Prefetch reads
// through: the request record between two responses of a fetcher's
// file, not other bodies.
const aheadGap = 16 << 10

// NewReadAhead returns a ReadAhead over p reading at most maxBytes of
// records (as stored: compressed) ahead for a batch.
func NewReadAhead(p *Packer, maxBytes int64) *ReadAhead {
	return &ReadAhead{Packer: p, MaxBytes: maxBytes}
}

// Prefetch reads the records that keys name (other keys are left to
// Get), up to MaxBytes of them, and drops whatever the batch before left
// unasked. A record it cannot read is left to Get too, which then fails
// or succeeds on its own.
func (r *ReadAhead) Prefetch(ctx context.Context, keys []string) {
	var refs []Ref
	var names []string
	budget := r.MaxBytes
	for _, k := range keys {
		ref, ok := ParseRef(k)
		if !ok || ref.Span.Length > budget {
			continue
		}
		budget -= ref.Span.Length
		refs, names = append(refs, ref), append(names, k)
	}
	ready := make(map[string][]byte, len(refs))
	if len(refs) > 1 {
		// Through gaps of at most aheadGap: what is read stays near
		// the budget (a run of n records reads at most n-1 gaps more).
		payloads, errs := readRefs(ctx, r.objects, refs, aheadGap)
		for i, k := range names {
			if errs == nil || errs[i] == nil {
				ready[k] = payloads[i]
			}
		}
	}
	r.mu.Lock()
	r.ready = ready
	r.mu.Unlock()
}

// Get returns the record read ahead for key, once, or reads it as
// Packer.Get does.
func (r *ReadAhead) Get(ctx context.Context, key string) ([]byte, error) {
	r.mu.Lock()
	b, ok := r.ready[key]
	delete(r.ready, key)
	r.mu.Unlock()
	if ok {
		return b, nil
	}
	return r.Packer.Get(ctx, key)
}
