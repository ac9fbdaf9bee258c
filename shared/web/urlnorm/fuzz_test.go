package urlnorm

import (
	"strings"
	"testing"

	wurl "github.com/nlnwa/whatwg-url/url"
)

// maxGrowth bounds an output's length by its input's: a byte of input
// becomes at most 9 bytes (an invalid byte is U+FFFD, escaped
// "%EF%BF%BD"), plus a fixed allowance for what a short input gains
// ("http://1" is "http://0.0.0.1/").
func maxGrowth(in int) int { return 9*in + 32 }

// checkOutput asserts what every normalized URL must satisfy.
func checkOutput(t *testing.T, in string, r Result) {
	t.Helper()
	if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
		t.Fatalf("%q gave %q, not an http(s) URL", in, r.URL)
	}
	if strings.Contains(r.URL, "#") {
		t.Fatalf("%q gave %q, with a fragment", in, r.URL)
	}
	if r.Host == "" || r.Host != strings.ToLower(r.Host) {
		t.Fatalf("%q gave host %q", in, r.Host)
	}
	if !r.HasFrag && r.Fragment != "" {
		t.Fatalf("%q gave fragment %q without HasFrag", in, r.Fragment)
	}
	again, err := Normalize(r.URL)
	if err != nil {
		t.Fatalf("%q gave %q, which does not normalize: %v", in, r.URL, err)
	}
	if again.URL != r.URL || again.Host != r.Host {
		t.Fatalf("not idempotent: %q -> %q (%s) -> %q (%s)", in, r.URL, r.Host, again.URL, again.Host)
	}
	u, err := wurl.Parse(r.URL)
	if err != nil || u.Href(false) != r.URL {
		t.Fatalf("%q gave %q, which the standard reads as %v (err %v)", in, r.URL, u, err)
	}
}

// FuzzNormalize checks that Normalize never panics, that its output is
// idempotent, parses back to itself under the standard, and is bounded in
// length. Seeds: testdata/fuzz/FuzzNormalize.
func FuzzNormalize(f *testing.F) {
	f.Add("HTTP://x:80/./a/../b?c#d")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Normalize(s)
		if err != nil {
			return
		}
		if len(r.URL) > maxGrowth(len(s)) {
			t.Fatalf("%d bytes in, %d out: %q", len(s), len(r.URL), r.URL)
		}
		checkOutput(t, s, r)
	})
}

// FuzzResolve checks that resolving never panics, gives what the
// package-level Resolve gives, leaves the base as it was, and yields
// idempotent output. Seeds: testdata/fuzz/FuzzResolve.
func FuzzResolve(f *testing.F) {
	f.Add("http://example.org/foo/bar", "../a?b#c")
	f.Fuzz(func(t *testing.T, base, ref string) {
		b, err := NewBase(base)
		if err != nil {
			return
		}
		before := b.String()
		r, err := b.Resolve(ref)
		if after := b.String(); after != before {
			t.Fatalf("resolving %q changed the base from %q to %q", ref, before, after)
		}
		r2, err2 := Resolve(base, ref)
		if r != r2 || (err == nil) != (err2 == nil) {
			t.Fatalf("Base.Resolve = %+v, %v; Resolve = %+v, %v", r, err, r2, err2)
		}
		if err != nil {
			return
		}
		if len(r.URL) > maxGrowth(len(base)+len(ref)) {
			t.Fatalf("%d bytes in, %d out: %q", len(base)+len(ref), len(r.URL), r.URL)
		}
		checkOutput(t, ref, r)
	})
}

// FuzzResolveCached checks the cross-page cache (cache.go): a reference
// resolved against one base and then against another base of the same
// directory, through the cache, gives what the parser gives each time.
// The second base is the first's directory followed by last. Seeds:
// testdata/fuzz/FuzzResolveCached.
func FuzzResolveCached(f *testing.F) {
	f.Add("http://example.org/a/b?q#f", "c?r", "../x")
	f.Add("https://example.org/a/b", "c", "?y")
	f.Fuzz(func(t *testing.T, base, last, ref string) {
		a, err := NewBase(base)
		if err != nil || a.dir == "" {
			return
		}
		b, err := NewBase(a.dir + last)
		if err != nil {
			return
		}
		for _, x := range []*Base{a, b} {
			got, gerr := x.Resolve(ref)
			want, werr := x.resolve(ref)
			if got != want || (gerr == nil) != (werr == nil) {
				t.Fatalf("against %q, %q resolved through the cache to %+v, %v; the parser gives %+v, %v",
					x.String(), ref, got, gerr, want, werr)
			}
		}
	})
}
