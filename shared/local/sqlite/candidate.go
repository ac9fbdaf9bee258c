package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

const candidateColumns = `u.url, c.last_crawl_time_unix_utc, c.last_crawl_exit_code,
	c.last_contentful_crawl_time_unix_utc, c.last_contentful_http_etag,
	f.host, f.state, f.hops, f.priority, f.due_unix_utc, f.crawl_type, f.crawl_uuid,
	f.queued_unix_utc, f.last_contentful_modified_unix_utc, f.n_redirs, f.orig_url,
	f.redirect_chain, f.discovered_unix_utc, f.parent_url, f.max_depth, f.version, f.site_id,
	f.mrate, f.mrate_counter, f.recrawl_every`

const candidateFrom = ` FROM crawl_candidate c JOIN crawl_frontier f ON f.url_id=c.url_id JOIN url u ON u.url_id=c.url_id `

type scanner interface{ Scan(dest ...any) error }

func scanCandidate(s scanner) (crawl.Candidate, error) {
	var c crawl.Candidate
	var exit *int
	var crawlUUID, origURL, chain, parent, site sql.NullString
	var maxDepth sql.NullInt64
	err := s.Scan(&c.URL, &c.LastCrawlTime, &exit, &c.LastContentfulCrawlTime, &c.LastContentfulETag,
		&c.Host, &c.State, &c.Hops, &c.Priority, &c.DueAt, &c.CrawlType, &crawlUUID,
		&c.QueuedAt, &c.LastContentfulModified, &c.NRedirs, &origURL,
		&chain, &c.DiscoveredAt, &parent, &maxDepth, &c.Version, &site, &c.MRate, &c.MRateCounter, &c.RecrawlEvery)
	if err != nil {
		return c, err
	}
	if exit != nil {
		e := crawl.ExitCode(*exit)
		c.LastCrawlExitCode = &e
	}
	c.CrawlUUID, c.OrigURL, c.Parent, c.SiteID = crawlUUID.String, origURL.String, parent.String, site.String
	if maxDepth.Valid {
		m := int(maxDepth.Int64)
		c.MaxDepth = &m
	}
	if chain.Valid && chain.String != "" {
		if err := json.Unmarshal([]byte(chain.String), &c.RedirectChain); err != nil {
			return c, fmt.Errorf("decode redirect chain of %s: %w", c.URL, err)
		}
	}
	return c, nil
}

// GetCandidate returns the candidate for a normalized URL, or
// crawl.ErrNotFound.
func (d *DB) GetCandidate(ctx context.Context, u string) (crawl.Candidate, error) {
	st, err := d.prepared(ctx, `SELECT `+d.older.columns(candidateColumns, "crawl_frontier", "f")+candidateFrom+`WHERE u.url=?`)
	if err != nil {
		return crawl.Candidate{}, fmt.Errorf("get candidate %s: %w", u, err)
	}
	c, err := scanCandidate(st.QueryRowContext(ctx, u))
	if notFound(err) {
		return c, crawl.ErrNotFound
	}
	if err != nil {
		return c, fmt.Errorf("get candidate %s: %w", u, err)
	}
	return c, nil
}

// PutCandidate writes c if the stored version is still c.Version (0: the
// candidate must not exist yet), else returns crawl.ErrConflict. On
// success c.Version+1 is the stored version.
func (d *DB) PutCandidate(ctx context.Context, c crawl.Candidate) error {
	return d.tx(ctx, func(ctx context.Context, w *wtx) error { return putCandidate(ctx, w, c) })
}

// PutCandidates writes the candidates in one write, each as PutCandidate
// would, and returns each one's error. A candidate refused (KindInvalid)
// or lost to another writer (ErrConflict) changes nothing and does not
// stop the others: putCandidate finds both before it writes anything.
// Any other error fails them all.
func (d *DB) PutCandidates(ctx context.Context, cs []crawl.Candidate) []error {
	errs := make([]error, len(cs))
	err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		for i, c := range cs {
			errs[i] = putCandidate(ctx, w, c)
			if err := errs[i]; err != nil && !errors.Is(err, crawl.ErrConflict) && crawl.KindOf(err) != crawl.KindInvalid {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
	}
	return errs
}

// putCandidate writes c. A candidate it refuses or that lost to another
// writer comes back as an error before anything is written (PutCandidates
// counts on it).
func putCandidate(ctx context.Context, q *wtx, c crawl.Candidate) error {
	// What the DynamoDB store refuses, refused here too (its GSIs need a
	// host), so that both homes take the same candidates.
	if c.URL == "" {
		return crawl.E("candidate", crawl.KindInvalid, errors.New("no URL"))
	}
	if (c.State == crawl.StateDue || c.State == crawl.StateQueued) && c.Host == "" {
		return crawl.E("candidate "+c.URL, crawl.KindInvalid, fmt.Errorf("state %s needs a host", c.State))
	}
	id, err := q.urlID(ctx, c.URL)
	if err != nil {
		return err
	}
	var chain *string
	if len(c.RedirectChain) > 0 {
		b, _ := json.Marshal(c.RedirectChain)
		s := string(b)
		chain = &s
	}
	var exit *int
	if c.LastCrawlExitCode != nil {
		e := int(*c.LastCrawlExitCode)
		exit = &e
	}
	if c.Version == 0 {
		if _, err := q.ExecContext(ctx, `INSERT INTO crawl_candidate(url_id, last_crawl_time_unix_utc, last_crawl_exit_code,
			last_contentful_crawl_time_unix_utc, last_contentful_http_etag) VALUES(?,?,?,?,?)`,
			id, c.LastCrawlTime, exit, c.LastContentfulCrawlTime, c.LastContentfulETag); err != nil {
			if isUniqueViolation(err) {
				return crawl.ErrConflict
			}
			return fmt.Errorf("insert candidate %s: %w", c.URL, err)
		}
		_, err := q.ExecContext(ctx, `INSERT INTO crawl_frontier(url_id, host, state, hops, priority, due_unix_utc,
			crawl_type, crawl_uuid, queued_unix_utc, last_contentful_modified_unix_utc, n_redirs, orig_url,
			redirect_chain, discovered_unix_utc, parent_url, max_depth, version, site_id, mrate, mrate_counter, recrawl_every)
			VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?,?,?,?)`,
			id, c.Host, c.State, c.Hops, c.Priority, c.DueAt, c.CrawlType, nullStr(c.CrawlUUID), c.QueuedAt,
			c.LastContentfulModified, c.NRedirs, nullStr(c.OrigURL), chain, c.DiscoveredAt, nullStr(c.Parent), c.MaxDepth, nullStr(c.SiteID),
			c.MRate, c.MRateCounter, c.RecrawlEvery)
		if err != nil {
			return fmt.Errorf("insert frontier %s: %w", c.URL, err)
		}
		if c.SiteID != "" && c.State != crawl.StateFiltered {
			// The site's count of collected URLs (those not filtered out),
			// in the same write: what its MaxURLs is checked against.
			if _, err := q.ExecContext(ctx, `UPDATE sites SET CollectedURLs=CollectedURLs+1, TcDate=? WHERE Id=?`,
				c.DiscoveredAt, c.SiteID); err != nil {
				return fmt.Errorf("count URL of site %s: %w", c.SiteID, err)
			}
		}
		return nil
	}
	if c.SiteID != "" && (c.State == crawl.StateDue || c.State == crawl.StateHeld) {
		// A filtered URL admitted after all (found closer to a seed, or
		// filters changed) is collected now.
		if _, err := q.ExecContext(ctx, `UPDATE sites SET CollectedURLs=CollectedURLs+1 WHERE Id=?
			AND (SELECT state FROM crawl_frontier WHERE url_id=? AND version=?)='filtered'`, c.SiteID, id, c.Version); err != nil {
			return fmt.Errorf("count URL of site %s: %w", c.SiteID, err)
		}
	}
	res, err := q.ExecContext(ctx, `UPDATE crawl_frontier SET host=?, state=?, hops=?, priority=?, due_unix_utc=?,
		crawl_type=?, crawl_uuid=?, queued_unix_utc=?, last_contentful_modified_unix_utc=?, n_redirs=?, orig_url=?,
		redirect_chain=?, discovered_unix_utc=?, parent_url=?, max_depth=?, site_id=?, mrate=?, mrate_counter=?,
		recrawl_every=?, version=version+1
		WHERE url_id=? AND version=?`,
		c.Host, c.State, c.Hops, c.Priority, c.DueAt, c.CrawlType, nullStr(c.CrawlUUID), c.QueuedAt,
		c.LastContentfulModified, c.NRedirs, nullStr(c.OrigURL), chain, c.DiscoveredAt, nullStr(c.Parent), c.MaxDepth,
		nullStr(c.SiteID), c.MRate, c.MRateCounter, c.RecrawlEvery, id, c.Version)
	if err != nil {
		return fmt.Errorf("update frontier %s: %w", c.URL, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return crawl.ErrConflict
	}
	if _, err := q.ExecContext(ctx, `UPDATE crawl_candidate SET last_crawl_time_unix_utc=?, last_crawl_exit_code=?,
		last_contentful_crawl_time_unix_utc=?, last_contentful_http_etag=? WHERE url_id=?`,
		c.LastCrawlTime, exit, c.LastContentfulCrawlTime, c.LastContentfulETag, id); err != nil {
		return fmt.Errorf("update candidate %s: %w", c.URL, err)
	}
	return nil
}

func nullStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// DueCandidates returns up to limit candidates due at or before now,
// highest priority and earliest due first, the limit shared among the
// scope's hosts (fairShare) when several have candidates due.
func (d *DB) DueCandidates(ctx context.Context, now int64, limit int) ([]crawl.Candidate, error) {
	if limit <= 0 {
		return nil, nil
	}
	var some int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM crawl_frontier WHERE state='due' AND due_unix_utc<=? LIMIT 1)`,
		now).Scan(&some); err != nil {
		return nil, fmt.Errorf("look for due candidates: %w", err)
	}
	if some == 0 {
		return nil, nil
	}
	var scope int
	if err := d.queryRow(ctx, `SELECT count(*) FROM crawl_scope`).Scan(&scope); err != nil {
		return nil, fmt.Errorf("due candidates: count the scope: %w", err)
	}
	if scope > 1 && scope <= maxFairHosts {
		hosts, err := d.dueHosts(ctx, now)
		if err != nil {
			return nil, err
		}
		if len(hosts) > 1 {
			return d.fairShare(ctx, hosts, now, limit)
		}
	}
	return d.queryCandidates(ctx, dueWhere, now, limit)
}

// maxFairHosts is the most scope hosts among which DueCandidates shares
// its limit, a few queries each; past it, it takes candidates in
// release order whatever their host, as with one host.
const maxFairHosts = 64

// dueHosts returns the scope's hosts that have candidates due by now, a
// seek each in crawl_frontier_host_release.
func (d *DB) dueHosts(ctx context.Context, now int64) ([]string, error) {
	rows, err := d.query(ctx, `SELECT s.host FROM crawl_scope s WHERE EXISTS (SELECT 1 FROM crawl_frontier f
		WHERE f.state='due' AND f.host=s.host AND f.due_unix_utc<=?) ORDER BY s.host`, now)
	if err != nil {
		return nil, fmt.Errorf("hosts with candidates due: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("hosts with candidates due: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// fairShare picks DueCandidates' candidates host by host. A host has one
// request in flight at a time, and a fetch worker given its task waits
// for that host's turn: taken in release order alone, one host's backlog
// (a page of 300 links admitted a second before another host's) filled
// the fetch queue, and every worker waited on that host while the
// others' candidates waited in the frontier, so a crawl of several
// hosts at a politeness delay went one host after another. Each pick
// now goes to the host with the fewest candidates released and not yet
// recorded (state queued), counting those picked so far; ties to the
// host with the better next candidate. The picks come back in release
// order (priority, then due time; within those, in turn across hosts).
// Due candidates of hosts outside the scope fill what the scope's hosts
// leave of the limit.
//
// Each host's candidates are read up to the level the picks would reach
// were every host's enough, and read again in full only when the picks
// need more of a host than that: a release of 32 among 64 hosts reads
// about 32 rows, not 64 times 32 (BenchmarkDueCandidates).
func (d *DB) fairShare(ctx context.Context, hosts []string, now int64, limit int) ([]crawl.Candidate, error) {
	held := map[string]int{}
	rows, err := d.query(ctx, `SELECT host, count(*) FROM crawl_frontier WHERE state='queued' GROUP BY host`)
	if err != nil {
		return nil, fmt.Errorf("count released candidates by host: %w", err)
	}
	for rows.Next() {
		var h string
		var n int
		if err := rows.Scan(&h, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("count released candidates by host: %w", err)
		}
		held[h] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count released candidates by host: %w", err)
	}
	total := 0
	for _, h := range hosts {
		total += held[h]
	}
	level := (total + limit + len(hosts) - 1) / len(hosts)
	due := make([][]crawl.Candidate, len(hosts))
	read := make([]int, len(hosts)) // the limit each host's candidates were read with
	readHost := func(i, n int) error {
		read[i] = n
		if n == 0 {
			due[i] = nil
			return nil
		}
		if due[i], err = d.queryCandidates(ctx, dueOfHostWhere, hosts[i], now, n); err != nil {
			return fmt.Errorf("due candidates of %s: %w", hosts[i], err)
		}
		return nil
	}
	for i, h := range hosts {
		if err := readHost(i, min(limit, max(0, level-held[h]))); err != nil {
			return nil, err
		}
	}
	var out []crawl.Candidate
	next := make([]int, len(hosts))
	picked := map[string]bool{}
	for len(out) < limit {
		best := -1
		for i, h := range hosts {
			if next[i] == len(due[i]) {
				continue
			}
			if best < 0 || held[h] < held[hosts[best]] ||
				held[h] == held[hosts[best]] && releasesBefore(due[i][next[i]], due[best][next[best]]) {
				best = i
			}
		}
		if best < 0 {
			// Every host's candidates read are taken: read in full those
			// that may have more, or stop.
			more := false
			for i := range hosts {
				if len(due[i]) == read[i] && read[i] < limit {
					if err := readHost(i, limit); err != nil {
						return nil, err
					}
					more = more || next[i] < len(due[i])
				}
			}
			if !more {
				break
			}
			continue
		}
		c := due[best][next[best]]
		next[best]++
		if picked[c.URL] {
			// Read twice, and a candidate admitted in between moved it.
			continue
		}
		picked[c.URL] = true
		out = append(out, c)
		held[hosts[best]]++
	}
	if len(out) < limit {
		rest, err := d.queryCandidates(ctx, dueOutsideScopeWhere, now, limit-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, rest...)
	}
	slices.SortStableFunc(out, func(a, b crawl.Candidate) int {
		if releasesBefore(a, b) {
			return -1
		}
		if releasesBefore(b, a) {
			return 1
		}
		return 0
	})
	return out, nil
}

// releasesBefore orders due candidates as dueWhere does, short of the
// url_id: higher priority, then earlier due.
func releasesBefore(a, b crawl.Candidate) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	return a.DueAt < b.DueAt
}

// dueWhere picks DueCandidates' rows. It walks crawl_frontier_release in
// release order and stops at the limit: the + keeps SQLite off the
// due-time index, with which it read and sorted every candidate due (on
// a crawl of 30,000 pages, a quarter of the CPU; BENCHMARKS.md). Within
// a priority the due ones come first in that index, so the walk only
// passes over candidates of a higher priority due later; DueCandidates
// first checks through the due-time index that one is due at all, so a
// crawl waiting for its next recrawl does not walk them every time.
//
// A site's URLs are held when it is disabled (PutSite); those made due
// meanwhile by a process that had not yet read the change are left
// here until it is enabled.
const dueWhere = `WHERE f.state='due' AND +f.due_unix_utc<=? AND ` + dueNotHeld + dueOrder

// dueNotHeld and dueOrder are dueWhere's, and its variants'.
const (
	dueNotHeld = `(f.site_id IS NULL OR NOT EXISTS (SELECT 1 FROM sites s WHERE s.Id=f.site_id
		AND (s.State=2 OR s.State=3 AND f.parent_url IS NOT NULL)))`
	dueOrder = ` ORDER BY f.priority DESC, f.due_unix_utc, f.url_id LIMIT ?`
)

// dueOfHostWhere is dueWhere for one host (fairShare), through
// crawl_frontier_host_release.
const dueOfHostWhere = `WHERE f.state='due' AND f.host=? AND +f.due_unix_utc<=? AND ` + dueNotHeld + dueOrder

// dueOutsideScopeWhere is dueWhere for the hosts outside the scope
// (fairShare): the scheduler admits none, but none is left behind.
const dueOutsideScopeWhere = `WHERE f.state='due' AND +f.due_unix_utc<=?
	AND f.host NOT IN (SELECT host FROM crawl_scope) AND ` + dueNotHeld + dueOrder

// StaleQueued returns up to limit candidates released to fetch at or
// before the given time whose crawl has not been recorded: their fetch
// message was lost, or is still on its way.
func (d *DB) StaleQueued(ctx context.Context, before int64, limit int) ([]crawl.Candidate, error) {
	return d.queryCandidates(ctx, `WHERE f.state='queued' AND f.queued_unix_utc<=? ORDER BY f.queued_unix_utc LIMIT ?`, before, limit)
}

// NotHandedOn returns the candidates whose current crawl is recorded
// and has no crawl summary: the stages after the fetch have not
// finished it (every crawl gets its summary). A run whose fetch tasks
// were in memory when it was killed leaves these (pipeline's resume
// hands them on); so does a summary dead-lettered, which is tried again.
func (d *DB) NotHandedOn(ctx context.Context) ([]crawl.Candidate, error) {
	return d.queryCandidates(ctx, `JOIN crawl_log l ON l.crawl_uuid=f.crawl_uuid
		WHERE NOT EXISTS (SELECT 1 FROM crawl_summary s WHERE s.crawl_uuid=l.crawl_uuid) ORDER BY f.url_id`)
}

// FrontierSize counts the URLs due by now or released to fetch and not
// yet crawled: what is left of a crawl as far as is known now.
func (d *DB) FrontierSize(ctx context.Context, now int64) (int, error) {
	var n int
	if err := d.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM crawl_frontier WHERE state='due' AND due_unix_utc<=?)
		+ (SELECT count(*) FROM crawl_frontier WHERE state='queued')`, now).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the frontier: %w", err)
	}
	return n, nil
}

// NextDue returns the earliest due time of a candidate in state due, and
// false when none is due at any time.
func (d *DB) NextDue(ctx context.Context) (int64, bool, error) {
	var t sql.NullInt64
	if err := d.db.QueryRowContext(ctx, `SELECT MIN(due_unix_utc) FROM crawl_frontier WHERE state='due'`).Scan(&t); err != nil {
		return 0, false, fmt.Errorf("next due: %w", err)
	}
	return t.Int64, t.Valid, nil
}

func (d *DB) queryCandidates(ctx context.Context, where string, args ...any) ([]crawl.Candidate, error) {
	rows, err := d.query(ctx, `SELECT `+d.older.columns(candidateColumns, "crawl_frontier", "f")+candidateFrom+where, args...)
	if err != nil {
		return nil, fmt.Errorf("query candidates: %w", err)
	}
	defer rows.Close()
	var out []crawl.Candidate
	for rows.Next() {
		c, err := scanCandidate(rows)
		if err != nil {
			return nil, fmt.Errorf("scan candidate: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// MarkAllDue makes every crawled candidate, and every due one (even if
// due later), due at now as the given crawl type (`crawler crawl
// --recrawl`), and returns how many. A candidate never crawled keeps its
// crawl type (its next crawl is still its first). Queued candidates are
// left to the crawl they were released as; filtered ones stay filtered.
// The URLs of a site that is not active are left alone: a suspended
// site is not recrawled, a disabled one's URLs are held.
func (d *DB) MarkAllDue(ctx context.Context, now int64, t crawl.CrawlType) (int, error) {
	res, err := d.exec(ctx, `UPDATE crawl_frontier SET state='due', due_unix_utc=?,
		crawl_type=CASE WHEN (SELECT c.last_crawl_time_unix_utc FROM crawl_candidate c WHERE c.url_id=crawl_frontier.url_id)
			IS NULL THEN crawl_type ELSE ? END, version=version+1
		WHERE state IN ('crawled','due')
		AND (site_id IS NULL OR site_id NOT IN (SELECT Id FROM sites WHERE State<>1))`, now, t)
	if err != nil {
		return 0, fmt.Errorf("mark all due: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// AddScopeHost puts a host in the crawl's scope.
func (d *DB) AddScopeHost(ctx context.Context, host string) error {
	if host == "" {
		return crawl.E("add scope host", crawl.KindInvalid, errors.New("empty host"))
	}
	if _, err := d.exec(ctx, `INSERT INTO crawl_scope(host) VALUES(?) ON CONFLICT DO NOTHING`, host); err != nil {
		return fmt.Errorf("add scope host %s: %w", host, err)
	}
	return nil
}

// InScope reports whether host is in the crawl's scope.
func (d *DB) InScope(ctx context.Context, host string) (bool, error) {
	var n int
	if err := d.queryRow(ctx, `SELECT count(*) FROM crawl_scope WHERE host=?`, host).Scan(&n); err != nil {
		return false, fmt.Errorf("scope of %s: %w", host, err)
	}
	return n > 0, nil
}

// ScopeHosts returns the hosts in the crawl's scope.
func (d *DB) ScopeHosts(ctx context.Context) ([]string, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT host FROM crawl_scope ORDER BY host`)
	if err != nil {
		return nil, fmt.Errorf("read scope: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
