// The recrawl figure (tool crawler-recrawl): how long the crawler takes
// to check an unchanged site again. After a fresh crawl into a data
// directory (not timed), `crawler crawl --recrawl` into the same
// directory makes every known URL due and asks for each with
// If-None-Match and If-Modified-Since; bench/serve answers 304 Not
// Modified for every unchanged file. The row's pages are the pages
// checked: the 304s, and any HTML page answered 200 again.
package main

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
)

// pages is the HTML pages the server answered: 200s for distinct pages,
// and 304s, which only a recrawl gets.
func (r Run) pages() int { return r.Server.HTMLPages + r.Server.Status["304"] }

// lastRun is the SQL for the crawl log entries of the data directory's
// last crawler run (its agent).
const lastRun = `SELECT crawl_log_id FROM crawl_log WHERE agent_id = (SELECT max(agent_id) FROM agent)`

// recrawlPages is the pages the crawler checked in its last run (the
// recrawl): answered 304, or 200 with an HTML body; and the bytes of
// the bodies it received.
func recrawlPages(data string) (int, int64, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "crawl.db")+"?mode=ro")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	var pages int
	if err := db.QueryRow(`SELECT count(DISTINCT r.url_id) FROM request r
		LEFT JOIN file f ON f.request_id = r.request_id LEFT JOIN mimetype m ON m.mimetype_id = f.mimetype_id
		WHERE r.crawl_log_id IN (` + lastRun + `)
		AND (r.http_status_code = 304 OR (r.http_status_code = 200 AND m.mimetype = 'text/html'))`).Scan(&pages); err != nil {
		return 0, 0, fmt.Errorf("count the recrawl's pages in crawl.db: %w", err)
	}
	var bytes int64
	if err := db.QueryRow(`SELECT coalesce(sum(file_size), 0) FROM file WHERE crawl_log_id IN (` + lastRun + `)`).Scan(&bytes); err != nil {
		return 0, 0, fmt.Errorf("count the recrawl's bytes in crawl.db: %w", err)
	}
	return pages, bytes, nil
}

// recrawlNote is the line under the table on the recrawl against the
// fresh crawl, medians of each; "" without crawler-recrawl runs.
func recrawlNote(runs []Run) string {
	var wall, fresh, reqs, notModified, ok, pps []float64
	for _, r := range runs {
		switch r.Tool {
		case "crawler":
			fresh = append(fresh, r.WallSec)
		case "crawler-recrawl":
			wall = append(wall, r.WallSec)
			reqs = append(reqs, float64(r.Server.Requests))
			notModified = append(notModified, float64(r.Server.Status["304"]))
			ok = append(ok, float64(r.Server.Status["200"]))
			pps = append(pps, float64(r.pages())/r.WallSec)
		}
	}
	if len(wall) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\ncrawler-recrawl: `crawler crawl --recrawl` of the unchanged site into the fresh crawl's data directory took %.2f s, %.0f pages/s: %.0f requests, %.0f answered 304 Not Modified, %.0f answered 200 (medians)",
		median(wall), median(pps), median(reqs), median(notModified), median(ok))
	if len(fresh) > 0 {
		fmt.Fprintf(&b, "; the fresh crawl took %.2f s", median(fresh))
	}
	b.WriteString(".\n")
	return b.String()
}
