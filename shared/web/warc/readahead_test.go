package warc

import (
	"context"
	"testing"

	"github.com/serverless-crawler/crawler/shared/testkit/memblob"
)

// TestReadAhead: a batch's records read with one ranged read a file,
// each handed once; a key not read ahead (not a record, over the
// budget, asked twice) read as it comes.
func TestReadAhead(t *testing.T) {
	ctx := context.Background()
	objs := &countingRanger{Store: &memblob.Store{}}
	p := NewPacker(objs, PackConfig{Prefix: "warc/"})
	keys, err := p.KeepResources(ctx, []Resource{
		{URI: "urn:test:0", ContentType: "text/plain", Data: []byte("zero")},
		{URI: "urn:test:1", ContentType: "text/plain", Data: []byte("one")},
		{URI: "urn:test:2", ContentType: "text/plain", Data: []byte("two")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := objs.Put(ctx, "plain/key", []byte("plain")); err != nil {
		t.Fatal(err)
	}
	r := NewReadAhead(p, 1<<20)
	r.Prefetch(ctx, []string{keys[2], keys[0], "plain/key", keys[1]})
	if n := objs.reads.Load(); n != 1 {
		t.Fatalf("%d ranged reads for three records of one file, want 1", n)
	}
	for i, want := range []string{"zero", "one", "two"} {
		if got, err := r.Get(ctx, keys[i]); err != nil || string(got) != want {
			t.Errorf("record %d: %q, %v", i, got, err)
		}
	}
	if got, err := r.Get(ctx, "plain/key"); err != nil || string(got) != "plain" {
		t.Errorf("plain key: %q, %v", got, err)
	}
	if n := objs.reads.Load(); n != 1 {
		t.Errorf("%d ranged reads after the batch's Gets, want 1", n)
	}
	// Handed once: asked again, read again.
	if got, err := r.Get(ctx, keys[0]); err != nil || string(got) != "zero" || objs.reads.Load() != 2 {
		t.Errorf("record 0 again: %q, %v, %d reads", got, err, objs.reads.Load())
	}
	// Over the budget: nothing read ahead.
	small := NewReadAhead(p, 10)
	small.Prefetch(ctx, keys)
	if n := objs.reads.Load(); n != 2 {
		t.Errorf("%d ranged reads with a budget of 10 bytes, want none more", n)
	}
}
