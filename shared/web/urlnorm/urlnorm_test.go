package urlnorm

import (
	"errors"
	"testing"
)

// TestNormalize covers each written equivalence and the cases issues #17
// and #21 reported against the hand-written normalizer.
func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want, host string
	}{
		{"scheme and host case", "HTTP://Example.COM", "http://example.com/", "example.com"},
		{"default http port", "http://example.com:80/a", "http://example.com/a", "example.com"},
		{"default https port", "https://example.com:443/a", "https://example.com/a", "example.com"},
		{"other port kept", "https://example.com:8443/a", "https://example.com:8443/a", "example.com:8443"},
		{"default port with leading zeros", "HTTP://0:080", "http://0.0.0.0/", "0.0.0.0"},
		{"default port with more zeros", "http://127.0.0.1:00080/", "http://127.0.0.1/", "127.0.0.1"},
		{"port with leading zeros", "http://x:0081/", "http://x:81/", "x:81"},
		{"dot segments", "http://example.com/a/./b/../c", "http://example.com/a/c", "example.com"},
		{"dot segments above the root", "http://example.com/../../x", "http://example.com/x", "example.com"},
		{"escaped dot segments", "http://example.com/a/%2e%2E/b", "http://example.com/b", "example.com"},
		{"unreserved escapes decoded", "http://example.com/%7efoo/%41%62%2d%5F", "http://example.com/~foo/Ab-_", "example.com"},
		{"reserved escapes kept, hex upper-cased", "http://example.com/a%2fb%c3%a9%3f", "http://example.com/a%2Fb%C3%A9%3F", "example.com"},
		{"escapes kept beside a non-ASCII char", "http://example.com/a%2Fb/é", "http://example.com/a%2Fb/%C3%A9", "example.com"},
		{"escapes kept beside a space", "http://example.com/a%2Fb/c d", "http://example.com/a%2Fb/c%20d", "example.com"},
		{"query escapes", "http://example.com/p?q=%e2%82%ac&b=%7e%26", "http://example.com/p?q=%E2%82%AC&b=~%26", "example.com"},
		{"stray percent", "http://example.com/100%?a=%zz%2", "http://example.com/100%25?a=%25zz%252", "example.com"},
		{"fragment cut", "http://example.com/page#section", "http://example.com/page", "example.com"},
		{"IDNA", "http://bücher.example/", "http://xn--bcher-kva.example/", "xn--bcher-kva.example"},
		{"IDNA mapping", "http://ＥＸＡＭＰＬＥ.com/", "http://example.com/", "example.com"},
		{"escaped host", "https://example%2Ecom/", "https://example.com/", "example.com"},
		{"trailing dot kept", "http://EXAMPLE.com./x", "http://example.com./x", "example.com."},
		{"trailing dots kept", "http://example.com..", "http://example.com../", "example.com.."},
		{"C0 and space trimmed", "\x00 http://example.com/trim \x1f", "http://example.com/trim", "example.com"},
		{"tab and newline removed", "http://example.com/a\tb\nc", "http://example.com/abc", "example.com"},
		{"backslash in the path", `http://example.com\a\b`, "http://example.com/a/b", "example.com"},
		{"backslash in the query kept", `http://example.com/p?a\b`, `http://example.com/p?a\b`, "example.com"},
		{"IPv6", "http://[::1]:8080/", "http://[::1]:8080/", "[::1]:8080"},
		{"IPv4-mapped IPv6 stays IPv6", "http://[::ffff:127.0.0.1]/", "http://[::ffff:7f00:1]/", "[::ffff:7f00:1]"},
		{"IPv4 numbers", "http://0Xc0.0250.01/", "http://192.168.0.1/", "192.168.0.1"},
		{"space in path", "http://example.com/a b", "http://example.com/a%20b", "example.com"},
		{"empty query kept", "http://example.com?", "http://example.com/?", "example.com"},
		{"userinfo kept", "http://user@example.com/", "http://user@example.com/", "example.com"},
		{"empty userinfo dropped", "http://@x/", "http://x/", "x"},
		{"empty password dropped", "https://test:@test", "https://test@test/", "test"},
		{"non-ASCII userinfo", "http://ü:é@x/", "http://%C3%BC:%C3%A9@x/", "x"},
		{"dot host", "HTTP://./", "http://./", "."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Normalize(tt.in)
			if err != nil {
				t.Fatalf("Normalize(%q): %v", tt.in, err)
			}
			if got.URL != tt.want || got.Host != tt.host {
				t.Errorf("Normalize(%q) = %q host %q, want %q host %q", tt.in, got.URL, got.Host, tt.want, tt.host)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	const base = "http://example.org/foo/bar"
	tests := []struct {
		in, want, frag string
		hasFrag        bool
	}{
		{"/a/b/c", "http://example.org/a/b/c", "", false},
		{"../a", "http://example.org/a", "", false},
		{"./a", "http://example.org/foo/a", "", false},
		{"//example.com/x", "http://example.com/x", "", false},
		{"///test", "http://test/", "", false},
		{`\\x\hello`, "http://x/hello", "", false},
		{"?x", "http://example.org/foo/bar?x", "", false},
		{":23", "http://example.org/foo/:23", "", false},
		{"http:example.com/", "http://example.org/foo/example.com/", "", false},
		{"http:/example.com/", "http://example.org/example.com/", "", false},
		{"https:example.com/", "https://example.com/", "", false},
		{"#β", "http://example.org/foo/bar", "β", true},
		{"#", "http://example.org/foo/bar", "", true},
		{"#a%23b", "http://example.org/foo/bar", "a#b", true},
		{"", "http://example.org/foo/bar", "", false},
		{"  \t", "http://example.org/foo/bar", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Resolve(base, tt.in)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.in, err)
			}
			if got.URL != tt.want || got.Fragment != tt.frag || got.HasFrag != tt.hasFrag {
				t.Errorf("Resolve(%q) = %q #%q (%v), want %q #%q (%v)",
					tt.in, got.URL, got.Fragment, got.HasFrag, tt.want, tt.frag, tt.hasFrag)
			}
		})
	}
}

func TestNormalizeErrors(t *testing.T) {
	tests := []struct {
		in          string
		unsupported bool
	}{
		{"", false},
		{"example.com/no-scheme", false},
		{"http://", false},
		{"http:////", false},
		{"http://exa mple.com/", false},
		{"http://[::1/", false},
		{"http://[::1]./", false},
		{"http://example.com:99999/", false},
		{"http://\u200b/", false}, // maps to an empty host
		{"https://xn--/", false},  // invalid Punycode
		{"https://example%2Xcom/", false},
		{"https://abc%FEdef.org/", false},
		{"http://\u00ad/", false}, // a soft hyphen maps to nothing
		{"mailto:someone@example.com", true},
		{"javascript:alert(1)", true},
		{"ftp://example.com/file", true},
		{"data:text/html,hi", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := Normalize(tt.in)
			if err == nil {
				t.Fatalf("Normalize(%q) = %q, want an error", tt.in, r.URL)
			}
			if got := errors.Is(err, ErrUnsupportedScheme); got != tt.unsupported {
				t.Errorf("Normalize(%q) error %v: unsupported=%v, want %v", tt.in, err, got, tt.unsupported)
			}
		})
	}
}

// TestNoCollision lists pairs that the standard tells apart and that an
// equivalence could wrongly merge: they must stay two URLs.
func TestNoCollision(t *testing.T) {
	pairs := [][2]string{
		{"http://example.com/a%2Fb/é", "http://example.com/a/b/é"},
		{"http://example.com/a%2Fb", "http://example.com/a/b"},
		{"http://example.com/p?a%26b=1", "http://example.com/p?a&b=1"},
		{"http://example.com/p?a%3Db", "http://example.com/p?a=b"},
		{"http://example.com/p?a\\b", "http://example.com/p?a/b"},
		{"http://example.com/a%3Fb", "http://example.com/a?b"},
		{"http://example.com/a%23b", "http://example.com/a#b"},
		{"http://example.com/a%2Bb", "http://example.com/a+b"},
		{"http://example.com/a%20b", "http://example.com/a+b"},
		{"http://example.com/%252F", "http://example.com/%2F"},
		{"http://example.com/a//b", "http://example.com/a/b"},
		{"http://example.com/?", "http://example.com/"},
		{"http://example.com/?b=1&a=1", "http://example.com/?a=1&b=1"},
		{"http://example.com./", "http://example.com/"},
		{"http://u@example.com/", "http://example.com/"},
		{"http://example.com:8080/", "http://example.com/"},
		{"https://example.com/", "http://example.com/"},
		{"http://[::ffff:127.0.0.1]/", "http://127.0.0.1/"},
		{"http://example.com/a/b/", "http://example.com/a/b"},
	}
	for _, p := range pairs {
		a, err1 := Normalize(p[0])
		b, err2 := Normalize(p[1])
		if err1 != nil || err2 != nil {
			t.Errorf("Normalize(%q), Normalize(%q): %v, %v", p[0], p[1], err1, err2)
			continue
		}
		if a.URL == b.URL {
			t.Errorf("%q and %q both become %q", p[0], p[1], a.URL)
		}
	}
}

func TestNormalizeIdempotent(t *testing.T) {
	for _, in := range []string{
		"HTTP://a.B/c/../d?%7e#x", "http://bücher.example/ä", "https://x/a%2fb/./c",
		"http://example.com..", "HTTP://0:080", "http://x/%%41%2%zz?%%7e%", "http://x/%2%2e%2e/",
		"http://[::ffff:127.0.0.1]:0080/", "http://@x/", "http://é@x/?é",
	} {
		once, err := Normalize(in)
		if err != nil {
			t.Fatalf("Normalize(%q): %v", in, err)
		}
		twice, err := Normalize(once.URL)
		if err != nil {
			t.Fatalf("Normalize(%q), from %q: %v", once.URL, in, err)
		}
		if once.URL != twice.URL || once.Host != twice.Host {
			t.Errorf("not idempotent: %q -> %q -> %q", in, once.URL, twice.URL)
		}
	}
}

func TestBaseResolveMatchesResolve(t *testing.T) {
	const base = "https://example.org/dir/page.html?x#f"
	b, err := NewBase(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"a", "../b?c", "#g", "//other/x", "mailto:x@y", "http://[", ""} {
		r1, err1 := b.Resolve(ref)
		r2, err2 := Resolve(base, ref)
		if r1 != r2 || (err1 == nil) != (err2 == nil) {
			t.Errorf("ref %q: Base.Resolve = %+v, %v; Resolve = %+v, %v", ref, r1, err1, r2, err2)
		}
	}
	// Resolving must not change the base.
	if got := b.String(); got != base {
		t.Errorf("base changed to %q", got)
	}
}

// TestResolveCache: every kind of reference, resolved through the cache
// against bases that share a directory but not their last segment,
// query or fragment, gives what the parser gives against each base.
func TestResolveCache(t *testing.T) {
	bases := []string{
		"http://example.org/docs/a.html?x=1#top",
		"http://example.org/docs/b.html",
		"http://example.org/docs/",
		"http://user:pw@example.org/docs/c?q",
		"https://example.org/docs/a.html",
		"http://example.org/docs/d?x/y/z",
	}
	refs := []string{
		"", "?q=2", "#frag", "x.html", "./", ".", "..", "../up.html", "/root", "//other.example/p",
		"http:", "http:?y", "HTTP:#z", "http:rel.html", "https:rel.html", "http://abs.example/x",
		"javascript:void(0)", "mailto:a@example.org", " x.html", "x\t.html", "\\back", "x y",
		"%7Euser/caf%c3%a9", "a:b", "1a:b", "sub/page.html#part", "?", "#", "x#a%20b", "x#caf\u00e9<", "#%zz",
		"http:#f", "?q#f", "x.html#", "../a#b#c",
	}
	for _, ref := range refs {
		for range 2 { // the second round answers from the cache
			for _, raw := range bases {
				b, err := NewBase(raw)
				if err != nil {
					t.Fatal(err)
				}
				got, gerr := b.Resolve(ref)
				want, werr := b.resolve(ref)
				if got != want || (gerr == nil) != (werr == nil) {
					t.Errorf("Resolve(%q) against %q = %+v, %v; the parser gives %+v, %v", ref, raw, got, gerr, want, werr)
				}
			}
		}
	}
	// What the cache keys on.
	for _, c := range []struct {
		ref                string
		cacheable, dirOnly bool
	}{
		{"page.html", true, true}, {"../a", true, true}, {"/a", true, true}, {"//h/a", true, true},
		{"http://h/a", true, true}, {"http:a", true, true}, {"a?q", true, true},
		{"", true, false}, {"?q", true, false}, {"http:", true, false}, {"HTTPS:?q", true, false},
		{" a", false, true}, {"a\nb", false, true},
	} {
		if got := cacheable(c.ref); got != c.cacheable {
			t.Errorf("cacheable(%q) = %v, want %v", c.ref, got, c.cacheable)
		}
		if got := dirOnly(c.ref); got != c.dirOnly {
			t.Errorf("dirOnly(%q) = %v, want %v", c.ref, got, c.dirOnly)
		}
	}
	if got := directory("http://h/a/b?x/y"); got != "http://h/a/" {
		t.Errorf("directory of a base with a '/' in its query = %q", got)
	}
}
