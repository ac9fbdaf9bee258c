// Package pipeline runs the four stages in one process: the embedded
// home of the crawler. Queues and metadata live in one SQLite file in the
// data directory and bodies in files beside it, so a crawl killed at any
// moment and run again continues where it stopped.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/serverless-crawler/crawler/shared/local/blobfs"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// The queue names.
const (
	QueueEnqueue   = "enqueue"
	QueueFetch     = "fetch"
	QueueParse     = "parse"
	QueueSummarize = "summarize"
)

var allQueues = []string{QueueEnqueue, QueueFetch, QueueParse, QueueSummarize}

// durableQueues are the queues kept in the database: all but the fetch
// queue, which is in memory (queues).
var durableQueues = []string{QueueEnqueue, QueueParse, QueueSummarize}

// DataDir is an open data directory: the database, the blob store, and
// a lock that keeps a second process out.
type DataDir struct {
	Path  string
	DB    *sqlite.DB
	Blobs *blobfs.Store
	lock  *os.File
}

// ErrLocked means another process has the data directory open.
var ErrLocked = errors.New("data directory is in use by another crawler process")

// OpenDataDir opens (creating if needed) a data directory.
// The options are the database's (sqlite.Open).
func OpenDataDir(ctx context.Context, dir string, opts ...sqlite.Option) (*DataDir, error) {
	if dir == "" {
		return nil, fmt.Errorf("no data directory given")
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("data directory %s is a file", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("data directory %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("data directory %s is not writable: %w", dir, err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "crawl.db"), opts...)
	if err != nil {
		lock.Close()
		return nil, err
	}
	blobs, err := blobfs.New(filepath.Join(dir, "blobs"))
	if err != nil {
		db.Close()
		lock.Close()
		return nil, err
	}
	return &DataDir{Path: dir, DB: db, Blobs: blobs, lock: lock}, nil
}

// Close closes the bodies' WARC file and the database and releases the
// lock.
func (d *DataDir) Close() error {
	err := errors.Join(d.Blobs.Close(), d.DB.Close())
	d.lock.Close()
	return err
}
