package robots

import (
	"strings"
)

// pattern is an Allow or Disallow path pattern ready to match: percent-
// encoding normalized (see normalize), split at its "*" wildcards, and
// whether a final "$" anchors it at the end of the path.
type pattern struct {
	segs     []string // literal parts between the "*"s; segs[0] is the anchored prefix
	anchored bool
	length   int // octets of the normalized pattern, "*" and "$" included: its specificity
}

func compile(raw string) pattern {
	n := normalize(raw)
	p := pattern{length: len(n)}
	if strings.HasSuffix(n, "$") {
		p.anchored = true
		n = n[:len(n)-1]
	}
	p.segs = strings.Split(n, "*")
	return p
}

// match reports whether the pattern matches the normalized path (with its
// query), from the start of the path (RFC 9309 section 2.2.2): each "*"
// stands for any run of octets, a final "$" for the end of the path.
// Taking each middle part at its leftmost place is enough: a later place
// leaves less room for the parts after it.
func (p *pattern) match(path string) bool {
	first := p.segs[0]
	if !strings.HasPrefix(path, first) {
		return false
	}
	rest := path[len(first):]
	if len(p.segs) == 1 {
		return !p.anchored || rest == ""
	}
	last := len(p.segs) - 1
	for _, s := range p.segs[1:last] {
		i := strings.Index(rest, s)
		if i < 0 {
			return false
		}
		rest = rest[i+len(s):]
	}
	if p.anchored {
		return strings.HasSuffix(rest, p.segs[last])
	}
	return strings.Contains(rest, p.segs[last])
}

// normalize puts a path or a pattern in the one percent-encoded form
// RFC 9309 section 2.2.2 compares: octets outside printable US-ASCII (and
// those no URI may hold raw) are percent-encoded; an escaped unreserved
// character is decoded ("%7E" is "~", "%62" is "b"); other escapes are
// kept, with upper-case hex ("%aa" is "%AA"); a "%" that starts no
// escape is "%25". Applied to both sides, "/ツ" and "/%E3%83%84" are one
// path. It agrees with shared/web/urlnorm, so a normalized URL stays as
// it is and the rules see what the fetcher requests.
func normalize(s string) string {
	i := 0
	for i < len(s) && s[i] != '%' && plain(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, i, len(s)+16)
	copy(b, s)
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(v) {
				b = append(b, v)
			} else {
				b = append(b, '%', hexUpper[v>>4], hexUpper[v&15])
			}
			i += 2
		case c == '%' || !plain(c):
			b = append(b, '%', hexUpper[c>>4], hexUpper[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

const hexUpper = "0123456789ABCDEF"

// plain reports whether c stands for itself in a normalized path: an
// unreserved or reserved character of RFC 3986 ("%" is handled apart).
func plain(c byte) bool {
	if unreserved(c) {
		return true
	}
	return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
