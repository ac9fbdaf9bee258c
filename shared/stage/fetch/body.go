package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/andybalholm/brotli"

	"github.com/serverless-crawler/crawler/shared/web/robots"
)

// AcceptEncoding is what the fetcher asks for; it decodes each itself,
// so that the limit applies to the decoded size (no decompression bomb
// gets past MaxResourceSize).
const AcceptEncoding = "gzip, deflate, br"

var errTooLarge = errors.New("body too large")

// netReadError marks an error reading from the network (as opposed to
// an error decoding what was read).
type netReadError struct{ err error }

func (e *netReadError) Error() string { return e.err.Error() }
func (e *netReadError) Unwrap() error { return e.err }

type netReader struct{ r io.Reader }

func (n netReader) Read(p []byte) (int, error) {
	k, err := n.r.Read(p)
	if err != nil && err != io.EOF {
		err = &netReadError{err}
	}
	return k, err
}

// MaxCodings is the most Content-Encoding codings the fetcher undoes on
// one body. Each is a decoder with a window of its own (deflate's is 32
// KiB), set up before a byte is read: a header of 64 KiB
// (crawl.MaxResponseHeaderBytes) names 7,000 of them, and a test
// server's pages saying "deflate" that often took 2.4 s of CPU each to
// refuse. curl stops at 5 for the same reason (CVE-2022-32206); real
// servers name one.
const MaxCodings = 5

// decode returns r undone by encs, outermost first (encodings), which
// a page's body and a robots.txt both use; more than MaxCodings are
// refused before any decoder is set up.
func decode(r io.Reader, encs []string) (io.Reader, error) {
	if len(encs) > MaxCodings {
		return nil, fmt.Errorf("Content-Encoding names more than the %d codings the fetcher undoes", MaxCodings)
	}
	for _, enc := range encs {
		d, err := decoder(enc, r)
		if err != nil {
			return nil, err
		}
		r = d
	}
	return r, nil
}

// readBody reads a response body, decoded per Content-Encoding, while
// streaming: it stops as soon as the decoded body passes max.
func readBody(resp *http.Response, max int64) ([]byte, error) {
	encs := encodings(resp.Header.Get("Content-Encoding"))
	r, err := decode(netReader{resp.Body}, encs)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n <= max && len(encs) == 0 {
		// The buffer sized at once: grown by doubling, a body would
		// briefly hold up to three times its size. Room past the
		// declared length lets the read see its end without growing.
		buf.Grow(int(n) + bytes.MinRead + 1)
	}
	n, err := io.Copy(&buf, io.LimitReader(r, max+1))
	if err != nil {
		var ne *netReadError
		if errors.As(err, &ne) {
			return nil, ne
		}
		return nil, fmt.Errorf("decoding %s body: %w", resp.Header.Get("Content-Encoding"), err)
	}
	if n > max {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

// readRobots reads a robots.txt body, decoded per Content-Encoding as
// a page's is (a gzipped file read as it came was lines of binary,
// all ignored: everything allowed), up to robots.MaxSize. A coding it
// cannot undo (a name it does not know, such as "utf-8", a body that
// is not what its coding says, such as an empty "gzip" one, or more
// than MaxCodings codings) is read as the bytes came, as browsers do: a
// host is not shut out for a header.
//
// A file cut at robots.MaxSize loses the line the cut falls in, unless
// that line is a Disallow, or the file ended just there: read whole, a
// cut "Allow: /private/ok" is "Allow: /private", and a cut "Crawl-delay:
// 10" is 1, each more than the file allows; a cut Disallow disallows
// more, and is kept (RFC 9309 section 2.5 asks a crawler to parse at
// least 500 KiB, and it must fail no more open than the file).
func readRobots(resp *http.Response) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(netReader{resp.Body}, 4*robots.MaxSize))
	if err != nil {
		var ne *netReadError
		if errors.As(err, &ne) {
			return nil, ne
		}
		return nil, err
	}
	body := raw
	if encs := encodings(resp.Header.Get("Content-Encoding")); len(encs) > 0 && len(raw) > 0 {
		if r, err := decode(bytes.NewReader(raw), encs); err == nil {
			dec, err := io.ReadAll(io.LimitReader(r, robots.MaxSize+1))
			if err != nil && len(dec) <= robots.MaxSize {
				return nil, fmt.Errorf("decoding %s robots.txt: %w", resp.Header.Get("Content-Encoding"), err)
			}
			body = dec
		}
	}
	if len(body) <= robots.MaxSize {
		return body, nil
	}
	whole := body[robots.MaxSize] == '\n' || body[robots.MaxSize] == '\r'
	body = body[:robots.MaxSize]
	if start := bytes.LastIndexAny(body, "\r\n") + 1; !whole && !isDisallow(body[start:]) {
		body = body[:start]
	}
	return body, nil
}

// isDisallow reports whether a robots.txt line is a Disallow rule.
func isDisallow(line []byte) bool {
	name, _, ok := bytes.Cut(bytes.TrimLeft(line, " \t"), []byte(":"))
	return ok && strings.EqualFold(string(bytes.TrimSpace(name)), "disallow")
}

// encodings lists the codings applied, outermost first (the header
// lists them in the order they were applied), and stops at MaxCodings+1
// of them: more are refused whatever they are, and a header of 64 KiB
// names 32,768 (listed by prepending each, as once, that took 14 s).
func encodings(h string) []string {
	var out []string
	for e := range strings.SplitSeq(h, ",") {
		if e = strings.ToLower(strings.TrimSpace(e)); e != "" && e != "identity" {
			if len(out) > MaxCodings {
				break
			}
			out = append(out, e)
		}
	}
	slices.Reverse(out)
	return out
}

func decoder(enc string, r io.Reader) (io.Reader, error) {
	switch enc {
	case "gzip", "x-gzip":
		return gzip.NewReader(r)
	case "br":
		return brotli.NewReader(r), nil
	case "deflate":
		// "deflate" is zlib-wrapped by the standard, raw by some servers.
		br := bufio.NewReader(r)
		if b, err := br.Peek(2); err == nil && (uint16(b[0])<<8|uint16(b[1]))%31 == 0 && b[0]&0x0f == 8 {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	}
	return nil, fmt.Errorf("unsupported Content-Encoding %q", enc)
}
