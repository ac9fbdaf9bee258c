package warc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Objects is where a Packer writes its WARC files and reads records
// back: a blob store (s3blob.Store on AWS, blobfs.Store on disk).
type Objects interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// Packer keeps raw bodies as WARC response records, many to a file:
// one object PUT for the bodies of a batch rather than one a body (S3
// bills by the request). Keep returns a body's key only once the file
// holding it is stored, so a crawl record never names a body that is
// not there; the bodies of the handlers working at once share a file.
//
// The batch is the handlers between Enter and Leave: a file is written
// as soon as every handler that has entered is waiting in Keep (or has
// left), or it holds MaxBytes, or MaxWait has passed since its first
// body. A Keep outside Enter and Leave writes its body at once.
type Packer struct {
	objects Objects
	cfg     PackConfig

	mu     sync.Mutex
	active int // handlers between Enter and Leave
	cur    *pack
}

// PackConfig is a Packer's settings.
type PackConfig struct {
	Prefix   string        // of the files' keys, e.g. "warc/"
	Software string        // named in each file's warcinfo record
	MaxBytes int           // a file is written once it holds this much (default 32 MiB)
	MaxWait  time.Duration // nor does its first body wait longer (default 10 s)
	Now      func() time.Time
}

type pack struct {
	key     string
	buf     bytes.Buffer
	w       *Writer
	waiters int
	timer   *time.Timer
	done    chan struct{}
	err     error
}

// NewPacker returns a Packer writing to objects.
func NewPacker(objects Objects, cfg PackConfig) *Packer {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 32 << 20
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = 10 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Packer{objects: objects, cfg: cfg}
}

// Enter counts a handler in the current batch; Leave counts it out.
func (p *Packer) Enter() {
	p.mu.Lock()
	p.active++
	p.mu.Unlock()
}

// Leave counts a handler out of the batch; the file its peers wait on is
// written if they are all waiting now.
func (p *Packer) Leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.active--
	if p.cur != nil && p.cur.waiters >= p.active {
		p.flushLocked()
	}
}

// Keep writes x's response and request records to the current file and
// returns the key its body is read back by (a Ref), once the file is
// stored.
func (p *Packer) Keep(ctx context.Context, x Exchange) (string, error) {
	key, err := p.keep(ctx, func(w *Writer) (Span, error) { return w.WriteExchange(x) })
	if err != nil {
		return "", fmt.Errorf("keep the body of %s: %w", x.URL, err)
	}
	return key, nil
}

// KeepResource writes data as a resource record named uri to the
// current file and returns the key it is read back by (Get), once the
// file is stored: the summarizer keeps text piles this way.
func (p *Packer) KeepResource(ctx context.Context, uri, contentType string, data []byte) (string, error) {
	key, err := p.keep(ctx, func(w *Writer) (Span, error) { return w.WriteResource(uri, p.cfg.Now(), contentType, data) })
	if err != nil {
		return "", fmt.Errorf("keep %s: %w", uri, err)
	}
	return key, nil
}

// Resource is one record for KeepResources.
type Resource struct {
	URI, ContentType string
	Data             []byte
}

// KeepResources writes several resource records to the current file at
// once and returns their keys, in order, once the file is stored: one
// wait for the batch's file, where a KeepResource each would wait for
// one file after another.
func (p *Packer) KeepResources(ctx context.Context, rs []Resource) ([]string, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	spans := make([]Span, len(rs))
	key, err := p.keep(ctx, func(w *Writer) (Span, error) {
		for i, r := range rs {
			s, err := w.WriteResource(r.URI, p.cfg.Now(), r.ContentType, r.Data)
			if err != nil {
				return Span{}, fmt.Errorf("keep %s: %w", r.URI, err)
			}
			spans[i] = s
		}
		return spans[0], nil
	})
	if err != nil {
		return nil, err
	}
	ref, _ := ParseRef(key)
	keys := make([]string, len(rs))
	for i, s := range spans {
		keys[i] = Ref{Object: ref.Object, Span: s}.String()
	}
	return keys, nil
}

func (p *Packer) keep(ctx context.Context, write func(*Writer) (Span, error)) (string, error) {
	p.mu.Lock()
	if p.cur == nil {
		if err := p.openLocked(); err != nil {
			p.mu.Unlock()
			return "", err
		}
	}
	pk := p.cur
	span, err := write(pk.w)
	if err != nil {
		p.mu.Unlock()
		return "", err
	}
	pk.waiters++
	if pk.waiters >= p.active || pk.buf.Len() >= p.cfg.MaxBytes {
		p.flushLocked()
	}
	p.mu.Unlock()
	select {
	case <-pk.done:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if pk.err != nil {
		return "", pk.err
	}
	return Ref{Object: pk.key, Span: span}.String(), nil
}

func (p *Packer) openLocked() error {
	var id [16]byte
	rand.Read(id[:])
	now := p.cfg.Now().UTC()
	name := now.Format("20060102150405") + "-" + hex.EncodeToString(id[:]) + ".warc.gz"
	pk := &pack{key: p.cfg.Prefix + now.Format("2006/01/02/") + name, done: make(chan struct{})}
	pk.w = NewWriter(&pk.buf, 0)
	if _, err := pk.w.Info(name, p.cfg.Software, now); err != nil {
		return err
	}
	pk.timer = time.AfterFunc(p.cfg.MaxWait, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.cur == pk {
			p.flushLocked()
		}
	})
	p.cur = pk
	return nil
}

// flushLocked writes the current file, in a goroutine of its own: it
// serves every body in it, whoever stops waiting.
func (p *Packer) flushLocked() {
	pk := p.cur
	p.cur = nil
	pk.timer.Stop()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		pk.err = p.objects.Put(ctx, pk.key, pk.buf.Bytes())
		close(pk.done)
	}()
}

// Put stores data under key as it is (parsed documents, text piles).
func (p *Packer) Put(ctx context.Context, key string, data []byte) error {
	return p.objects.Put(ctx, key, data)
}

// Get returns the body a Keep key names, or the data a KeepResource key
// names (read with a ranged read of its record), or, for any other key,
// the data stored under it.
func (p *Packer) Get(ctx context.Context, key string) ([]byte, error) {
	ref, ok := ParseRef(key)
	if !ok {
		return p.objects.Get(ctx, key)
	}
	return ReadRef(ctx, p.objects, ref)
}

// Ranger reads part of an object: what a record is read back with.
type Ranger interface {
	GetRange(ctx context.Context, key string, off, n int64) ([]byte, error)
}

// ReadRef reads the payload of the record ref names, with one ranged
// read of its file.
func ReadRef(ctx context.Context, objects Ranger, ref Ref) ([]byte, error) {
	b, err := objects.GetRange(ctx, ref.Object, ref.Span.Offset, ref.Span.Length)
	if err != nil {
		return nil, fmt.Errorf("read the body at %s: %w", ref, err)
	}
	payload, err := ParsePayload(b)
	if err != nil {
		return nil, fmt.Errorf("read the record at %s: %w", ref, err)
	}
	return payload, nil
}

// Ref names one record: its file's key (a .warc.gz or .warc file) and
// its span, written "FILE#OFFSET,LENGTH".
type Ref struct {
	Object string
	Span   Span
}

func (r Ref) String() string {
	return r.Object + "#" + strconv.FormatInt(r.Span.Offset, 10) + "," + strconv.FormatInt(r.Span.Length, 10)
}

// ParseRef reads a Ref; ok is false for any other key.
func ParseRef(key string) (Ref, bool) {
	i := strings.LastIndexByte(key, '#')
	if i < 0 || !strings.HasSuffix(key[:i], ".warc.gz") && !strings.HasSuffix(key[:i], ".warc") {
		return Ref{}, false
	}
	off, n, found := strings.Cut(key[i+1:], ",")
	if !found {
		return Ref{}, false
	}
	o, err1 := strconv.ParseInt(off, 10, 64)
	l, err2 := strconv.ParseInt(n, 10, 64)
	if err1 != nil || err2 != nil || o < 0 || l <= 0 {
		return Ref{}, false
	}
	return Ref{Object: key[:i], Span: Span{Offset: o, Length: l}}, true
}
