package fetch

import (
	"net/http"
	"strings"
)

// keepPath makes req send the path of raw, a normalized URL, byte for
// byte. net/url re-escapes a path that holds a character it would escape
// itself ('|', '^', '[' and ']' stay raw in a WHATWG URL), and in doing so
// decodes %2F to '/', which requests another page: /a%2Fb|c went out as
// /a/b%7Cc.
func keepPath(req *http.Request, raw string) {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return
	}
	p := rest[i:]
	if j := strings.IndexAny(p, "?#"); j >= 0 {
		p = p[:j]
	}
	if req.URL.EscapedPath() == p {
		return
	}
	if strings.HasPrefix(p, "//") {
		// An Opaque that starts with "//" is read as an authority; the
		// absolute form carries the path as it is (RFC 9112 section 3.2.2).
		p = "//" + req.URL.Host + p
	}
	req.URL.Opaque = p
}
