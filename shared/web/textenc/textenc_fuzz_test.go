package textenc

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// FuzzDecode: whatever the bytes and the Content-Type, Decode (and
// DecodeAs for plain text) does not panic, returns valid UTF-8, and grows the text by a bounded factor
// (no charset turns one byte into more than one replacement or one
// 3-byte character).
func FuzzDecode(f *testing.F) {
	for _, c := range []struct{ body, ct string }{
		{"<p>caf\xe9</p>", "text/html; charset=iso-8859-1"},
		{"\xef\xbb\xbf<p>caf\xc3\xa9</p>", "text/html"},
		{"\xff\xfeh\x00i\x00", ""},
		{`<meta charset="shift_jis"><p>` + "\x93\xfa\x96\x7b", "text/html"},
		{"plain \x80\x81", "text/plain; charset=utf-8"},
		{"x", "text/html; charset=no-such-charset"},
		{"<p>\xa4\xa4\xa4\xe5</p>", "text/html; charset=big5"},
	} {
		f.Add([]byte(c.body), c.ct)
	}
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		if LooksBinary(body) && bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}) {
			t.Fatalf("LooksBinary(%q): a body with a UTF-8 byte order mark is text", body)
		}
		text, _, err := Decode(body, contentType)
		if err != nil {
			return
		}
		if !utf8.ValidString(text) {
			t.Fatalf("Decode(%q, %q) is not UTF-8: %q", body, contentType, text)
		}
		if len(text) > 3*len(body)+3 {
			t.Fatalf("Decode grew %d bytes into %d", len(body), len(text))
		}
		plain, _, err := DecodeAs(body, contentType, "text/plain")
		if err == nil && (!utf8.ValidString(plain) || len(plain) > 3*len(body)+3) {
			t.Fatalf("DecodeAs(%q, %q, text/plain) = %q: not UTF-8, or grown past bounds", body, contentType, plain)
		}
	})
}
