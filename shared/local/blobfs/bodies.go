package blobfs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// Fetched bodies are appended to WARC files (WARC 1.1, plain records:
// warc.NewPlainWriter) under warc/YYYY/MM/DD/ in the store's directory,
// a file at a time, each file started by this process and never
// appended to by another: a key names a record in a file
// (warc.Ref, "FILE#OFFSET,LENGTH"), and Get reads it back with one
// ranged read. One file a body had cost a file creation, a rename and a
// directory check per page: 11% of the CPU of a crawl of the PostgreSQL
// manual's short pages (BENCHMARKS.md); a write to an open file is one
// system call. The files are valid WARC files as they stand, for any
// WARC tool; `crawler export --warc` writes one gzipped file of the
// whole crawl. Bodies kept before this layout are files under raw/ and
// read back by their keys as before.

// MaxWARCBytes is the size past which Keep starts a new file.
var MaxWARCBytes int64 = 1 << 30 // a variable for tests

// Software names the crawler in each WARC file's warcinfo record.
var Software = "serverless-crawler"

// Keep appends x's response and request records to the current WARC
// file and returns the key its body is read back by. The records are
// written before Keep returns, so a crawl recorded after it never names
// a body that is not there.
func (s *Store) Keep(ctx context.Context, x warc.Exchange) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || s.w.Offset() >= MaxWARCBytes {
		if err := s.openWARCLocked(); err != nil {
			return "", fmt.Errorf("keep the body of %s: %w", x.URL, err)
		}
	}
	end := s.w.Offset()
	span, err := s.w.WriteExchange(x)
	if err != nil {
		// Cut what was written of the records (a full disk stops a
		// write midway), so that the file stays valid WARC; the next
		// body goes to a new file.
		key, terr := s.curKey, s.cur.Truncate(end)
		s.closeWARCLocked()
		if terr != nil {
			err = errors.Join(err, fmt.Errorf("cut the torn record off %s: %w", key, terr))
		}
		return "", fmt.Errorf("keep the body of %s: %w", x.URL, err)
	}
	return warc.Ref{Object: s.curKey, Span: span}.String(), nil
}

// openWARCLocked starts a new WARC file with its warcinfo record.
func (s *Store) openWARCLocked() error {
	s.closeWARCLocked()
	var id [4]byte
	rand.Read(id[:])
	now := time.Now().UTC()
	name := now.Format("20060102150405") + "-" + hex.EncodeToString(id[:]) + ".warc"
	key := "warc/" + now.Format("2006/01/02/") + name
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("start %s: %w", key, err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("start %s: %w", key, err)
	}
	// Records go straight to the file, a few writes each: a body is
	// never copied.
	w := warc.NewPlainWriter(f, 0)
	if _, err := w.Info(name, Software, now); err != nil {
		// Not left behind: a full disk would leave a file a try.
		f.Close()
		os.Remove(p)
		return fmt.Errorf("start %s: %w", key, err)
	}
	s.cur, s.curKey, s.w = f, key, w
	return nil
}

func (s *Store) closeWARCLocked() error {
	if s.cur == nil {
		return nil
	}
	err := s.cur.Close()
	s.cur, s.curKey, s.w = nil, "", nil
	return err
}

// Close closes the WARC file Keep appends to; a later Keep starts
// another.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeWARCLocked()
}
