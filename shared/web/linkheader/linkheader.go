// Package linkheader reads HTTP Link header fields (RFC 8288): the
// crawler needs a response's rel="canonical" target (RFC 6596), which
// a server may send in place of the HTML <link rel=canonical>.
//
// Written here rather than taken from a library: the Go packages for
// Link headers split the field on commas with regular expressions, so
// a URL or a quoted parameter holding a comma breaks them, and one
// malformed link drops every other. This reader keeps to the grammar of
// RFC 8288 §3 and skips only the link-value it cannot read.
package linkheader

import "strings"

// Link is one link-value: its target as written (not resolved) and its
// relation types, lower-cased.
type Link struct {
	Target string
	Rels   []string
}

// Parse reads every link-value of the field values (a response may send
// several Link fields; they are one comma-separated list). A link-value
// that does not parse is skipped, up to the next comma outside angle
// brackets and quotes.
func Parse(values []string) []Link {
	var links []Link
	for _, v := range values {
		r := reader{s: v}
		for !r.done() {
			if l, ok := r.linkValue(); ok {
				links = append(links, l)
			}
			r.skipToComma()
		}
	}
	return links
}

// Canonical returns the target of the first link with the relation
// type "canonical", if any.
func Canonical(values []string) (string, bool) {
	for _, l := range Parse(values) {
		for _, r := range l.Rels {
			if r == "canonical" {
				return l.Target, true
			}
		}
	}
	return "", false
}

type reader struct {
	s string
	i int
}

func (r *reader) done() bool { return r.i >= len(r.s) }

// ows skips optional white space.
func (r *reader) ows() {
	for r.i < len(r.s) && (r.s[r.i] == ' ' || r.s[r.i] == '\t') {
		r.i++
	}
}

// linkValue reads `<target> *( OWS ";" OWS param )`, stopping before
// the comma that ends it.
func (r *reader) linkValue() (Link, bool) {
	r.ows()
	if r.done() || r.s[r.i] != '<' {
		return Link{}, false
	}
	end := strings.IndexByte(r.s[r.i:], '>')
	if end < 0 {
		r.i = len(r.s)
		return Link{}, false
	}
	target := r.s[r.i+1 : r.i+end]
	r.i += end + 1
	if strings.IndexByte(target, '<') >= 0 {
		return Link{}, false // not a URI-Reference
	}
	l := Link{Target: strings.TrimSpace(target)}
	relSeen := false
	for {
		r.ows()
		if r.done() || r.s[r.i] == ',' {
			return l, true
		}
		if r.s[r.i] != ';' {
			return Link{}, false
		}
		r.i++
		r.ows()
		if r.done() || r.s[r.i] == ',' {
			return l, true // a trailing ";" ends the link-value
		}
		name := strings.ToLower(r.token())
		if name == "" {
			return Link{}, false
		}
		r.ows()
		var val string
		if !r.done() && r.s[r.i] == '=' {
			r.i++
			r.ows()
			var ok bool
			if val, ok = r.value(); !ok {
				return Link{}, false
			}
		}
		// §3.3: a second rel parameter is ignored.
		if name == "rel" && !relSeen {
			relSeen = true
			l.Rels = strings.Fields(strings.ToLower(val))
		}
	}
}

// token reads an RFC 9110 token.
func (r *reader) token() string {
	start := r.i
	for r.i < len(r.s) && isTChar(r.s[r.i]) {
		r.i++
	}
	return r.s[start:r.i]
}

// value reads a token or a quoted string (with its backslash escapes).
func (r *reader) value() (string, bool) {
	if r.done() || r.s[r.i] != '"' {
		t := r.token()
		return t, t != ""
	}
	var b strings.Builder
	for r.i++; r.i < len(r.s); r.i++ {
		switch c := r.s[r.i]; c {
		case '"':
			r.i++
			return b.String(), true
		case '\\':
			if r.i+1 < len(r.s) {
				r.i++
				b.WriteByte(r.s[r.i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", false // unterminated
}

// skipToComma moves past the next comma outside angle brackets and
// quoted strings (the end of a link-value), or to the end.
func (r *reader) skipToComma() {
	inAngle, inQuote := false, false
	for ; r.i < len(r.s); r.i++ {
		switch c := r.s[r.i]; {
		case inQuote && c == '\\':
			r.i++
		case c == '"' && !inAngle:
			inQuote = !inQuote
		case c == '<' && !inQuote:
			inAngle = true
		case c == '>' && !inQuote:
			inAngle = false
		case c == ',' && !inAngle && !inQuote:
			r.i++
			return
		}
	}
}

func isTChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}
