package urlnorm

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"HTTP://Example.COM", "http://example.com/"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"http://example.com/a/./b/../c", "http://example.com/a/c"},
		{"http://example.com/../../x", "http://example.com/x"},
		{"http://example.com/a/%2e%2E/b", "http://example.com/b"},
		{"http://example.com/%7efoo/%41%62", "http://example.com/~foo/Ab"},
		{"http://example.com/a%2fb%c3%a9", "http://example.com/a%2Fb%C3%A9"},
		{"http://example.com/p?q=%e2%82%ac&b=1", "http://example.com/p?q=%E2%82%AC&b=1"},
		{"http://example.com/page#section", "http://example.com/page"},
		{"http://bücher.example/", "http://xn--bcher-kva.example/"},
		{"http://EXAMPLE.com./x", "http://example.com/x"},
		{"  http://example.com/trim  ", "http://example.com/trim"},
		{"http://example.com/a\tb\nc", "http://example.com/abc"},
		{`http://example.com\a\b`, "http://example.com/a/b"},
		{"http://[::1]:8080/", "http://[::1]:8080/"},
		{"http://127.0.0.1:00080/", "http://127.0.0.1:80/"},
		{"http://example.com/a b", "http://example.com/a%20b"},
		{"http://example.com?", "http://example.com/?"},
		{"http://user@example.com/", "http://user@example.com/"},
		{"http://example.com/100%", "http://example.com/100%25"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Normalize(tt.in)
			if err != nil {
				t.Fatalf("Normalize(%q): %v", tt.in, err)
			}
			if got.URL != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got.URL, tt.want)
			}
		})
	}
}

// Cases from the WHATWG URL standard's urltestdata.json (relative
// references resolved against http://example.org/foo/bar), restricted to
// http(s) results, with the fragment removed as the crawler stores them.
func TestResolveWHATWG(t *testing.T) {
	base, _ := url.Parse("http://example.org/foo/bar")
	tests := []struct {
		in, want, frag string
	}{
		{"http://example\t.\norg", "http://example.org/", ""},
		{"http://user:pass@foo:21/bar;par?b#c", "http://user:pass@foo:21/bar;par?b", "c"},
		{"https://test:@test", "https://test:@test/", ""},
		{"http:/example.com/", "http://example.org/example.com/", ""},
		{"#β", "http://example.org/foo/bar", "β"},
		{"#", "http://example.org/foo/bar", ""},
		{"/a/b/c", "http://example.org/a/b/c", ""},
		{"../a", "http://example.org/a", ""},
		{"./a", "http://example.org/foo/a", ""},
		{"//example.com/x", "http://example.com/x", ""},
		{"?x", "http://example.org/foo/bar?x", ""},
		{"http://example.com/foo/%2e%2", "http://example.com/foo/.%252", ""}, // WHATWG keeps "%2" raw; we escape the stray '%'
		{"http:example.com/", "http://example.org/foo/example.com/", ""},
		{"http://www.google.com/foo?bar=baz#", "http://www.google.com/foo?bar=baz", ""},
		{"http://[1:0::]", "http://[1::]/", ""},
		{"http://0Xc0.0250.01", "", ""}, // non-decimal IPv4 is not normalized; kept as a name
		{"http://www/foo%2Ehtml", "http://www/foo.html", ""},
		{"http://example.com/foo/bar/../ton/../../a", "http://example.com/a", ""},
		{"http://example.com/foo/../../..", "http://example.com/", ""},
		{"http://example.com////../..", "http://example.com//", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Resolve(base, tt.in)
			if tt.want == "" {
				if err == nil && got.URL == "" {
					t.Fatalf("Resolve(%q) gave neither URL nor error", tt.in)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tt.in, err)
			}
			if got.URL != tt.want || got.Fragment != tt.frag || got.HasFrag != strings.Contains(tt.in, "#") {
				t.Errorf("Resolve(%q) = %q #%q, want %q #%q", tt.in, got.URL, got.Fragment, tt.want, tt.frag)
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
		{"http://exa mple.com/", false},
		{"http://[::1/", false},
		{"mailto:someone@example.com", true},
		{"javascript:alert(1)", true},
		{"ftp://example.com/file", true},
		{"data:text/html,hi", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Normalize(tt.in)
			if err == nil {
				t.Fatalf("Normalize(%q) succeeded, want an error", tt.in)
			}
			if got := errors.Is(err, ErrUnsupportedScheme); got != tt.unsupported {
				t.Errorf("Normalize(%q) error %v: unsupported=%v, want %v", tt.in, err, got, tt.unsupported)
			}
		})
	}
}

func TestNormalizeIdempotent(t *testing.T) {
	for _, in := range []string{"HTTP://a.B/c/../d?%7e#x", "http://bücher.example/ä", "https://x/a%2fb/./c"} {
		once, err := Normalize(in)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := Normalize(once.URL)
		if err != nil {
			t.Fatal(err)
		}
		if once.URL != twice.URL {
			t.Errorf("not idempotent: %q -> %q -> %q", in, once.URL, twice.URL)
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"http://a/b", "HTTP://x:80/./a/../b?c#d", "https://bücher.de/%7e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Normalize(s)
		if err != nil {
			return
		}
		r2, err := Normalize(r.URL)
		if err != nil {
			t.Fatalf("normalized %q to %q, which does not normalize: %v", s, r.URL, err)
		}
		if r2.URL != r.URL {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, r.URL, r2.URL)
		}
	})
}
