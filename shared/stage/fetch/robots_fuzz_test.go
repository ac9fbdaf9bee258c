package fetch

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"testing"

	"github.com/serverless-crawler/crawler/shared/web/robots"
)

// FuzzReadRobots: any robots.txt body, under any Content-Encoding, is
// read without a panic, and never as more than robots.MaxSize bytes; a
// body that names no coding comes back as its own head.
func FuzzReadRobots(f *testing.F) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("User-agent: *\nDisallow: /private\n"))
	zw.Close()
	f.Add([]byte("User-agent: *\nDisallow: /private\n"), "")
	f.Add(gz.Bytes(), "gzip")
	f.Add(gz.Bytes()[:len(gz.Bytes())/2], "gzip")
	f.Add([]byte{}, "gzip")
	f.Add([]byte("User-agent: *\r\nAllow: /\r\n"), "utf-8")
	f.Add([]byte("\x1b\x00\x00"), "br")
	f.Add([]byte("x\x9c\x03\x00\x00\x00\x00\x01"), "deflate, gzip")
	f.Fuzz(func(t *testing.T, body []byte, enc string) {
		resp := &http.Response{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body))}
		if enc != "" {
			resp.Header.Set("Content-Encoding", enc)
		}
		got, err := readRobots(resp)
		if err != nil {
			return
		}
		if len(got) > robots.MaxSize {
			t.Fatalf("read %d bytes, more than robots.MaxSize", len(got))
		}
		if len(encodings(enc)) == 0 && !bytes.HasPrefix(body, got) {
			t.Fatalf("a body with no coding read as %q, not its head", got)
		}
	})
}
