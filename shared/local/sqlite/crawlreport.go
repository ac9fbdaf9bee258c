package sqlite

import (
	"context"
	"fmt"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// EachCrawl hands every recorded crawl, with its stored body's size (nil:
// none), to f, in the order they were recorded: the crawl report's input.
// A crawl that fetched content is handed on as a duplicate when its
// summary says so (crawl.ReportedExit).
func (d *DB) EachCrawl(ctx context.Context, f func(crawl.CrawlLog, *int64) error) error {
	rows, err := d.db.QueryContext(ctx, `SELECT u.url, l.crawl_uuid, l.crawl_type, l.time_started_unix_utc, l.time_taken_ms,
		l.exit_code, (SELECT s.exit_code FROM crawl_summary s WHERE s.crawl_uuid = l.crawl_uuid),
		(SELECT file_size FROM file WHERE file.crawl_log_id = l.crawl_log_id LIMIT 1)
		FROM crawl_log l JOIN url u ON u.url_id = l.url_id ORDER BY l.crawl_log_id`)
	if err != nil {
		return fmt.Errorf("read the crawl log: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l crawl.CrawlLog
		var size *int64
		var summarized *crawl.ExitCode
		if err := rows.Scan(&l.URL, &l.CrawlUUID, &l.CrawlType, &l.TimeStarted, &l.TimeTakenMS, &l.ExitCode, &summarized, &size); err != nil {
			return fmt.Errorf("read the crawl log: %w", err)
		}
		l.ExitCode = crawl.ReportedExit(l.ExitCode, summarized != nil && *summarized == crawl.ExitDuplicate)
		if err := f(l, size); err != nil {
			return err
		}
	}
	return rows.Err()
}

// EachCandidate hands every known URL's candidate to f, one row at a
// time (a crawl may know millions).
func (d *DB) EachCandidate(ctx context.Context, f func(crawl.Candidate) error) error {
	rows, err := d.db.QueryContext(ctx, `SELECT `+d.older.columns(candidateColumns, "crawl_frontier", "f")+candidateFrom+` ORDER BY f.url_id`)
	if err != nil {
		return fmt.Errorf("read the candidates: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCandidate(rows)
		if err != nil {
			return fmt.Errorf("read the candidates: %w", err)
		}
		if err := f(c); err != nil {
			return err
		}
	}
	return rows.Err()
}

// DuplicateCount counts the open generations marked duplicate.
func (d *DB) DuplicateCount(ctx context.Context) (int, error) {
	var n int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM entity_generation WHERE marked_duplicate=1
		AND confirmed_end_unix_utc IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count duplicates: %w", err)
	}
	return n, nil
}
