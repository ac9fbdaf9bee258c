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

// HostBackOffs returns the hosts that asked not to be sent requests
// until a time after now, and until when (fetch.BackOffStore).
func (d *DB) HostBackOffs(ctx context.Context, now time.Time) (map[string]time.Time, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT host, until_unix_ms FROM host_back_off WHERE until_unix_ms > ?`, now.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("read the hosts' back-offs: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var host string
		var ms int64
		if err := rows.Scan(&host, &ms); err != nil {
			return nil, fmt.Errorf("read the hosts' back-offs: %w", err)
		}
		out[host] = time.UnixMilli(ms)
	}
	return out, rows.Err()
}

// PutHostBackOff keeps until when host asked not to be sent requests; a
// later time already kept stays. Back-offs past their time go.
func (d *DB) PutHostBackOff(ctx context.Context, host string, until time.Time) error {
	err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		if _, err := w.ExecContext(ctx, `DELETE FROM host_back_off WHERE until_unix_ms <= ?`, time.Now().UnixMilli()); err != nil {
			return err
		}
		_, err := w.ExecContext(ctx, `INSERT INTO host_back_off(host, until_unix_ms) VALUES(?, ?)
			ON CONFLICT(host) DO UPDATE SET until_unix_ms = max(until_unix_ms, excluded.until_unix_ms)`, host, until.UnixMilli())
		return err
	})
	if err != nil {
		return fmt.Errorf("keep the back-off of %s: %w", host, err)
	}
	return nil
}
