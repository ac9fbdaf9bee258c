package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Response is one HTTP response the crawl got, as the database keeps it:
// what crawler export writes as a WARC response record. The database
// keeps the headers the crawler reads (content type and language,
// X-Robots-Tag, validators, the redirect's target), not every header the
// server sent.
type Response struct {
	URL             string
	TimeSent        int64 // Unix seconds
	Status          int
	ETag            *string
	LastModified    *int64
	ContentType     *string // as the server sent it, else the MIME type the crawler settled on
	ContentLanguage *string
	XRobotsTag      *string
	Location        *string // a redirect's target
	BodyKey         *string // in the blob store; nil when no body was kept
	UserAgent       *string // the agent's User-Agent
	ExitCode        crawl.ExitCode
}

// Responses calls fn for every request that got an HTTP response, in the
// order they were recorded, and stops at fn's first error.
func (d *DB) Responses(ctx context.Context, fn func(Response) error) error {
	rows, err := d.db.QueryContext(ctx, `SELECT u.url, r.time_sent_unix_utc, r.http_status_code, r.http_etag,
		r.server_last_modified_unix_utc, coalesce(fb.content_type, m.mimetype), fb.content_language, fb.x_robots_tag,
		(SELECT tu.url FROM redirect rd JOIN url tu ON tu.url_id=rd.to_url_id WHERE rd.request_id=r.request_id LIMIT 1),
		fb.body_key, a.http_user_agent, r.exit_code
		FROM request r JOIN url u ON u.url_id=r.url_id
		JOIN crawl_log l ON l.crawl_log_id=r.crawl_log_id JOIN agent a ON a.agent_id=l.agent_id
		LEFT JOIN file f ON f.request_id=r.request_id
		LEFT JOIN file_body fb ON fb.file_id=f.file_id
		LEFT JOIN mimetype m ON m.mimetype_id=f.mimetype_id
		WHERE r.http_status_code IS NOT NULL ORDER BY r.request_id`)
	if err != nil {
		return fmt.Errorf("list responses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Response
		var etag, ctype, lang, robots, loc, key, ua sql.NullString
		var lm sql.NullInt64
		if err := rows.Scan(&r.URL, &r.TimeSent, &r.Status, &etag, &lm, &ctype, &lang, &robots, &loc, &key, &ua, &r.ExitCode); err != nil {
			return fmt.Errorf("read a response: %w", err)
		}
		r.ETag, r.ContentType, r.ContentLanguage, r.XRobotsTag = nullString(etag), nullString(ctype), nullString(lang), nullString(robots)
		r.Location, r.BodyKey, r.UserAgent = nullString(loc), nullString(key), nullString(ua)
		if lm.Valid {
			r.LastModified = &lm.Int64
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list responses: %w", err)
	}
	return nil
}

func nullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}
