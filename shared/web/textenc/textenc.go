// Package textenc finds a body's charset (header, BOM, <meta> or
// sniffing, per the WHATWG encoding sniffing algorithm in
// golang.org/x/net/html/charset) and converts it to UTF-8.
package textenc

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
	"golang.org/x/text/encoding"
)

// Decode returns body as UTF-8 text and the name of the charset it was
// read as. contentType is the Content-Type header ("" if none).
func Decode(body []byte, contentType string) (string, string, error) {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	return decode(body, enc, name)
}

// decode decodes body from enc, named name, into UTF-8.
func decode(body []byte, enc encoding.Encoding, name string) (string, string, error) {
	if name == "utf-8" {
		b := body
		if len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF {
			b = b[3:]
		}
		if utf8.Valid(b) {
			return string(b), name, nil
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), name, nil
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return "", name, fmt.Errorf("decode %s: %w", name, err)
	}
	// A byte order mark is not text.
	return strings.TrimPrefix(string(out), "\uFEFF"), name, nil
}

// DecodeAs is Decode for a body of MIME type mimetype. HTML follows
// the HTML standard (Decode: header, byte order mark, <meta>, then a
// guess that falls back to windows-1252 for a first KiB of ASCII). Any
// other text names its charset nowhere but in the header: a body that
// names none there or in a byte order mark, and is valid UTF-8, is read
// as UTF-8, as most text written today is (Apache and nginx serve .txt
// without a charset, and a UTF-8 file whose first KiB is ASCII was read
// as windows-1252, "café" as "cafÃ©").
func DecodeAs(body []byte, contentType, mimetype string) (string, string, error) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if !IsHTML(mimetype) && !certain && utf8.Valid(body) {
		return string(body), "utf-8", nil
	}
	return decode(body, enc, name)
}

// IsText reports whether a MIME type holds text worth keeping as
// file_text and parsing.
func IsText(mimetype string) bool {
	switch {
	case strings.HasPrefix(mimetype, "text/"):
		return true
	case mimetype == "application/xhtml+xml", mimetype == "application/xml", mimetype == "application/json",
		mimetype == "application/javascript", mimetype == "application/rss+xml", mimetype == "application/atom+xml",
		strings.HasSuffix(mimetype, "+xml"), strings.HasSuffix(mimetype, "+json"):
		return true
	}
	return false
}

// IsHTML reports whether a MIME type is an HTML document.
func IsHTML(mimetype string) bool {
	return mimetype == "text/html" || mimetype == "application/xhtml+xml"
}

// IsPlainText reports whether a MIME type is plain text, which the
// crawler reads as a document of words (its text searched, no links).
func IsPlainText(mimetype string) bool {
	return mimetype == "text/plain"
}

// LooksBinary reports whether a body served as text/plain is binary by
// the WHATWG MIME Sniffing Standard's rules for distinguishing if a
// resource is text or binary: no UTF-16 or UTF-8 byte order mark, and a
// binary data byte (0x00-0x08, 0x0B, 0x0E-0x1A, 0x1C-0x1F) in its first
// 1,445 bytes. Servers label files they cannot type text/plain (Apache's
// old DefaultType); a browser shows such a body as a download, and the
// crawler keeps it unparsed. (net/http's DetectContentType applies the
// same test only to a body with no type.)
func LooksBinary(body []byte) bool {
	if bytes.HasPrefix(body, []byte{0xFE, 0xFF}) || bytes.HasPrefix(body, []byte{0xFF, 0xFE}) ||
		bytes.HasPrefix(body, []byte{0xEF, 0xBB, 0xBF}) {
		return false
	}
	for _, b := range body[:min(len(body), sniffLen)] {
		if b <= 0x08 || b == 0x0B || 0x0E <= b && b <= 0x1A || 0x1C <= b && b <= 0x1F {
			return true
		}
	}
	return false
}

// sniffLen is the WHATWG MIME Sniffing Standard's resource header length.
const sniffLen = 1445

// MediaType returns the lower-case media type of a Content-Type header,
// or "" when there is none or it cannot be parsed.
func MediaType(contentType string) string {
	if contentType == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		// "text/html;;" and the like: take what is before the ';'.
		mt = strings.TrimSpace(strings.SplitN(contentType, ";", 2)[0])
	}
	if !strings.Contains(mt, "/") {
		return ""
	}
	return strings.ToLower(mt)
}
