package fetch

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
)

// FuzzReadBody: any page body, under any Content-Encoding, is read
// without a panic and never as more than the limit (errTooLarge past
// it); a body that names no coding comes back as it came.
func FuzzReadBody(f *testing.F) {
	const limit = 1 << 16
	f.Add([]byte("<p>the keeper's log</p>"), "")
	f.Add(deflated([]byte("<p>the keeper's log</p>"), 2), "deflate, deflate")
	f.Add(deflated([]byte("<p>x</p>"), 1), "deflate, gzip")
	f.Add([]byte{}, "gzip")
	f.Add([]byte("\x1b\x00\x00"), "br")
	f.Add(bytes.Repeat([]byte{0}, limit+1), "identity")
	f.Fuzz(func(t *testing.T, body []byte, enc string) {
		resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		if enc != "" {
			resp.Header.Set("Content-Encoding", enc)
		}
		got, err := readBody(resp, limit)
		switch {
		case errors.Is(err, errTooLarge) && len(encodings(enc)) == 0 && len(body) <= limit:
			t.Fatalf("a body of %d bytes with no coding refused as too large", len(body))
		case err != nil:
			return
		case len(got) > limit:
			t.Fatalf("read %d bytes, more than the limit", len(got))
		case len(encodings(enc)) == 0 && !bytes.Equal(got, body):
			t.Fatalf("a body with no coding read as %d bytes, not its %d", len(got), len(body))
		}
	})
}
