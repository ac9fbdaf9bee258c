package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// A 304 is settled when it is recorded (RecordCrawl): its summary
// (crawl.SummaryOf) is applied in the same transaction, and the fetch
// stage sends no summarize task for it. It confirms the content of the
// URL's latest contentful crawl before it, which is summarized apart
// (after the parse stage) and may not be yet: such a 304 waits, with no
// crawl_summary row, until that crawl's summary settles it
// (settleWaiting). What is read to tell is the crawl log, by
// crawl_log_quickinfo (url_id, time_started_unix_utc, exit_code).
//
// A 304 waits when its URL was fetched again between a contentful
// crawl's record and that crawl's summary: a recrawl period shorter than
// a page's parse and summary, or a run killed in between and resumed.
// Meanwhile neither has a crawl_summary row, so a resumed run hands both
// on again (NotHandedOn); content whose summarize task was dead-lettered
// keeps its 304s waiting until it is summarized. Times are whole
// seconds: a 304 started in the same second as the contentful crawl it
// confirmed does not wait for it.

// contentfulCodes is the SQL list of the contentful exit codes.
var contentfulCodes = func() string {
	var codes []string
	for _, c := range crawl.ExitCodes() {
		if c.Contentful() {
			codes = append(codes, strconv.Itoa(int(c)))
		}
	}
	return "(" + strings.Join(codes, ",") + ")"
}()

// confirmed is the content a 304 of URL urlid at seenAt confirmed: the
// start of the URL's latest contentful crawl before seenAt (ok false:
// none is logged), and whether that crawl has no crawl_summary row yet
// (waits).
func confirmed(ctx context.Context, tx *wtx, urlid, seenAt int64) (at int64, ok, waits bool, err error) {
	err = tx.QueryRowContext(ctx, `SELECT l.time_started_unix_utc, NOT EXISTS (SELECT 1 FROM crawl_summary s WHERE s.crawl_uuid=l.crawl_uuid)
		FROM crawl_log l WHERE l.url_id=? AND l.time_started_unix_utc<? AND l.exit_code IN `+contentfulCodes+`
		ORDER BY l.time_started_unix_utc DESC LIMIT 1`, urlid, seenAt).Scan(&at, &waits)
	if notFound(err) {
		return 0, false, false, nil
	}
	if err != nil {
		return 0, false, false, fmt.Errorf("look up the content a 304 confirmed: %w", err)
	}
	return at, true, waits, nil
}

// settleWaiting applies the summaries of the 304s that waited for the
// contentful crawl of URL urlid at seenAt, just summarized: those after
// it, with no contentful crawl between, not yet summarized.
func settleWaiting(ctx context.Context, tx *wtx, urlid, seenAt int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT l.crawl_log_id FROM crawl_log l
		WHERE l.url_id=? AND l.time_started_unix_utc>? AND l.exit_code=?
		AND NOT EXISTS (SELECT 1 FROM crawl_summary s WHERE s.crawl_uuid=l.crawl_uuid)
		AND NOT EXISTS (SELECT 1 FROM crawl_log c WHERE c.url_id=l.url_id AND c.time_started_unix_utc>?
			AND c.time_started_unix_utc<l.time_started_unix_utc AND c.exit_code IN `+contentfulCodes+`)
		ORDER BY l.time_started_unix_utc`, urlid, seenAt, crawl.ExitUnchanged, seenAt)
	if err != nil {
		return fmt.Errorf("look up 304s waiting: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("look up 304s waiting: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("look up 304s waiting: %w", err)
	}
	for _, id := range ids {
		cr, err := crawlInTx(ctx, tx, id)
		if err != nil {
			return err
		}
		if _, err := applySummary(ctx, tx, crawl.SummaryOf(cr), linkRows{}); err != nil {
			return fmt.Errorf("settle the 304 %s: %w", cr.Log.CrawlUUID, err)
		}
	}
	return nil
}

// crawlInTx reads what a crawl's summary is made of (crawl.SummaryOf):
// its log and requests, by crawl_log_id, within tx.
func crawlInTx(ctx context.Context, tx *wtx, logID int64) (crawl.Crawl, error) {
	var cr crawl.Crawl
	l := &cr.Log
	err := tx.QueryRowContext(ctx, `SELECT a.agent_uuid, u.url, l.crawl_type, l.crawl_uuid, l.time_started_unix_utc,
		l.time_taken_ms, l.exit_code FROM crawl_log l JOIN agent a ON a.agent_id=l.agent_id JOIN url u ON u.url_id=l.url_id
		WHERE l.crawl_log_id=?`, logID).Scan(&l.AgentUUID, &l.URL, &l.CrawlType, &l.CrawlUUID, &l.TimeStarted, &l.TimeTakenMS, &l.ExitCode)
	if err != nil {
		return cr, fmt.Errorf("read crawl %d: %w", logID, err)
	}
	l.ID = logID
	rows, err := tx.QueryContext(ctx, `SELECT request_duration_ms, robotstxt_approved, exit_code, http_status_code, http_etag
		FROM request WHERE crawl_log_id=? ORDER BY request_id`, logID)
	if err != nil {
		return cr, fmt.Errorf("read requests of crawl %s: %w", l.CrawlUUID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r crawl.Request
		if err := rows.Scan(&r.DurationMS, &r.RobotsTxtApproved, &r.ExitCode, &r.HTTPStatusCode, &r.HTTPETag); err != nil {
			return cr, fmt.Errorf("read requests of crawl %s: %w", l.CrawlUUID, err)
		}
		cr.Requests = append(cr.Requests, r)
	}
	if err := rows.Err(); err != nil {
		return cr, fmt.Errorf("read requests of crawl %s: %w", l.CrawlUUID, err)
	}
	return cr, nil
}
