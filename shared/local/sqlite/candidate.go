package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

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
	urlID := q.urlID
	if c.Version == 0 {
		urlID = q.newURLID // a new candidate: its URL is most likely new too
	}
	id, err := urlID(ctx, c.URL)
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
	if c.State == crawl.StateDue && c.SiteID != "" {
		// Made due by a scheduler that has not yet read that its site is
		// disabled, or suspended (for a URL found in a page): held in
		// the same write, as PutSite and a suspension hold the site's
		// URLs, so that it neither waits as due nor says a run has work.
		held, err := siteHolds(ctx, q, c.SiteID, c.Parent != "")
		if err != nil {
			return fmt.Errorf("candidate %s: %w", c.URL, err)
		}
		if held {
			c.State = crawl.StateHeld
		}
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
	if c.SiteID != "" {
		// The site's count of collected URLs (its URLs not filtered out)
		// moves by what this write changes, in the same write: a
		// filtered URL admitted after all (found closer to a seed, or
		// filters changed), a URL known before its site was added and
		// claimed by it now (schedule's claim), one its site's filters,
		// tightened, rule out before it was crawled.
		counts := c.State != crawl.StateFiltered
		if _, err := q.ExecContext(ctx, `UPDATE sites SET CollectedURLs=CollectedURLs+(CASE WHEN ?4 THEN 1 ELSE -1 END) WHERE Id=?1
			AND EXISTS (SELECT 1 FROM crawl_frontier WHERE url_id=?2 AND version=?3
				AND (coalesce(site_id,'')=?1 AND state<>'filtered')<>?4)`, c.SiteID, id, c.Version, counts); err != nil {
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

// StaleQueued returns up to limit candidates released to fetch at or
// before the given time whose crawl has not been recorded: their fetch
// message was lost, or is still on its way.
func (d *DB) StaleQueued(ctx context.Context, before int64, limit int) ([]crawl.Candidate, error) {
	return d.queryCandidates(ctx, `WHERE f.state='queued' AND f.queued_unix_utc<=? ORDER BY f.queued_unix_utc LIMIT ?`, before, limit)
}

// RuledOutByFilters returns the candidates of no site filtered as
// too-deep or excluded, which a run's --max-depth, --include and
// --exclude decide: a run given other values judges them again.
// At most limit of them (0: all).
func (d *DB) RuledOutByFilters(ctx context.Context, limit int) ([]crawl.Candidate, error) {
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	return d.queryCandidates(ctx, `WHERE f.state='filtered' AND f.site_id IS NULL AND c.last_crawl_exit_code IN (?,?) ORDER BY f.url_id LIMIT ?`,
		crawl.ExitTooDeep, crawl.ExitExcluded, limit)
}

// SiteRuledOut returns a site's URLs that were recorded excluded (by its
// filters, or a run's), and with tooMany those recorded too-many-urls
// (past its limits, or a page's), in the order they were found: what
// its changed filters, or limits, may let through.
func (d *DB) SiteRuledOut(ctx context.Context, siteID string, tooMany bool) ([]crawl.Candidate, error) {
	codes := []any{crawl.ExitExcluded}
	if tooMany {
		codes = append(codes, crawl.ExitTooManyURLs)
	}
	return d.queryCandidates(ctx, `WHERE f.state='filtered' AND f.site_id=? AND c.last_crawl_exit_code IN (?`+strings.Repeat(",?", len(codes)-1)+`) ORDER BY f.url_id`,
		append([]any{siteID}, codes...)...)
}

// NotHandedOn returns the recorded crawls that have no crawl summary,
// each as its URL's candidate naming that crawl (CrawlUUID): the stages
// after the fetch have not finished them (every crawl gets its summary).
// A run whose fetch tasks were in memory when it was killed leaves these
// (pipeline's resume hands them on); so does a summary dead-lettered,
// which is tried again. A crawl that is no longer its candidate's
// current one is among them: recorded while the candidate was released
// again, or followed by a 304 before its summary, which waits for it
// (unchanged.go).
func (d *DB) NotHandedOn(ctx context.Context) ([]crawl.Candidate, error) {
	rows, err := d.query(ctx, `SELECT `+d.older.columns(candidateColumns, "crawl_frontier", "f")+`, l.crawl_uuid`+candidateFrom+
		`JOIN crawl_log l ON l.url_id=f.url_id WHERE NOT EXISTS (SELECT 1 FROM crawl_summary s WHERE s.crawl_uuid=l.crawl_uuid)
		ORDER BY f.url_id, l.crawl_log_id`)
	if err != nil {
		return nil, fmt.Errorf("query crawls not handed on: %w", err)
	}
	defer rows.Close()
	var out []crawl.Candidate
	for rows.Next() {
		var crawlUUID string
		c, err := scanCandidate(scanWith{rows, &crawlUUID})
		if err != nil {
			return nil, fmt.Errorf("scan candidate: %w", err)
		}
		c.CrawlUUID = crawlUUID
		out = append(out, c)
	}
	return out, rows.Err()
}

// scanWith scans a row of a candidate's columns followed by one more.
type scanWith struct {
	s    scanner
	more any
}

func (w scanWith) Scan(dest ...any) error { return w.s.Scan(append(dest, w.more)...) }

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

// RecrawlPeriodInUse returns the recrawl period the data directory's
// URLs of no site were last crawled under (crawl_frontier.recrawl_every
// of the URL of no site crawled last, not counting a robots.txt verdict,
// which keeps the period it had; 0 when its run gave none, or none was
// crawled): what a run given no --recrawl-period keeps to.
func (d *DB) RecrawlPeriodInUse(ctx context.Context) (time.Duration, error) {
	var every sql.NullInt64
	err := d.db.QueryRowContext(ctx, `SELECT f.recrawl_every FROM crawl_frontier f JOIN crawl_candidate c ON c.url_id=f.url_id
		WHERE f.site_id IS NULL AND c.last_crawl_time_unix_utc IS NOT NULL AND coalesce(c.last_crawl_exit_code, 0)<>?
		ORDER BY c.last_crawl_time_unix_utc DESC, f.url_id DESC LIMIT 1`, crawl.ExitRobotsDisallowed).Scan(&every)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("recrawl period in use: %w", err)
	}
	return time.Duration(every.Int64) * time.Second, nil
}

// NextDue returns the earliest due time of a candidate in state due, and
// false when none is due at any time.
func (d *DB) NextDue(ctx context.Context) (int64, bool, error) {
	var t sql.NullInt64
	// Not the URLs a held site's state keeps (dueNotHeld): a data
	// directory made before such URLs were held in their write has
	// some, which no run releases.
	if err := d.db.QueryRowContext(ctx, `SELECT MIN(f.due_unix_utc) FROM crawl_frontier f WHERE f.state='due' AND `+dueNotHeld).Scan(&t); err != nil {
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

// StopRecrawls makes the URLs of no site that their recrawl period made
// due (crawl type recrawl) crawled, with no period: a run given a
// recrawl period of 0. It returns how many. A site's URLs follow their
// site's period; a URL due for another reason (its first crawl, a
// forced or re-enqueued one) stays due.
func (d *DB) StopRecrawls(ctx context.Context) (int, error) {
	res, err := d.exec(ctx, `UPDATE crawl_frontier SET state='crawled', recrawl_every=0, version=version+1
		WHERE state='due' AND crawl_type=? AND site_id IS NULL`, crawl.CrawlRecrawl)
	if err != nil {
		return 0, fmt.Errorf("stop recrawls: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RecrawlPassLife is how long a --recrawl pass stopped before it was
// done is continued by the next --recrawl: one begun longer ago than
// that is begun again.
const RecrawlPassLife = 24 * time.Hour

// BeginRecrawlPass makes every known URL due at now as MarkAllDue does
// and records the pass (recrawl_pass), unless a pass begun less than
// RecrawlPassLife ago is under way: then it continues that pass. The
// URLs the stopped pass made due and has not crawled yet are still due,
// and are left as they are (one put off by a Retry-After stays put
// off); what it did not make due, because their site was not active
// then (and is now), and has not crawled since it began, it makes due
// now. It returns how many URLs it made due, and when the pass it
// continued began (0: it began one).
func (d *DB) BeginRecrawlPass(ctx context.Context, now int64, t crawl.CrawlType) (int, int64, error) {
	var began sql.NullInt64
	if err := d.queryRow(ctx, `SELECT max(started_unix_utc) FROM recrawl_pass`).Scan(&began); err != nil {
		return 0, 0, fmt.Errorf("read the recrawl pass: %w", err)
	}
	if began.Valid && now-began.Int64 < int64(RecrawlPassLife/time.Second) {
		// Last crawled before the pass began, and crawled, or due as
		// another type than the pass's: a URL the pass did not mark
		// (MarkAllDue made every crawled URL it marked due as t; a put
		// off keeps the type; a crawl since is at or after began). A
		// forced crawl stays forced.
		res, err := d.exec(ctx, `UPDATE crawl_frontier SET state='due', due_unix_utc=?1, crawl_type=?2, version=version+1
			WHERE (state='crawled' OR state='due' AND crawl_type NOT IN (?2, ?4))
			AND (SELECT c.last_crawl_time_unix_utc FROM crawl_candidate c WHERE c.url_id=crawl_frontier.url_id) < ?3
			AND (site_id IS NULL OR site_id NOT IN (SELECT Id FROM sites WHERE State<>1))`, now, t, began.Int64, crawl.CrawlForced)
		if err != nil {
			return 0, 0, fmt.Errorf("continue the recrawl pass begun at %d: %w", began.Int64, err)
		}
		n, _ := res.RowsAffected()
		return int(n), began.Int64, nil
	}
	n, err := d.MarkAllDue(ctx, now, t)
	if err != nil {
		return 0, 0, err
	}
	if _, err := d.exec(ctx, `INSERT INTO recrawl_pass(id, started_unix_utc) VALUES(1, ?)
		ON CONFLICT(id) DO UPDATE SET started_unix_utc=excluded.started_unix_utc`, now); err != nil {
		return n, 0, fmt.Errorf("record the recrawl pass: %w", err)
	}
	return n, 0, nil
}

// EndRecrawlPass ends the recrawl pass under way, if it is done: no URL
// of an active site (or of none) is left due or queued that was last
// crawled before the pass began, or never (a URL put off until later,
// by a Retry-After or an unavailable robots.txt, keeps the pass open),
// and none that the pass made due as t is held by a site disabled or
// suspended during the pass (changed since it began: enabled again, its
// URLs are the pass's to crawl, not a new pass's reason to crawl
// everything again; a site held since before does not keep every later
// pass open). The next --recrawl then begins a new pass.
func (d *DB) EndRecrawlPass(ctx context.Context, t crawl.CrawlType) error {
	if _, err := d.exec(ctx, `DELETE FROM recrawl_pass WHERE NOT EXISTS (SELECT 1 FROM crawl_frontier f
		JOIN crawl_candidate c ON c.url_id=f.url_id
		WHERE coalesce(c.last_crawl_time_unix_utc, 0) < recrawl_pass.started_unix_utc
		AND (f.state IN ('due','queued') AND (f.site_id IS NULL OR f.site_id NOT IN (SELECT Id FROM sites WHERE State<>1))
			OR f.state='held' AND f.crawl_type=? AND f.site_id IN (SELECT Id FROM sites WHERE UDate >= recrawl_pass.started_unix_utc)))`, t); err != nil {
		return fmt.Errorf("end the recrawl pass: %w", err)
	}
	return nil
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

// siteHolds reports whether a site's state holds a URL of its
// (crawl.SiteState.Holds).
func siteHolds(ctx context.Context, q *wtx, siteID string, discovered bool) (bool, error) {
	var st crawl.SiteState
	err := q.QueryRowContext(ctx, `SELECT State FROM sites WHERE Id=?`, siteID).Scan(&st)
	if notFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read state of site %s: %w", siteID, err)
	}
	return st.Holds(discovered), nil
}
