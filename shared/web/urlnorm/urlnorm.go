// Package urlnorm turns URLs as written in pages, headers and events into
// the one form the crawler stores and dedupes on.
//
// A URL is parsed, and a reference resolved against its base, the way a
// browser does it: by the WHATWG URL Standard, through
// github.com/nlnwa/whatwg-url. That already lower-cases the scheme, maps
// the host by UTS 46 to ASCII, drops a default port (also written with
// leading zeros), removes dot segments, makes an empty path "/" and
// percent-encodes what may not appear raw. On top of the standard's
// output urlnorm applies a short, written set of equivalences (see
// docs/urls.md and escapes.go): percent-escapes of unreserved characters
// decoded, the hex of the others upper-case, a '%' that starts no escape
// written "%25", and the fragment cut off and reported apart.
//
// Two properties hold and are tested: normalizing an output changes
// nothing, and two URLs the standard calls different never become one
// except by those written equivalences.
package urlnorm

import (
	"errors"
	"fmt"
	"strings"

	wurl "github.com/nlnwa/whatwg-url/url"
)

// ErrUnsupportedScheme means the URL is well formed but not http(s).
var ErrUnsupportedScheme = errors.New("unsupported scheme")

// Result is a normalized URL with the fragment it was written with.
type Result struct {
	URL      string
	Host     string // lower-case host[:port], as in URL
	Fragment string // percent-decoded where that gives valid UTF-8
	HasFrag  bool   // true also for an empty fragment ("page#")
}

// parser is the standard's parser with its default options.
var parser = wurl.NewParser()

// Normalize normalizes an absolute URL.
func Normalize(raw string) (Result, error) {
	u, err := parser.Parse(raw)
	if err != nil {
		return Result{}, fmt.Errorf("parse %q: %w", truncate(raw), err)
	}
	return result(u)
}

// Resolve resolves ref against base, an absolute URL ("" when ref is
// absolute), as a browser resolves a link, and normalizes the result. An
// http(s) URL that cannot be parsed is an error; a well-formed URL of
// another scheme is ErrUnsupportedScheme. To resolve many references
// against one base, use a Base: it parses the base once.
func Resolve(base, ref string) (Result, error) {
	if base == "" {
		return Normalize(ref)
	}
	b, err := NewBase(base)
	if err != nil {
		return Result{}, err
	}
	return b.Resolve(ref)
}

// Base is a parsed base URL, such as a page's URL or its <base href>, to
// resolve that page's links against. It is safe for concurrent use.
type Base struct {
	u *wurl.Url
	// For an http(s) base, the cache's keys (cache.go): the base
	// without its fragment, and its directory. Else "".
	whole, dir string
}

// NewBase parses an absolute URL of any scheme for use as a base.
func NewBase(raw string) (*Base, error) {
	u, err := parser.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse base %q: %w", truncate(raw), err)
	}
	b := &Base{u: u}
	if s := u.Scheme(); s == "http" || s == "https" {
		b.whole = u.Href(true) // without its fragment
		b.dir = directory(b.whole)
	}
	return b, nil
}

// Resolve resolves ref against b and normalizes the result, as the
// package-level Resolve does. A nil Base resolves only absolute URLs.
func (b *Base) Resolve(ref string) (Result, error) {
	if b == nil {
		return Normalize(ref)
	}
	return b.resolveCached(ref)
}

// resolve is Resolve without the cache.
func (b *Base) resolve(ref string) (Result, error) {
	u, err := b.u.Parse(ref)
	if err != nil {
		return Result{}, fmt.Errorf("resolve %q: %w", truncate(ref), err)
	}
	return result(u)
}

// String returns the base as the standard serializes it, fragment included.
func (b *Base) String() string { return b.u.Href(false) }

// result applies the crawler's equivalences to a parsed URL.
func result(u *wurl.Url) (Result, error) {
	scheme := u.Scheme()
	if scheme != "http" && scheme != "https" {
		return Result{}, fmt.Errorf("%s: %w", scheme, ErrUnsupportedScheme)
	}
	// The standard accepts an empty host only for file: URLs; checked
	// anyway because the crawler keys politeness and storage on it.
	host := u.Host()
	if u.Hostname() == "" {
		return Result{}, fmt.Errorf("%q has no host", truncate(u.Href(true)))
	}
	href := u.Href(false)
	var r Result
	// No '#' can stand before the fragment in a serialized http(s) URL:
	// the standard escapes it in userinfo, path and query.
	if i := strings.IndexByte(href, '#'); i >= 0 {
		r.Fragment, r.HasFrag = decodeFragment(href[i+1:]), true
		href = href[:i]
	}
	r.URL = normalizeEscapes(href)
	r.Host = host
	// The parser's IDNA is not always idempotent: a label can map to
	// punycode that the same parser then refuses to decode ("İİ!" becomes
	// "xn--ii!-8dcb", whose "!" the decoder disallows). A host that would
	// not read back as itself is refused, so that every URL kept
	// normalizes to itself. Only punycode hosts are checked again.
	if strings.Contains(u.Hostname(), "xn--") {
		again, err := parser.Parse(r.URL)
		if err != nil || normalizeEscapes(again.Href(false)) != r.URL {
			return Result{}, fmt.Errorf("%q: its host does not read back as itself (IDNA), so it has no stable form", truncate(r.URL))
		}
	}
	return r, nil
}

func truncate(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
