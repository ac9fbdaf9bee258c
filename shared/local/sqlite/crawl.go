package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// RecordCrawl writes a crawl (crawl_log, its requests, file, file_text
// and redirect) and the candidate's new state in one transaction. A crawl
// whose crawl_uuid is already recorded is left as it is and RecordCrawl
// returns false; a candidate changed since it was read is
// crawl.ErrConflict and nothing is written. A 304 recorded with its
// candidate is also summarized in the transaction (unchanged.go).
func (d *DB) RecordCrawl(ctx context.Context, cr crawl.Crawl, c *crawl.Candidate) (bool, error) {
	if cr.Log.CrawlUUID == "" {
		return false, crawl.E("record crawl of "+cr.Log.URL, crawl.KindInvalid, errors.New("no crawl_uuid"))
	}
	fresh := true
	err := d.tx(ctx, func(ctx context.Context, tx *wtx) error {
		fresh = true
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM crawl_log WHERE crawl_uuid=?`, cr.Log.CrawlUUID).Scan(&n); err != nil {
			return fmt.Errorf("look up crawl %s: %w", cr.Log.CrawlUUID, err)
		}
		if n > 0 {
			fresh = false
			return nil
		}
		if c != nil {
			if err := putCandidate(ctx, tx, *c); err != nil {
				return err
			}
		}
		if err := insertCrawl(ctx, tx, cr); err != nil {
			return err
		}
		if c != nil && cr.Log.ExitCode == crawl.ExitUnchanged {
			// A 304 is settled as it is recorded (unchanged.go).
			if _, err := applySummary(ctx, tx, crawl.SummaryOf(cr), linkRows{}); err != nil {
				return fmt.Errorf("settle the 304: %w", err)
			}
		}
		siteID := ""
		if c != nil {
			siteID = c.SiteID
		} else if err := tx.QueryRowContext(ctx, `SELECT coalesce(f.site_id, '') FROM crawl_frontier f JOIN url u ON u.url_id=f.url_id
			WHERE u.url=?`, cr.Log.URL).Scan(&siteID); err != nil && !errors.Is(err, sql.ErrNoRows) {
			// A crawl recorded alone (its candidate moved on) counts on
			// the site of the URL as stored: it was a request to it.
			return fmt.Errorf("look up the site of %s: %w", cr.Log.URL, err)
		}
		if siteID != "" {
			return countSiteCrawl(ctx, tx, siteID, cr)
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("record crawl %s of %s: %w", cr.Log.CrawlUUID, cr.Log.URL, err)
	}
	return fresh, nil
}

func insertCrawl(ctx context.Context, tx *wtx, cr crawl.Crawl) error {
	l := cr.Log
	urlid, err := tx.urlID(ctx, l.URL)
	if err != nil {
		return err
	}
	agentID, err := tx.agentID(ctx, l.AgentUUID)
	if err != nil {
		return err
	}
	var logID int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO crawl_log(agent_id, url_id, crawl_type, crawl_uuid,
		time_started_unix_utc, time_taken_ms, exit_code, message) VALUES(?,?,?,?,?,?,?,?) RETURNING crawl_log_id`,
		agentID, urlid, l.CrawlType, l.CrawlUUID, l.TimeStarted, l.TimeTakenMS, l.ExitCode, l.Message).Scan(&logID); err != nil {
		return fmt.Errorf("insert crawl_log: %w", err)
	}
	var lastReq *int64
	for _, r := range cr.Requests {
		rid, err := tx.urlID(ctx, r.URL)
		if err != nil {
			return err
		}
		var reqID int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO request(crawl_log_id, url_id, time_sent_unix_utc, request_duration_ms,
			robotstxt_approved, exit_code, server_last_modified_unix_utc, http_status_code, http_etag)
			VALUES(?,?,?,?,?,?,?,?,?) RETURNING request_id`,
			logID, rid, r.TimeSent, r.DurationMS, b2i(r.RobotsTxtApproved), r.ExitCode, r.ServerLastModified,
			r.HTTPStatusCode, r.HTTPETag).Scan(&reqID); err != nil {
			return fmt.Errorf("insert request: %w", err)
		}
		lastReq = &reqID
	}
	if f := cr.File; f != nil {
		fid, err := tx.urlID(ctx, f.URL)
		if err != nil {
			return err
		}
		mid, err := tx.mimetypeID(ctx, f.MIMEType)
		if err != nil {
			return err
		}
		canon, err := tx.optURLID(ctx, f.CanonicalURL)
		if err != nil {
			return err
		}
		var fileID int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO file(crawl_log_id, request_id, url_id, last_modified_unix_utc,
			file_size, mimetype_id, canonical_url_id) VALUES(?,?,?,?,?,?,?) RETURNING file_id`,
			logID, lastReq, fid, f.LastModified, f.FileSize, mid, canon).Scan(&fileID); err != nil {
			return fmt.Errorf("insert file: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO file_body(file_id, body_key, charset, content_type,
			content_language, x_robots_tag, body_sha256) VALUES(?,?,?,?,?,?,?)`,
			fileID, f.BodyKey, nullStr(f.Charset), nullStr(f.ContentType), nullStr(f.ContentLanguage), nullStr(f.RobotsTag),
			nullStr(f.BodySHA256)); err != nil {
			return fmt.Errorf("insert file_body: %w", err)
		}
		if cr.FileText != nil {
			if _, err := tx.ExecContext(ctx, `INSERT INTO file_text(file_id, text) VALUES(?,?)`, fileID, *cr.FileText); err != nil {
				return fmt.Errorf("insert file_text: %w", err)
			}
		}
	}
	if r := cr.Redirect; r != nil {
		from, err := tx.urlID(ctx, r.URL)
		if err != nil {
			return err
		}
		to, err := tx.urlID(ctx, r.ToURL)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO redirect(crawl_log_id, request_id, url_id, last_modified_unix_utc,
			to_url_id, information_source, is_permanent, by_security_policy) VALUES(?,?,?,?,?,?,?,?)`,
			logID, lastReq, from, r.LastModified, to, r.InformationSource, b2i(r.IsPermanent), b2i(r.BySecurityPolicy)); err != nil {
			return fmt.Errorf("insert redirect: %w", err)
		}
	}
	return nil
}

// GetCrawl reads back a recorded crawl (without file_text), or
// crawl.ErrNotFound.
func (d *DB) GetCrawl(ctx context.Context, crawlUUID string) (crawl.Crawl, error) {
	var cr crawl.Crawl
	var logID int64
	err := d.queryRow(ctx, `SELECT l.crawl_log_id, a.agent_uuid, u.url, l.crawl_type, l.crawl_uuid,
		l.time_started_unix_utc, l.time_taken_ms, l.exit_code, l.message
		FROM crawl_log l JOIN agent a ON a.agent_id=l.agent_id JOIN url u ON u.url_id=l.url_id WHERE l.crawl_uuid=?`, crawlUUID).
		Scan(&logID, &cr.Log.AgentUUID, &cr.Log.URL, &cr.Log.CrawlType, &cr.Log.CrawlUUID, &cr.Log.TimeStarted,
			&cr.Log.TimeTakenMS, &cr.Log.ExitCode, &cr.Log.Message)
	if notFound(err) {
		return cr, crawl.ErrNotFound
	}
	if err != nil {
		return cr, fmt.Errorf("get crawl %s: %w", crawlUUID, err)
	}
	cr.Log.ID = logID
	rows, err := d.query(ctx, `SELECT r.request_id, u.url, r.time_sent_unix_utc, r.request_duration_ms,
		r.robotstxt_approved, r.exit_code, r.server_last_modified_unix_utc, r.http_status_code, r.http_etag
		FROM request r JOIN url u ON u.url_id=r.url_id WHERE r.crawl_log_id=? ORDER BY r.request_id`, logID)
	if err != nil {
		return cr, fmt.Errorf("get requests of %s: %w", crawlUUID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r crawl.Request
		if err := rows.Scan(&r.ID, &r.URL, &r.TimeSent, &r.DurationMS, &r.RobotsTxtApproved, &r.ExitCode,
			&r.ServerLastModified, &r.HTTPStatusCode, &r.HTTPETag); err != nil {
			return cr, fmt.Errorf("scan request: %w", err)
		}
		cr.Requests = append(cr.Requests, r)
	}
	if err := rows.Err(); err != nil {
		return cr, err
	}
	var f crawl.File
	var charset, ctype, clang, robots, sha sql.NullString
	err = d.queryRow(ctx, `SELECT f.file_id, u.url, f.last_modified_unix_utc, f.file_size, m.mimetype,
		cu.url, b.body_key, b.charset, b.content_type, b.content_language, b.x_robots_tag, `+
		d.older.columns("b.body_sha256", "file_body", "b")+`
		FROM file f JOIN url u ON u.url_id=f.url_id JOIN mimetype m ON m.mimetype_id=f.mimetype_id
		LEFT JOIN url cu ON cu.url_id=f.canonical_url_id LEFT JOIN file_body b ON b.file_id=f.file_id
		WHERE f.crawl_log_id=?`, logID).Scan(&f.ID, &f.URL, &f.LastModified, &f.FileSize, &f.MIMEType, &f.CanonicalURL,
		&f.BodyKey, &charset, &ctype, &clang, &robots, &sha)
	switch {
	case err == nil:
		f.Charset, f.ContentType, f.ContentLanguage, f.RobotsTag = charset.String, ctype.String, clang.String, robots.String
		f.BodySHA256 = sha.String
		cr.File = &f
	case !notFound(err):
		return cr, fmt.Errorf("get file of %s: %w", crawlUUID, err)
	}
	var r crawl.Redirect
	err = d.queryRow(ctx, `SELECT r.redirect_id, u.url, r.last_modified_unix_utc, t.url, r.information_source,
		r.is_permanent, r.by_security_policy FROM redirect r JOIN url u ON u.url_id=r.url_id JOIN url t ON t.url_id=r.to_url_id
		WHERE r.crawl_log_id=?`, logID).Scan(&r.ID, &r.URL, &r.LastModified, &r.ToURL, &r.InformationSource,
		&r.IsPermanent, &r.BySecurityPolicy)
	switch {
	case err == nil:
		cr.Redirect = &r
	case !notFound(err):
		return cr, fmt.Errorf("get redirect of %s: %w", crawlUUID, err)
	}
	return cr, nil
}

// SetCanonicalURL sets file.canonical_url_id of a crawl's file.
func (d *DB) SetCanonicalURL(ctx context.Context, crawlUUID, canonical string) error {
	return d.tx(ctx, func(ctx context.Context, tx *wtx) error {
		id, err := tx.urlID(ctx, canonical)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE file SET canonical_url_id=? WHERE crawl_log_id=
			(SELECT crawl_log_id FROM crawl_log WHERE crawl_uuid=?)`, id, crawlUUID); err != nil {
			return fmt.Errorf("set canonical URL of crawl %s: %w", crawlUUID, err)
		}
		return nil
	})
}

const bodyKeyOfQuery = `SELECT body_key FROM file_body WHERE body_sha256=? LIMIT 1`

// BodyKeyOf returns the key of a body already kept with the given
// SHA-256 (hex), if any: the embedded home keeps a body fetched twice,
// at two URLs or in two crawls, once.
func (d *DB) BodyKeyOf(ctx context.Context, sha256 string) (string, bool, error) {
	var key string
	err := d.queryRow(ctx, bodyKeyOfQuery, sha256).Scan(&key)
	switch {
	case err == nil:
		return key, true, nil
	case notFound(err):
		return "", false, nil
	}
	return "", false, fmt.Errorf("find the body %s: %w", sha256, err)
}
