package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// GetRobots returns the robots.txt last fetched from origin, or
// crawl.ErrNotFound. The fetch stage decides whether it is still fresh.
func (d *DB) GetRobots(ctx context.Context, origin string) (crawl.RobotsFile, error) {
	var f crawl.RobotsFile
	var ms int64
	err := d.queryRow(ctx, `SELECT status, body, fetched_at_ms FROM robots_file WHERE origin = ?`, origin).
		Scan(&f.Status, &f.Body, &ms)
	if errors.Is(err, sql.ErrNoRows) {
		return crawl.RobotsFile{}, crawl.ErrNotFound
	}
	if err != nil {
		return crawl.RobotsFile{}, fmt.Errorf("get robots.txt of %s: %w", origin, err)
	}
	f.FetchedAt = time.UnixMilli(ms)
	if f.Body == nil { // an empty BLOB scans as nil
		f.Body = []byte{}
	}
	return f, nil
}

// PutRobots keeps a fetched robots.txt; an older fetch arriving late
// does not replace a newer one.
func (d *DB) PutRobots(ctx context.Context, origin string, f crawl.RobotsFile) error {
	body := f.Body
	if body == nil {
		body = []byte{}
	}
	_, err := d.exec(ctx, `INSERT INTO robots_file(origin, status, body, fetched_at_ms) VALUES(?, ?, ?, ?)
		ON CONFLICT(origin) DO UPDATE SET status = excluded.status, body = excluded.body, fetched_at_ms = excluded.fetched_at_ms
		WHERE excluded.fetched_at_ms > robots_file.fetched_at_ms`,
		origin, f.Status, body, f.FetchedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("put robots.txt of %s: %w", origin, err)
	}
	return nil
}
