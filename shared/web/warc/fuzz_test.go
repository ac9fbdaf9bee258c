package warc

import (
	"bytes"
	"testing"
)

// FuzzReadResponse: whatever bytes a span holds (a corrupt object, a
// wrong offset), ReadResponse returns a response or an error, and never
// panics. A response it returns re-encodes and reads back the same, and
// ParseRecord reads every input as ReadResponse does.
func FuzzReadResponse(f *testing.F) {
	for _, wr := range writers { // gzip members and plain records
		var buf bytes.Buffer
		w := wr.new(&buf, 0)
		for _, e := range exchanges() {
			start := buf.Len()
			if _, err := w.WriteExchange(e); err != nil {
				f.Fatal(err)
			}
			f.Add(bytes.Clone(buf.Bytes()[start:]))
		}
	}
	f.Add([]byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 5\r\n\r\nHTTP/\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ReadResponse(bytes.NewReader(in))
		p, perr := ParseRecord(bytes.Clone(in))
		if (err == nil) != (perr == nil) {
			t.Fatalf("ReadResponse: %v; ParseRecord: %v", err, perr)
		}
		if err != nil {
			return
		}
		if p.Status != r.Status || !bytes.Equal(p.Body, r.Body) || p.URL != r.URL || !p.Date.Equal(r.Date) {
			t.Fatalf("ParseRecord read %d %q (%d bytes), ReadResponse %d %q (%d bytes)", p.Status, p.URL, len(p.Body),
				r.Status, r.URL, len(r.Body))
		}
		if r.Status < 100 || r.Status > 999 {
			return // gowarc reads any status line; ours are HTTP's
		}
		var out bytes.Buffer
		span, err := NewWriter(&out, 0).WriteExchange(Exchange{URL: "http://example.com/", Date: r.Date, Status: r.Status, Response: r.Header, Body: r.Body})
		if err != nil {
			return // a header or date gowarc cannot write back is no crash
		}
		again, err := ReadResponse(bytes.NewReader(out.Bytes()[span.Offset : span.Offset+span.Length]))
		if err != nil {
			t.Fatalf("a response read from the input does not read back once written: %v", err)
		}
		if again.Status != r.Status || !bytes.Equal(again.Body, r.Body) {
			t.Fatalf("read back %d (%d bytes), want %d (%d bytes)", again.Status, len(again.Body), r.Status, len(r.Body))
		}
	})
}
