package warc

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/serverless-crawler/crawler/shared/testkit/memblob"
)

// countingRanger counts ranged reads.
type countingRanger struct {
	*memblob.Store
	reads atomic.Int32
}

func (c *countingRanger) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	c.reads.Add(1)
	return c.Store.GetRange(ctx, key, off, n)
}

// TestReadRefs: records of one file read with one ranged read, in the
// order asked whatever their order in the file; a record past MaxGap
// from the others read apart; a missing file an error for its records
// alone.
func TestReadRefs(t *testing.T) {
	ctx := context.Background()
	objs := &countingRanger{Store: &memblob.Store{}}
	p := NewPacker(objs.Store, PackConfig{Prefix: "warc/"})
	keep := func(data ...[]byte) []Ref {
		var rs []Resource
		for i, d := range data {
			rs = append(rs, Resource{URI: fmt.Sprintf("urn:test:%d", i), ContentType: "text/plain", Data: d})
		}
		keys, err := p.KeepResources(ctx, rs)
		if err != nil {
			t.Fatal(err)
		}
		refs := make([]Ref, len(keys))
		for i, k := range keys {
			var ok bool
			if refs[i], ok = ParseRef(k); !ok {
				t.Fatalf("key %q is no ref", k)
			}
		}
		return refs
	}
	// Random bytes do not compress: the big record keeps its size in
	// the gzipped file.
	big := make([]byte, MaxGap+1000)
	rand.NewChaCha8([32]byte{1}).Read(big)
	one := keep([]byte("a0"), []byte("a1"), []byte("a2"))
	two := keep([]byte("b0"), big, []byte("b2"))
	if one[0].Object == two[0].Object {
		t.Fatal("the two batches share a file")
	}
	missing := Ref{Object: "warc/gone.warc.gz", Span: Span{Offset: 0, Length: 10}}
	refs := []Ref{one[2], two[0], one[0], missing, two[2], one[1]}
	want := []string{"a2", "b0", "a0", "", "b2", "a1"}

	payloads, errs := ReadRefs(ctx, objs, refs)
	for i, w := range want {
		if string(payloads[i]) != w {
			t.Errorf("record %d: %q, want %q", i, payloads[i], w)
		}
		if failed := errs != nil && errs[i] != nil; failed != (w == "") {
			t.Errorf("record %d: error %v", i, errs[i])
		}
	}
	// One read for the first file, two for the second (its records are
	// more than MaxGap apart), one for the missing file.
	if n := objs.reads.Load(); n != 4 {
		t.Errorf("%d ranged reads, want 4", n)
	}
	if all, errs := ReadRefs(ctx, objs, two[:2]); errs != nil || !bytes.Equal(all[1], big) {
		t.Errorf("the big record: %d bytes, %v", len(all[1]), errs)
	}
}

// shortRanger answers every ranged read with one byte less.
type shortRanger struct{ *memblob.Store }

func (s shortRanger) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	b, err := s.Store.GetRange(ctx, key, off, n)
	if err != nil || len(b) == 0 {
		return b, err
	}
	return b[:len(b)-1], nil
}

// TestReadRefsShortRead: a store that answers a ranged read with fewer
// bytes than asked fails the run's records, rather than the reader
// cutting past the end of what came.
func TestReadRefsShortRead(t *testing.T) {
	ctx := context.Background()
	objs := &memblob.Store{}
	p := NewPacker(objs, PackConfig{Prefix: "warc/"})
	keys, err := p.KeepResources(ctx, []Resource{
		{URI: "urn:test:0", ContentType: "text/plain", Data: []byte("zero")},
		{URI: "urn:test:1", ContentType: "text/plain", Data: []byte("one")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var refs []Ref
	for _, k := range keys {
		ref, _ := ParseRef(k)
		refs = append(refs, ref)
	}
	payloads, errs := ReadRefs(ctx, shortRanger{objs}, refs)
	for i := range refs {
		if errs == nil || errs[i] == nil || payloads[i] != nil {
			t.Errorf("record %d: %q, %v; want an error", i, payloads[i], errs)
		}
	}
}
