// Package warc writes and reads the crawler's WARC 1.1 files (ISO 28500):
// a warcinfo record, then for each fetch a response record and the
// request record that was sent for it, each record its own gzip member.
// Because members stand alone, one record is read back from its offset
// and length (a ranged read of a file or an S3 object), and files
// concatenate into a valid file.
//
// The records are built and parsed with github.com/nlnwa/gowarc, a WARC
// library that does records and nothing else (digests, validation); the
// other maintained one, internetarchive/gowarc, is an HTTP client that
// writes WARCs and brings a TLS fingerprinting stack, a DNS client and
// caches this crawler does not use. What this package adds is the layout
// (gzip per record, offsets) and the mapping from a fetch to records.
package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/nlnwa/gowarc"
)

// Span is where one record lies in a file: its gzip member's offset and
// length in bytes.
type Span struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

// Writer appends records to a WARC file, one gzip member each.
type Writer struct {
	w   io.Writer
	off int64
	m   gowarc.Marshaler
	gz  *gzip.Writer
	buf bytes.Buffer
}

// NewWriter returns a Writer appending to w, which is at offset off of
// its file (0 for a new file).
func NewWriter(w io.Writer, off int64) *Writer {
	gz, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	return &Writer{w: w, off: off, m: gowarc.NewMarshaler(), gz: gz}
}

// Offset is the offset the next record will be written at.
func (w *Writer) Offset() int64 { return w.off }

// Info writes a warcinfo record naming the file and the software that
// wrote it.
func (w *Writer) Info(filename, software string, at time.Time) (Span, error) {
	b := gowarc.NewRecordBuilder(gowarc.Warcinfo, gowarc.WithFixDigest(false))
	defer b.Close()
	b.AddWarcHeaderTime(gowarc.WarcDate, at)
	b.AddWarcHeader(gowarc.WarcFilename, filename)
	b.AddWarcHeader(gowarc.ContentType, "application/warc-fields")
	fmt.Fprintf(b, "software: %s\r\nformat: WARC File Format 1.1\r\nconformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n", software)
	return w.write(b)
}

// Exchange is one HTTP request and the response it got, as the fetcher
// saw them. Go's HTTP client has already taken off the transfer and
// content codings (chunked, gzip) and the headers that describe them,
// so the response head written is the headers as received less those,
// and the block is the body as decoded: consistent with each other,
// which replay tools need.
type Exchange struct {
	URL      string
	Date     time.Time
	IP       string // the server's address, if known
	Method   string
	Request  http.Header
	Proto    string // "HTTP/1.1" when empty
	Status   int
	Response http.Header
	Body     []byte
}

// WriteExchange writes e's response record, then its request record
// (WARC-Concurrent-To the response), and returns the response record's
// span: what is needed to read the body back.
func (w *Writer) WriteExchange(e Exchange) (Span, error) {
	if e.URL == "" || e.Status == 0 {
		return Span{}, errors.New("warc: an exchange needs a URL and a status")
	}
	proto := e.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	resp := gowarc.NewRecordBuilder(gowarc.Response)
	defer resp.Close()
	resp.AddWarcHeader(gowarc.WarcTargetURI, e.URL)
	resp.AddWarcHeaderTime(gowarc.WarcDate, e.Date)
	resp.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
	if e.IP != "" {
		resp.AddWarcHeader(gowarc.WarcIPAddress, e.IP)
	}
	text := http.StatusText(e.Status)
	fmt.Fprintf(resp, "%s %d %s\r\n", proto, e.Status, text)
	writeHeader(resp, e.Response, len(e.Body))
	resp.Write(e.Body)
	rec, _, err := resp.Build()
	if err != nil {
		return Span{}, fmt.Errorf("warc: build the response record of %s: %w", e.URL, err)
	}
	defer rec.Close()
	span, err := w.marshal(rec)
	if err != nil {
		return Span{}, err
	}

	req := gowarc.NewRecordBuilder(gowarc.Request)
	defer req.Close()
	req.AddWarcHeader(gowarc.WarcTargetURI, e.URL)
	req.AddWarcHeaderTime(gowarc.WarcDate, e.Date)
	req.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=request")
	req.AddWarcHeader(gowarc.WarcConcurrentTo, "<"+rec.RecordId()+">")
	method := e.Method
	if method == "" {
		method = http.MethodGet
	}
	fmt.Fprintf(req, "%s %s HTTP/1.1\r\n", method, requestTarget(e.URL))
	writeHeader(req, e.Request, -1)
	if _, err := w.write(req); err != nil {
		return Span{}, err
	}
	return span, nil
}

// requestTarget is the origin form of u (path and query) for the request
// line; the host is in the Host header.
func requestTarget(u string) string {
	rest := u
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[i:]
	} else {
		rest = "/"
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	if strings.HasPrefix(rest, "?") {
		rest = "/" + rest
	}
	return rest
}

// writeHeader writes h in a stable order, then the blank line. With
// n >= 0 it states the body's length, which Go's client may have dropped
// (a chunked or compressed response).
func writeHeader(w io.Writer, h http.Header, n int) {
	keys := make([]string, 0, len(h))
	for k := range h {
		if n >= 0 && strings.EqualFold(k, "Content-Length") {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(w, "%s: %s\r\n", k, strings.NewReplacer("\r", " ", "\n", " ").Replace(v))
		}
	}
	if n >= 0 {
		fmt.Fprintf(w, "Content-Length: %d\r\n", n)
	}
	io.WriteString(w, "\r\n")
}

// WriteResource writes a resource record: data as it is, named by uri
// (the crawler's own records, such as text piles, are urn: URIs).
func (w *Writer) WriteResource(uri string, at time.Time, contentType string, data []byte) (Span, error) {
	b := gowarc.NewRecordBuilder(gowarc.Resource)
	defer b.Close()
	b.AddWarcHeader(gowarc.WarcTargetURI, uri)
	b.AddWarcHeaderTime(gowarc.WarcDate, at)
	b.AddWarcHeader(gowarc.ContentType, contentType)
	b.Write(data)
	return w.write(b)
}

func (w *Writer) write(b gowarc.WarcRecordBuilder) (Span, error) {
	rec, _, err := b.Build()
	if err != nil {
		return Span{}, fmt.Errorf("warc: build a record: %w", err)
	}
	defer rec.Close()
	return w.marshal(rec)
}

// marshal writes rec as one gzip member.
func (w *Writer) marshal(rec gowarc.WarcRecord) (Span, error) {
	w.buf.Reset()
	w.gz.Reset(&w.buf)
	if _, _, err := w.m.Marshal(w.gz, rec, 0); err != nil {
		return Span{}, fmt.Errorf("warc: write a %s record: %w", rec.Type(), err)
	}
	if err := w.gz.Close(); err != nil {
		return Span{}, fmt.Errorf("warc: compress a %s record: %w", rec.Type(), err)
	}
	n, err := w.w.Write(w.buf.Bytes())
	span := Span{Offset: w.off, Length: int64(n)}
	w.off += int64(n)
	if err != nil {
		return Span{}, fmt.Errorf("warc: write a %s record: %w", rec.Type(), err)
	}
	return span, nil
}

// Response is a response record read back.
type Response struct {
	URL    string
	Date   time.Time
	Status int
	Header http.Header
	Body   []byte
}

// maxBody bounds what ReadResponse returns, whatever a corrupt record's
// lengths claim.
const maxBody = 1 << 30

// ReadResponse reads the response record at the start of r (a span's
// bytes, or a file from a record's offset). A record that is not a
// response, or whose digest or framing is wrong, is an error.
func ReadResponse(r io.Reader) (resp Response, err error) {
	// gowarc v1.6.0 indexes out of range on some malformed records (a
	// version line "WARC/\n", found by FuzzReadResponse): a panic in the
	// library is a corrupt record, not a crash.
	defer func() {
		if p := recover(); p != nil {
			resp, err = Response{}, fmt.Errorf("warc: read a record: malformed (%v)", p)
		}
	}()
	u := gowarc.NewUnmarshaler(gowarc.WithSyntaxErrorPolicy(gowarc.ErrFail), gowarc.WithSpecViolationPolicy(gowarc.ErrFail),
		gowarc.WithBlockErrorPolicy(gowarc.ErrFail))
	rec, _, _, err := u.Unmarshal(bufio.NewReader(r))
	if err != nil {
		if rec != nil {
			rec.Close()
		}
		return Response{}, fmt.Errorf("warc: read a record: %w", err)
	}
	out, err := response(rec)
	// Close reads the member to its end and checks the gzip checksum
	// and the end-of-record marker.
	if cerr := rec.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("warc: the record of %s: %w", out.URL, cerr)
	}
	if err != nil {
		return Response{}, err
	}
	return out, nil
}

// ReadPayload reads the record at the start of r and returns its
// payload: a response's body, or a resource's content.
func ReadPayload(r io.Reader) ([]byte, error) {
	resp, err := ReadResponse(r)
	return resp.Body, err
}

// response reads a parsed record (whose digests Unmarshal has checked)
// as a response; a resource record reads as a 200 of its content.
func response(rec gowarc.WarcRecord) (Response, error) {
	if rec.Type() == gowarc.Resource {
		out := Response{URL: rec.WarcHeader().Get(gowarc.WarcTargetURI), Status: http.StatusOK,
			Header: http.Header{"Content-Type": {rec.WarcHeader().Get(gowarc.ContentType)}}}
		if d, err := rec.Date(); err == nil {
			out.Date = d
		}
		b, err := rec.Block().RawBytes()
		if err != nil {
			return out, fmt.Errorf("warc: the content of %s: %w", out.URL, err)
		}
		if out.Body, err = io.ReadAll(io.LimitReader(b, maxBody+1)); err != nil {
			return out, fmt.Errorf("warc: the content of %s: %w", out.URL, err)
		}
		if len(out.Body) > maxBody {
			return out, fmt.Errorf("warc: the content of %s is over %d bytes", out.URL, maxBody)
		}
		return out, nil
	}
	if rec.Type() != gowarc.Response {
		return Response{}, fmt.Errorf("warc: a %s record where a response or resource was expected", rec.Type())
	}
	out := Response{URL: rec.WarcHeader().Get(gowarc.WarcTargetURI)}
	block, ok := rec.Block().(gowarc.HttpResponseBlock)
	if !ok {
		return out, fmt.Errorf("warc: the response record of %s holds no HTTP response", out.URL)
	}
	out.Status = block.HttpStatusCode()
	if d, err := rec.Date(); err == nil {
		out.Date = d
	}
	if h := block.HttpHeader(); h != nil {
		out.Header = h.Clone()
	}
	p, err := block.PayloadBytes()
	if err != nil {
		return out, fmt.Errorf("warc: the body of %s: %w", out.URL, err)
	}
	body, err := io.ReadAll(io.LimitReader(p, maxBody+1))
	if err != nil {
		return out, fmt.Errorf("warc: the body of %s: %w", out.URL, err)
	}
	if len(body) > maxBody {
		return out, fmt.Errorf("warc: the body of %s is over %d bytes", out.URL, maxBody)
	}
	out.Body = body
	return out, nil
}
