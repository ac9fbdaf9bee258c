package warc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/testkit/memblob"
	"github.com/serverless-crawler/crawler/shared/testkit/warcio"
)

func page(i int) Exchange {
	return Exchange{URL: fmt.Sprintf("http://example.com/%d", i), Date: at, Status: 200,
		Response: http.Header{"Content-Type": {"text/html"}}, Body: []byte(strings.Repeat(fmt.Sprintf("<p>page %d</p>", i), 50))}
}

// keepAll runs n handlers between Enter and Leave, each keeping one page
// (or none, for those in skip), and returns their keys.
// enterAll enters n handlers before any of them starts: were each to
// enter in its own loop turn, the first could keep its record while it
// was the only one in, and the file would be written without the rest.
func enterAll(p *Packer, n int) {
	for range n {
		p.Enter()
	}
}

func keepAll(t *testing.T, p *Packer, n int, skip map[int]bool) []string {
	t.Helper()
	keys := make([]string, n)
	var wg sync.WaitGroup
	enterAll(p, n)
	for i := range n {
		wg.Go(func() {
			defer p.Leave()
			if skip[i] {
				time.Sleep(20 * time.Millisecond) // a 304, a failure: no body
				return
			}
			k, err := p.Keep(context.Background(), page(i))
			if err != nil {
				t.Errorf("keep %d: %v", i, err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	return keys
}

// TestPackerBatches: the handlers working at once share one file, written
// when the last of them waits or leaves; every key reads its body back.
func TestPackerBatches(t *testing.T) {
	objs := &memblob.Store{}
	// MaxWait an hour: the file is written because every handler
	// waits or has left, not by time.
	p := NewPacker(objs, PackConfig{Prefix: "warc/", Software: "test", MaxWait: time.Hour})
	keys := keepAll(t, p, 10, map[int]bool{3: true, 7: true})
	if objs.Puts() != 1 || len(objs.Objects()) != 1 {
		t.Fatalf("%d PUTs, %d files for 8 bodies kept at once; want 1", objs.Puts(), len(objs.Objects()))
	}
	for i, k := range keys {
		if i == 3 || i == 7 {
			continue
		}
		ref, ok := ParseRef(k)
		if !ok || !strings.HasPrefix(ref.Object, "warc/") {
			t.Fatalf("key %q is not a ref into a warc/ file", k)
		}
		got, err := p.Get(context.Background(), k)
		if err != nil || !bytes.Equal(got, page(i).Body) {
			t.Errorf("Get(%q): %d bytes, %v", k, len(got), err)
		}
	}
	// Outside Enter and Leave, a body is written at once.
	if _, err := p.Keep(context.Background(), page(99)); err != nil || objs.Puts() != 2 {
		t.Errorf("a lone Keep: %v, %d PUTs; want its own", err, objs.Puts())
	}
}

// TestPackerBounds: a file is written once it holds MaxBytes, or MaxWait
// after its first body, whoever else is still working.
func TestPackerBounds(t *testing.T) {
	objs := &memblob.Store{}
	p := NewPacker(objs, PackConfig{Prefix: "warc/", MaxBytes: 1 << 10, MaxWait: time.Hour})
	keepAll(t, p, 6, nil)
	if objs.Puts() < 3 {
		t.Errorf("%d PUTs for six bodies with MaxBytes 1 KiB, want a file written whenever it holds 1 KiB", objs.Puts())
	}

	objs = &memblob.Store{}
	p = NewPacker(objs, PackConfig{Prefix: "warc/", MaxWait: 50 * time.Millisecond})
	p.Enter() // a handler still fetching
	start := time.Now()
	if _, err := p.Keep(context.Background(), page(1)); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); objs.Puts() != 1 || waited > 5*time.Second {
		t.Errorf("with a peer still working: %d PUTs after %v; want the file written after MaxWait", objs.Puts(), waited)
	}
	p.Leave()
}

// TestPackerFailure: when the file cannot be written, every body in it
// is refused (its crawl is not recorded, and is fetched again), and the
// next file is tried anew.
func TestPackerFailure(t *testing.T) {
	objs := &memblob.Store{}
	objs.FailPuts(errors.New("S3 is down"))
	p := NewPacker(objs, PackConfig{Prefix: "warc/"})
	var wg sync.WaitGroup
	errs := make([]error, 4)
	enterAll(p, len(errs))
	for i := range errs {
		wg.Go(func() {
			defer p.Leave()
			_, errs[i] = p.Keep(context.Background(), page(i))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "S3 is down") {
			t.Errorf("keep %d: %v, want the PUT's error", i, err)
		}
	}
	objs.FailPuts(nil)
	if k, err := p.Keep(context.Background(), page(5)); err != nil {
		t.Errorf("after the failure: %v", err)
	} else if _, err := p.Get(context.Background(), k); err != nil {
		t.Errorf("after the failure: %v", err)
	}
}

func TestParseRef(t *testing.T) {
	for key, ok := range map[string]bool{
		"warc/2026/11/25/x.warc.gz#0,100": true,
		"warc/2026/11/25/x.warc.gz#12,1":  true,
		"warc/2026/11/25/x.warc#12,1":     true,
		"raw/ab/cdef":                     false,
		"doc/c1.json":                     false,
		"warc/x.warc.gz#-1,5":             false,
		"warc/x.warc.gz#5,0":              false,
		"warc/x.warc.gz#5":                false,
		"warc/x.txt#0,5":                  false,
		"warc/x.warc.gz#a,b":              false,
	} {
		ref, got := ParseRef(key)
		if got != ok {
			t.Errorf("ParseRef(%q) ok = %v, want %v", key, got, ok)
		}
		if ok && ref.String() != key {
			t.Errorf("ParseRef(%q).String() = %q", key, ref.String())
		}
	}
}

// TestPackReadByWarcio: a packed file is a WARC file warcio reads whole.
func TestPackReadByWarcio(t *testing.T) {
	bin := warcio.Bin(t)
	objs := &memblob.Store{}
	p := NewPacker(objs, PackConfig{Prefix: "warc/", Software: "test"})
	keepAll(t, p, 5, nil)
	for key, data := range objs.Objects() {
		path := filepath.Join(t.TempDir(), filepath.Base(key))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		warcio.Check(t, bin, path)
		if recs := warcio.Records(t, bin, path); len(recs) != 11 {
			t.Errorf("warcio read %d records, want a warcinfo and 5 responses and requests", len(recs))
		}
	}
}

// TestPackerResources: records of the crawler's own (text piles) share
// the files with bodies and read back as they were kept.
func TestPackerResources(t *testing.T) {
	objs := &memblob.Store{}
	p := NewPacker(objs, PackConfig{Prefix: "warc/", MaxWait: time.Hour})
	data := []byte(`{"text":"lamps and lighthouses"}`)
	keys := make([]string, 3)
	var wg sync.WaitGroup
	enterAll(p, len(keys))
	for i := range keys {
		wg.Go(func() {
			defer p.Leave()
			var err error
			if i == 0 {
				keys[i], err = p.Keep(context.Background(), page(i))
			} else {
				keys[i], err = p.KeepResource(context.Background(), fmt.Sprintf("urn:test:pile:%d", i), "application/json", data)
			}
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if objs.Puts() != 1 {
		t.Errorf("%d PUTs, want the three records in one file", objs.Puts())
	}
	for i, k := range keys[1:] {
		if got, err := p.Get(context.Background(), k); err != nil || !bytes.Equal(got, data) {
			t.Errorf("resource %d: %q, %v", i+1, got, err)
		}
	}
	if bin := os.Getenv("CRAWLER_TEST_PYTOOLS"); bin != "" {
		for key, file := range objs.Objects() {
			path := filepath.Join(t.TempDir(), filepath.Base(key))
			os.WriteFile(path, file, 0o644)
			warcio.Check(t, bin, path)
		}
	}
}

// TestPackerKeepResources: several records kept at once share the file
// of the batch, read back in order, one PUT for all.
func TestPackerKeepResources(t *testing.T) {
	objs := &memblob.Store{}
	p := NewPacker(objs, PackConfig{Prefix: "warc/", MaxWait: time.Hour})
	const handlers = 3
	keys := make([][]string, handlers)
	var wg sync.WaitGroup
	enterAll(p, handlers)
	for i := range handlers {
		wg.Go(func() {
			defer p.Leave()
			var err error
			keys[i], err = p.KeepResources(context.Background(), []Resource{
				{URI: fmt.Sprintf("urn:test:pile:%d", i), ContentType: "application/json", Data: fmt.Appendf(nil, `{"pile":%d}`, i)},
				{URI: fmt.Sprintf("urn:test:links:%d", i), ContentType: "application/gzip", Data: fmt.Appendf(nil, "links %d", i)},
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if objs.Puts() != 1 {
		t.Errorf("%d PUTs, want the six records in one file", objs.Puts())
	}
	for i, ks := range keys {
		if len(ks) != 2 {
			t.Fatalf("handler %d: keys %q", i, ks)
		}
		for j, want := range []string{fmt.Sprintf(`{"pile":%d}`, i), fmt.Sprintf("links %d", i)} {
			if got, err := p.Get(context.Background(), ks[j]); err != nil || string(got) != want {
				t.Errorf("handler %d record %d at %s: %q, %v; want %q", i, j, ks[j], got, err, want)
			}
		}
	}
	if keys, err := p.KeepResources(context.Background(), nil); err != nil || keys != nil {
		t.Errorf("KeepResources(nil) = %q, %v", keys, err)
	}
}
