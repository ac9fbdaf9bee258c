// Package urlnorm turns URLs as written in pages and events into the one
// form the crawler stores and dedupes on: lower-case scheme and host,
// IDNA hosts in ASCII, default ports dropped, dot segments removed,
// percent-escapes upper-case (and decoded where the character is
// unreserved), an empty path made "/", the fragment cut off.
//
// It is hand-written on net/url and golang.org/x/net/idna because no
// maintained Go library does exactly this set (purell is archived, and
// WHATWG-complete parsers change what servers receive).
package urlnorm

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// ErrUnsupportedScheme means the URL is well formed but not http(s).
var ErrUnsupportedScheme = errors.New("unsupported scheme")

// Result is a normalized URL with the fragment it was written with.
type Result struct {
	URL      string
	Host     string // lower-case host[:port], as in URL
	Fragment string
	HasFrag  bool
}

var profile = idna.New(idna.MapForLookup(), idna.Transitional(false), idna.BidiRule())

// Normalize normalizes an absolute URL.
func Normalize(raw string) (Result, error) { return Resolve(nil, raw) }

// Resolve resolves ref against base (nil for an absolute ref) and
// normalizes the result. An http(s) URL that cannot be normalized is an
// error; a well-formed URL of another scheme is ErrUnsupportedScheme.
func Resolve(base *url.URL, ref string) (Result, error) {
	s := strings.TrimFunc(ref, isC0OrSpace)
	s = removeTabsNewlines(s)
	if s == "" && base == nil {
		return Result{}, fmt.Errorf("empty URL")
	}
	// Browsers read backslashes in http(s) URLs as slashes.
	if base != nil || hasHTTPScheme(s) {
		s = strings.ReplaceAll(s, `\`, "/")
	}
	u, err := url.Parse(escapeStrayPercent(s))
	if err != nil {
		return Result{}, fmt.Errorf("parse %q: %w", truncate(ref), unwrapURLError(err))
	}
	if base != nil {
		// WHATWG: "http:foo" and "http:/foo" against an http base are
		// relative references.
		if u.Host == "" && u.Scheme != "" && strings.EqualFold(u.Scheme, base.Scheme) {
			rel := *u
			rel.Scheme = ""
			if rel.Opaque != "" {
				rel.Path, rel.Opaque = rel.Opaque, ""
			}
			u = &rel
		}
		u = base.ResolveReference(u)
	}
	r, err := normalizeURL(u)
	// net/url drops an empty fragment ("page#"); the reference had one.
	if err == nil && !r.HasFrag && strings.Contains(s, "#") {
		r.HasFrag = true
	}
	return r, err
}

// Parse is Normalize's result as a *url.URL, for use as a base.
func Parse(raw string) (*url.URL, error) {
	r, err := Normalize(raw)
	if err != nil {
		return nil, err
	}
	return url.Parse(r.URL)
}

func normalizeURL(u *url.URL) (Result, error) {
	scheme := strings.ToLower(u.Scheme)
	if scheme == "" {
		return Result{}, fmt.Errorf("%q is not an absolute URL", truncate(u.String()))
	}
	if scheme != "http" && scheme != "https" {
		return Result{}, fmt.Errorf("%s: %w", scheme, ErrUnsupportedScheme)
	}
	if u.Opaque != "" {
		// "http:example.com" with no slashes.
		return Result{}, fmt.Errorf("%q has no host", truncate(u.String()))
	}
	host, err := normalizeHost(u.Hostname())
	if err != nil {
		return Result{}, err
	}
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		port = strings.TrimLeft(port, "0")
		if port == "" {
			port = "0"
		}
	}
	hostport := host
	if strings.Contains(host, ":") {
		hostport = "[" + host + "]"
	}
	if port != "" {
		hostport += ":" + port
	}

	path := normalizeEscapes(u.EscapedPath(), false)
	path = removeDotSegments(path)
	if path == "" {
		path = "/"
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	if u.User != nil {
		b.WriteString(u.User.String())
		b.WriteByte('@')
	}
	b.WriteString(hostport)
	b.WriteString(path)
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteByte('?')
		b.WriteString(normalizeEscapes(escapeQuery(u.RawQuery), true))
	}
	r := Result{URL: b.String(), Host: hostport}
	if u.Fragment != "" {
		r.Fragment = u.Fragment
		r.HasFrag = true
	}
	return r, nil
}

func normalizeHost(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("URL has no host")
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	h = strings.TrimSuffix(h, ".")
	if uh, err := url.PathUnescape(h); err == nil {
		h = uh
	}
	a, err := profile.ToASCII(h)
	if err != nil {
		// Non-strict fallback: lower-case hosts with underscores and the
		// like exist on the web and resolve.
		a, err = idna.Punycode.ToASCII(strings.ToLower(h))
		if err != nil || a == "" {
			return "", fmt.Errorf("invalid host %q: %w", truncate(h), err)
		}
	}
	a = strings.ToLower(a)
	for _, r := range a {
		if r <= ' ' || strings.ContainsRune(`<>"{}|\^`+"`%/?#@", r) {
			return "", fmt.Errorf("invalid host %q", truncate(h))
		}
	}
	// An IPv4 address written in a form net.ParseIP rejects (e.g. with a
	// trailing dot, removed above) normalizes to the plain form.
	if ip := net.ParseIP(a); ip != nil {
		return ip.String(), nil
	}
	return a, nil
}

const hexUpper = "0123456789ABCDEF"

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// normalizeEscapes upper-cases percent-escapes, decodes escaped
// unreserved characters and escapes a stray '%'.
func normalizeEscapes(s string, query bool) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isUnreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(hexUpper[v>>4])
				b.WriteByte(hexUpper[v&15])
			}
			i += 2
			continue
		}
		b.WriteString("%25")
	}
	return b.String()
}

// escapeQuery percent-escapes bytes that may not appear raw in a query.
func escapeQuery(q string) string {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '`' {
			b.WriteByte('%')
			b.WriteByte(hexUpper[c>>4])
			b.WriteByte(hexUpper[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// removeDotSegments applies RFC 3986 section 5.2.4, also to the escaped
// forms %2e and %2E that WHATWG counts as dots.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") && !strings.Contains(strings.ToLower(p), "%2e") {
		return p
	}
	segs := strings.Split(p, "/")
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch strings.ToLower(s) {
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	r := strings.Join(out, "/")
	if strings.HasPrefix(p, "/") && !strings.HasPrefix(r, "/") {
		r = "/" + r
	}
	return r
}

// escapeStrayPercent writes a '%' that starts no escape as "%25", which
// is how a browser sends it.
func escapeStrayPercent(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])) {
			b.WriteString("%25")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isC0OrSpace(r rune) bool { return r <= ' ' }

func removeTabsNewlines(s string) string {
	if !strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	return strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(s)
}

func hasHTTPScheme(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http:") || strings.HasPrefix(l, "https:")
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func truncate(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
