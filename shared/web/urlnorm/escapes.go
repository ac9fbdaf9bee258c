package urlnorm

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// normalizeEscapes applies RFC 3986 section 6.2.2.1 and 6.2.2.2 to a URL
// serialized by the standard: an escape of an unreserved character
// (ALPHA, DIGIT, '-', '.', '_', '~') is decoded, the hex of every other
// escape is written upper-case. A '%' that starts no escape, which the
// standard keeps raw, is written "%25": a raw one cannot travel through
// net/url (the fetch stage's HTTP client), and servers read both forms as
// a literal '%'. Reserved characters ('/', '?', '&', '=',
// ...) and everything outside ASCII stay escaped: decoding them would
// give another URL. The host has no '%' after parsing, and the standard
// has already turned the dot segments "%2e" and ".%2E" into dots, so no
// decoded '.' can form a new dot segment.
func normalizeEscapes(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b = append(b, "%25"...)
			continue
		}
		v := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(v) {
			b = append(b, v)
		} else {
			b = append(b, '%', hexUpper[v>>4], hexUpper[v&15])
		}
		i += 2
	}
	return string(b)
}

// decodeFragment percent-decodes a fragment for Result.Fragment when the
// result is valid UTF-8, as the crawler has always reported it.
func decodeFragment(f string) string {
	if !strings.Contains(f, "%") {
		return f
	}
	d, err := url.PathUnescape(f)
	if err != nil || !utf8.ValidString(d) {
		return f
	}
	return d
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
