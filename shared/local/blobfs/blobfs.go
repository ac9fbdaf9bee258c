// Package blobfs is the embedded blob store: parsed documents and other
// blobs as files under a directory, written atomically, and fetched
// bodies appended to WARC files.
package blobfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// Store keeps blobs under a directory; a key is a slash-separated path.
type Store struct {
	dir string

	// The WARC file Keep appends to (bodies.go).
	mu     sync.Mutex
	cur    *os.File
	curKey string
	w      *warc.Writer
}

// New returns a store rooted at dir, creating it if needed.
func New(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create blob dir %s: %w", dir, err)
	}
	return &Store{dir: dir}, nil
}

func (s *Store) path(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") {
		return "", crawl.Errorf(crawl.KindInvalid, "invalid blob key %q", key)
	}
	return filepath.Join(s.dir, filepath.FromSlash(key)), nil
}

// Put stores data under key. Writing an existing key replaces it; since
// keys are content hashes or crawl ids, a replacement is the same data.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("put blob %s: %w", key, err)
	}
	return nil
}

// Get returns the data stored under key, or crawl.ErrNotFound; for a
// key Keep returned, the body it kept.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if ref, ok := warc.ParseRef(key); ok {
		return warc.ReadRef(ctx, s, ref)
	}
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if missing(err) {
		return nil, fmt.Errorf("get blob %s: %w", key, crawl.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", key, err)
	}
	return b, nil
}

// GetRange returns n bytes of the data under key from offset off, or
// crawl.ErrNotFound; a range past the end is an error.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if missing(err) {
		return nil, fmt.Errorf("get blob %s: %w", key, crawl.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", key, err)
	}
	defer f.Close()
	if off < 0 || n <= 0 {
		return nil, fmt.Errorf("get blob %s: invalid range %d+%d", key, off, n)
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		return nil, fmt.Errorf("get blob %s, %d bytes at %d: %w", key, n, off, err)
	}
	return b, nil
}

// missing reports whether err says a key names no blob: no such file, or
// a key naming a directory (a prefix of other keys) or a path under a
// blob, which name no blob either, as in S3.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EISDIR) || errors.Is(err, syscall.ENOTDIR)
}
