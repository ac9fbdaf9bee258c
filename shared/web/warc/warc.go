// Package warc writes and reads the crawler's WARC 1.1 files (ISO 28500):
// a warcinfo record, then for each fetch a response record and the
// request record that was sent for it, each record its own gzip member.
// Because members stand alone, one record is read back from its offset
// and length (a ranged read of a file or an S3 object), and files
// concatenate into a valid file.
//
// Written by hand, not with a library: github.com/nlnwa/gowarc (records
// only, the natural fit) writes a global of google/uuid
// (EnableRandPool) every time it builds or parses a record, a data race
// with every other UUID made in the process, which `make race` caught;
// it also panicked on some malformed records. internetarchive/gowarc is
// an HTTP client that writes WARCs, with a TLS-fingerprinting stack, a
// DNS client and caches. The framing this package needs is small (a
// version line, header fields, a block, two CRLFs; SHA-1 digests in
// base32), and every file it writes is read back by warcio, the library
// pywb is built on, in the tests.
package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// Span is where one record lies in a file: its gzip member's offset and
// length in bytes.
type Span struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

// Writer appends records to a WARC file, one gzip member each (or, from
// NewPlainWriter, uncompressed).
type Writer struct {
	w   io.Writer
	off int64
	gz  *gzip.Writer // nil: plain records
	buf bytes.Buffer
}

// NewWriter returns a Writer appending to w, which is at offset off of
// its file (0 for a new file).
func NewWriter(w io.Writer, off int64) *Writer {
	gz, _ := gzip.NewWriterLevel(io.Discard, gzip.DefaultCompression)
	return &Writer{w: w, off: off, gz: gz}
}

// NewPlainWriter returns a Writer of uncompressed records without
// digests (both optional in WARC 1.1), for files that are written on
// the crawl's path and read back a record at a time: the embedded
// home's bodies, where compressing and hashing each body cost more CPU
// than the rest of keeping it. Such a file is named .warc, not .warc.gz.
func NewPlainWriter(w io.Writer, off int64) *Writer {
	return &Writer{w: w, off: off}
}

// Offset is the offset the next record will be written at.
func (w *Writer) Offset() int64 { return w.off }

// field is one WARC header field.
type field struct{ name, value string }

// Info writes a warcinfo record naming the file and the software that
// wrote it.
func (w *Writer) Info(filename, software string, at time.Time) (Span, error) {
	block := fmt.Sprintf("software: %s\r\nformat: WARC File Format 1.1\r\n"+
		"conformsTo: https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n", software)
	_, span, err := w.record("warcinfo", at, []field{{"WARC-Filename", filename}, {"Content-Type", "application/warc-fields"}},
		[][]byte{[]byte(block)}, nil)
	return span, err
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
	if e.URL == "" || e.Status < 100 || e.Status > 999 {
		return Span{}, errors.New("warc: an exchange needs a URL and an HTTP status")
	}
	proto := e.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	var resp bytes.Buffer
	fmt.Fprintf(&resp, "%s %d %s\r\n", proto, e.Status, http.StatusText(e.Status))
	writeHeader(&resp, e.Response, len(e.Body))
	fields := []field{{"WARC-Target-URI", e.URL}, {"Content-Type", "application/http;msgtype=response"}}
	if e.IP != "" {
		fields = append(fields, field{"WARC-IP-Address", e.IP})
	}
	id, span, err := w.record("response", e.Date, fields, [][]byte{resp.Bytes(), e.Body}, e.Body)
	if err != nil {
		return Span{}, fmt.Errorf("warc: the response record of %s: %w", e.URL, err)
	}

	var req bytes.Buffer
	method := e.Method
	if method == "" {
		method = http.MethodGet
	}
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\n", method, requestTarget(e.URL))
	writeHeader(&req, e.Request, -1)
	if _, _, err := w.record("request", e.Date, []field{{"WARC-Target-URI", e.URL},
		{"Content-Type", "application/http;msgtype=request"}, {"WARC-Concurrent-To", id}}, [][]byte{req.Bytes()}, nil); err != nil {
		return Span{}, fmt.Errorf("warc: the request record of %s: %w", e.URL, err)
	}
	return span, nil
}

// WriteResource writes a resource record: data as it is, named by uri
// (the crawler's own records, such as text piles, are urn: URIs).
func (w *Writer) WriteResource(uri string, at time.Time, contentType string, data []byte) (Span, error) {
	_, span, err := w.record("resource", at, []field{{"WARC-Target-URI", uri}, {"Content-Type", contentType}}, [][]byte{data}, data)
	if err != nil {
		return Span{}, fmt.Errorf("warc: the resource record of %s: %w", uri, err)
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

// oneLine keeps a header value on its line.
var oneLine = strings.NewReplacer("\r", " ", "\n", " ")

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
			fmt.Fprintf(w, "%s: %s\r\n", oneLine.Replace(k), oneLine.Replace(v))
		}
	}
	if n >= 0 {
		fmt.Fprintf(w, "Content-Length: %d\r\n", n)
	}
	io.WriteString(w, "\r\n")
}

// digest is a WARC digest field's value: SHA-1 in base32, as warcio and
// most WARC tools write and check it.
func digest(parts ...[]byte) string {
	h := sha1.New()
	for _, b := range parts {
		h.Write(b)
	}
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))
}

// record writes one record, its block given in parts: as one gzip
// member, or plain (in parts, straight to the file: a body is not
// copied). The fields are the version line, the named fields (with the
// record's id, date and, in a gzip file, the block digest and, when
// payload is not nil, the payload digest), the block and the closing
// CRLFs. It returns the record's id.
func (w *Writer) record(typ string, at time.Time, fields []field, block [][]byte, payload []byte) (string, Span, error) {
	id := "<urn:uuid:" + uuid.NewString() + ">"
	var h bytes.Buffer
	fmt.Fprintf(&h, "WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: %s\r\nWARC-Date: %s\r\n", typ, id, at.UTC().Format(time.RFC3339))
	for _, f := range fields {
		fmt.Fprintf(&h, "%s: %s\r\n", f.name, oneLine.Replace(f.value))
	}
	if w.gz != nil {
		fmt.Fprintf(&h, "WARC-Block-Digest: %s\r\n", digest(block...))
		if payload != nil {
			fmt.Fprintf(&h, "WARC-Payload-Digest: %s\r\n", digest(payload))
		}
	}
	size := 0
	for _, b := range block {
		size += len(b)
	}
	fmt.Fprintf(&h, "Content-Length: %d\r\n\r\n", size)
	parts := append(append([][]byte{h.Bytes()}, block...), []byte("\r\n\r\n"))
	if w.gz == nil {
		n := 0
		for _, b := range parts {
			k, err := w.w.Write(b)
			n += k
			if err != nil {
				w.off += int64(n)
				return "", Span{}, fmt.Errorf("write a %s record: %w", typ, err)
			}
		}
		span := Span{Offset: w.off, Length: int64(n)}
		w.off += int64(n)
		return id, span, nil
	}
	w.buf.Reset()
	w.gz.Reset(&w.buf)
	for _, b := range parts {
		if _, err := w.gz.Write(b); err != nil {
			return "", Span{}, fmt.Errorf("compress a %s record: %w", typ, err)
		}
	}
	if err := w.gz.Close(); err != nil {
		return "", Span{}, fmt.Errorf("compress a %s record: %w", typ, err)
	}
	n, err := w.w.Write(w.buf.Bytes())
	span := Span{Offset: w.off, Length: int64(n)}
	w.off += int64(n)
	if err != nil {
		return "", Span{}, fmt.Errorf("write a %s record: %w", typ, err)
	}
	return id, span, nil
}

// Response is a response (or resource) record read back.
type Response struct {
	URL    string
	Date   time.Time
	Status int
	Header http.Header
	Body   []byte
}

// maxBody bounds the block ReadResponse reads, whatever a corrupt
// record's Content-Length claims.
const maxBody = 1 << 30

// ReadResponse reads the response record at the start of r (a span's
// bytes, or a file from a record's offset), gzipped or not. A resource
// record reads as a 200 of its content. Any other record, or one whose
// framing, gzip checksum or block digest is wrong, is an error.
func ReadResponse(r io.Reader) (Response, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return Response{}, fmt.Errorf("warc: read a record: %w", err)
		}
		zr.Multistream(false)
		out, err := readRecord(bufio.NewReader(zr))
		if err != nil {
			return Response{}, err
		}
		// To the member's end, which checks its CRC and length.
		if _, err := io.Copy(io.Discard, zr); err != nil {
			return Response{}, fmt.Errorf("warc: the record of %s: %w", out.URL, err)
		}
		return out, nil
	}
	return readRecord(br)
}

// ReadPayload reads the record at the start of r and returns its
// payload: a response's body, or a resource's content.
func ReadPayload(r io.Reader) ([]byte, error) {
	resp, err := ReadResponse(r)
	return resp.Body, err
}

// ParseRecord is ReadResponse of a record held whole in b (a span's
// bytes, from a ranged read). A plain record is read in place: the body
// it returns is part of b, not a copy, so that a 50 MB body read back
// takes 50 MB, not the several times that copying it through readers
// does. A gzipped one is read as ReadResponse reads it.
func ParseRecord(b []byte) (Response, error) {
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		return ReadResponse(bytes.NewReader(b))
	}
	br := bytes.NewReader(b)
	r := bufio.NewReaderSize(br, 4096)
	fields, out, n, err := readHeader(r)
	if err != nil {
		return out, err
	}
	start := int64(len(b)) - int64(br.Len()) - int64(r.Buffered())
	if n > int64(len(b))-start {
		return out, fmt.Errorf("warc: the block of %s: %w", out.URL, io.ErrUnexpectedEOF)
	}
	block := b[start : start+n : start+n]
	if end := b[start+n:]; len(end) < 4 || string(end[:4]) != "\r\n\r\n" {
		return out, fmt.Errorf("warc: the record of %s does not end with CRLF CRLF", out.URL)
	}
	return finishRecord(fields, out, block)
}

// ParsePayload is ParseRecord's payload.
func ParsePayload(b []byte) ([]byte, error) {
	resp, err := ParseRecord(b)
	return resp.Body, err
}

// maxHeader bounds a record's header fields.
const maxHeader = 64 << 10

// maxExact is the largest block read into a buffer of exactly its
// Content-Length at once; a longer one (up to maxBody) is read as it
// comes, so that a corrupt length cannot make a huge allocation.
const maxExact = 64 << 20

func readRecord(r *bufio.Reader) (Response, error) {
	fields, out, n, err := readHeader(r)
	if err != nil {
		return out, err
	}
	var block []byte
	if n <= maxExact {
		block = make([]byte, n)
		if _, err = io.ReadFull(r, block); errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
	} else {
		block, err = io.ReadAll(io.LimitReader(r, n))
		if err == nil && int64(len(block)) < n {
			err = io.ErrUnexpectedEOF
		}
	}
	if err != nil {
		return out, fmt.Errorf("warc: the block of %s: %w", out.URL, err)
	}
	if end := make([]byte, 4); !readFull(r, end) || string(end) != "\r\n\r\n" {
		return out, fmt.Errorf("warc: the record of %s does not end with CRLF CRLF", out.URL)
	}
	return finishRecord(fields, out, block)
}

// readHeader reads a record's version line and header fields, and
// returns the fields (names lower-cased), the response as far as they
// tell it, and the block's length.
func readHeader(r *bufio.Reader) (map[string]string, Response, int64, error) {
	line, err := readLine(r)
	if err != nil {
		return nil, Response{}, 0, fmt.Errorf("warc: read a record: %w", err)
	}
	if line != "WARC/1.1" && line != "WARC/1.0" {
		return nil, Response{}, 0, fmt.Errorf("warc: read a record: it starts %q, not a WARC version", truncate(line, 40))
	}
	fields := map[string]string{}
	size := 0
	for {
		line, err := readLine(r)
		if err != nil {
			return nil, Response{}, 0, fmt.Errorf("warc: read a record's header: %w", err)
		}
		if line == "" {
			break
		}
		if size += len(line); size > maxHeader {
			return nil, Response{}, 0, fmt.Errorf("warc: a record's header is over %d bytes", maxHeader)
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, Response{}, 0, fmt.Errorf("warc: a header line %q has no colon", truncate(line, 40))
		}
		fields[strings.ToLower(strings.TrimSpace(name))] = strings.TrimSpace(value)
	}
	out := Response{URL: fields["warc-target-uri"]}
	if d, err := time.Parse(time.RFC3339Nano, fields["warc-date"]); err == nil {
		out.Date = d
	}
	n, err := strconv.ParseInt(fields["content-length"], 10, 64)
	if err != nil || n < 0 || n > maxBody {
		return nil, out, 0, fmt.Errorf("warc: the record of %s: Content-Length %q", out.URL, fields["content-length"])
	}
	return fields, out, n, nil
}

// finishRecord checks a block against its digest and reads the response
// (or resource) it holds. A response's body is part of block when the
// HTTP head says it is the rest of it (no transfer coding), as the
// records this package writes say.
func finishRecord(fields map[string]string, out Response, block []byte) (Response, error) {
	if d := fields["warc-block-digest"]; strings.HasPrefix(strings.ToLower(d), "sha1:") && !strings.EqualFold(d, digest(block)) {
		return out, fmt.Errorf("warc: the block of %s does not match its digest", out.URL)
	}
	switch typ := fields["warc-type"]; typ {
	case "resource":
		out.Status, out.Header, out.Body = http.StatusOK, http.Header{"Content-Type": {fields["content-type"]}}, block
		return out, nil
	case "response":
	default:
		return out, fmt.Errorf("warc: a %s record where a response or resource was expected", typ)
	}
	br := bytes.NewReader(block)
	hr := bufio.NewReader(br)
	resp, err := http.ReadResponse(hr, nil)
	if err != nil {
		return out, fmt.Errorf("warc: the HTTP response of %s: %w", out.URL, err)
	}
	defer resp.Body.Close()
	rest := block[len(block)-br.Len()-hr.Buffered():]
	if len(resp.TransferEncoding) == 0 && resp.ContentLength == int64(len(rest)) {
		out.Body = rest
	} else if out.Body, err = io.ReadAll(resp.Body); err != nil {
		return out, fmt.Errorf("warc: the body of %s: %w", out.URL, err)
	}
	out.Status, out.Header = resp.StatusCode, resp.Header
	if resp.ContentLength >= 0 && out.Header.Get("Content-Length") == "" {
		out.Header.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	return out, nil
}

// readLine reads a CRLF (or LF) terminated line, without the ending.
func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		return "", errors.New("a line is too long")
	}
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

func readFull(r io.Reader, b []byte) bool {
	_, err := io.ReadFull(r, b)
	return err == nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
