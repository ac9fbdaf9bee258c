package warc

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/testkit/warcio"
)

var at = time.Date(2026, 11, 25, 8, 30, 0, 0, time.UTC)

func exchanges() []Exchange {
	return []Exchange{
		{URL: "http://example.com/", Date: at, IP: "127.0.0.1", Request: http.Header{"User-Agent": {"crawler/1"}, "Host": {"example.com"}},
			Status: 200, Response: http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Etag": {`"v1"`}},
			Body: []byte("<html><title>Home</title><a href=/a>a</a></html>")},
		{URL: "http://example.com/a?q=1#frag", Date: at.Add(time.Second), Status: 404,
			Response: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("not here\r\n\r\n")},
		// A body Go's client decoded: the Content-Length it had (of the
		// gzip) is replaced by the decoded length.
		{URL: "https://example.com/bin", Date: at.Add(2 * time.Second), Status: 200,
			Response: http.Header{"Content-Length": {"3"}, "X-Odd": {"line\r\nbreak"}}, Body: bytes.Repeat([]byte{0, 1, 2, 0xff}, 5000)},
		{URL: "http://example.com/empty", Date: at.Add(3 * time.Second), Status: 204},
	}
}

// write returns a file of a warcinfo record and the exchanges, and the
// exchanges' response spans.
func write(t *testing.T) ([]byte, []Span) { return writeWith(t, NewWriter) }

// writers are the two kinds of file: gzip members with digests, and
// plain records without.
var writers = []struct {
	name, ext string
	new       func(io.Writer, int64) *Writer
}{{"gzip", ".warc.gz", NewWriter}, {"plain", ".warc", NewPlainWriter}}

func writeWith(t *testing.T, newWriter func(io.Writer, int64) *Writer) ([]byte, []Span) {
	t.Helper()
	var buf bytes.Buffer
	w := newWriter(&buf, 0)
	if _, err := w.Info("test.warc.gz", "crawler-test", at); err != nil {
		t.Fatal(err)
	}
	var spans []Span
	for _, e := range exchanges() {
		s, err := w.WriteExchange(e)
		if err != nil {
			t.Fatal(err)
		}
		spans = append(spans, s)
	}
	if w.Offset() != int64(buf.Len()) {
		t.Errorf("offset %d after writing %d bytes", w.Offset(), buf.Len())
	}
	return buf.Bytes(), spans
}

// TestRoundTrip: each response is read back from its span alone, as a
// ranged read would give it.
func TestRoundTrip(t *testing.T) {
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) { roundTrip(t, wr.new) })
	}
}

func roundTrip(t *testing.T, newWriter func(io.Writer, int64) *Writer) {
	file, spans := writeWith(t, newWriter)
	for i, e := range exchanges() {
		s := spans[i]
		got, err := ReadResponse(bytes.NewReader(file[s.Offset : s.Offset+s.Length]))
		if err != nil {
			t.Fatalf("%s: %v", e.URL, err)
		}
		if got.URL != e.URL || got.Status != e.Status || !got.Date.Equal(e.Date) || !bytes.Equal(got.Body, e.Body) {
			t.Errorf("read back %s %d %v (%d bytes), want %s %d %v (%d bytes)", got.URL, got.Status, got.Date, len(got.Body),
				e.URL, e.Status, e.Date, len(e.Body))
		}
		if n := got.Header.Get("Content-Length"); n != fmt.Sprint(len(e.Body)) {
			t.Errorf("%s: Content-Length %q, want the body's %d", e.URL, n, len(e.Body))
		}
		for k := range e.Response {
			if k != "Content-Length" && got.Header.Get(k) == "" {
				t.Errorf("%s: header %s lost", e.URL, k)
			}
		}
	}
	// Read from a span's offset to the end of the file: one record only.
	if got, err := ReadResponse(bytes.NewReader(file[spans[1].Offset:])); err != nil || got.Status != 404 {
		t.Errorf("from an offset: %d, %v", got.Status, err)
	}
}

func TestReadRefuses(t *testing.T) {
	file, spans := write(t)
	s := spans[0]
	rec := file[s.Offset : s.Offset+s.Length]
	flipped := bytes.Clone(rec)
	flipped[len(flipped)/2] ^= 0x40
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "read a record"},
		{"not a WARC", []byte("<html>hello</html>"), "read a record"},
		{"the warcinfo record", file[:spans[0].Offset], "warcinfo record where a response"},
		{"the request record", file[s.Offset+s.Length : spans[1].Offset], "request record where a response"},
		{"cut short", rec[:len(rec)-10], ""},
		{"a flipped byte", flipped, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadResponse(bytes.NewReader(tt.in))
			if err == nil {
				t.Fatal("read without an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want it to say %q", err, tt.want)
			}
		})
	}
}

func TestRequestTarget(t *testing.T) {
	for in, want := range map[string]string{
		"http://example.com":           "/",
		"http://example.com/":          "/",
		"http://example.com/a/b?c=d#e": "/a/b?c=d",
		"http://example.com?x=1":       "/?x=1",
		"https://example.com:8443/p":   "/p",
	} {
		if got := requestTarget(in); got != want {
			t.Errorf("requestTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestReadByWarcio: warcio (PyPI) reads the file: `warcio check`
// verifies every digest, and its ArchiveIterator finds the records,
// targets, statuses and bodies written.
func TestReadByWarcio(t *testing.T) {
	bin := warcio.Bin(t)
	for _, wr := range writers {
		t.Run(wr.name, func(t *testing.T) { readByWarcio(t, bin, wr.ext, wr.new) })
	}
}

func readByWarcio(t *testing.T, bin, ext string, newWriter func(io.Writer, int64) *Writer) {
	file, _ := writeWith(t, newWriter)
	path := filepath.Join(t.TempDir(), "test"+ext)
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	warcio.Check(t, bin, path)
	records := warcio.Records(t, bin, path)
	var responses []warcio.Record
	for _, r := range records {
		if r.Type == "response" {
			responses = append(responses, r)
		}
	}
	if len(records) != 1+2*len(exchanges()) || len(responses) != len(exchanges()) {
		t.Fatalf("warcio read %d records (%d responses), want %d", len(records), len(responses), 1+2*len(exchanges()))
	}
	for i, e := range exchanges() {
		r := responses[i]
		if r.URI != e.URL || r.Status != fmt.Sprint(e.Status) || !bytes.Equal(r.Body, e.Body) {
			t.Errorf("warcio read %s %s (%d bytes), want %s %d (%d bytes)", r.URI, r.Status, len(r.Body), e.URL, e.Status, len(e.Body))
		}
	}
}
