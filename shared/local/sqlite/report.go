package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Status returns what the crawl knows of a normalized URL, or
// crawl.ErrNotFound.
func (d *DB) Status(ctx context.Context, u string) (crawl.URLStatus, error) {
	c, err := d.GetCandidate(ctx, u)
	if err != nil {
		return crawl.URLStatus{}, err
	}
	s := crawl.NewURLStatus(c)
	// Crawls that sent a request (crawl.ExitCode.Requested): a URL that
	// robots.txt or a filter kept from being fetched has none.
	rows, err := d.db.QueryContext(ctx, `SELECT l.exit_code, count(*) FROM crawl_log l JOIN url u ON u.url_id=l.url_id WHERE u.url=?
		GROUP BY l.exit_code`, u)
	if err != nil {
		return s, fmt.Errorf("count crawls of %s: %w", u, err)
	}
	for rows.Next() {
		var code crawl.ExitCode
		var n int
		if err := rows.Scan(&code, &n); err != nil {
			rows.Close()
			return s, fmt.Errorf("count crawls of %s: %w", u, err)
		}
		if code.Requested() {
			s.Crawls += n
		}
	}
	if err := rows.Close(); err != nil {
		return s, fmt.Errorf("count crawls of %s: %w", u, err)
	}
	var lastLog int64
	if err := d.db.QueryRowContext(ctx, `SELECT l.crawl_log_id, l.message FROM crawl_log l JOIN url u ON u.url_id=l.url_id WHERE u.url=?
		ORDER BY l.time_started_unix_utc DESC, l.crawl_log_id DESC LIMIT 1`, u).Scan(&lastLog, &s.Message); err != nil && !notFound(err) {
		return s, fmt.Errorf("last message of %s: %w", u, err)
	}
	if err := d.db.QueryRowContext(ctx, `SELECT http_status_code FROM request WHERE crawl_log_id=? ORDER BY request_id DESC LIMIT 1`,
		lastLog).Scan(&s.HTTPStatus); err != nil && !notFound(err) {
		return s, fmt.Errorf("last HTTP status of %s: %w", u, err)
	}
	var g crawl.GenerationView
	var genID int64
	var dupOf sql.NullString
	var exact bool
	err = d.db.QueryRowContext(ctx, `SELECT g.entity_generation_id, g.entity_generation_uuid, g.first_seen_unix_utc,
		g.last_seen_unix_utc, g.confirmed_end_unix_utc, g.marked_duplicate,
		(SELECT du.url FROM duplicate_summary ds JOIN entity_generation dg ON dg.entity_generation_id=ds.duplicate_of_entity_generation_id
		   JOIN url du ON du.url_id=dg.url_id WHERE ds.subject_entity_generation_id=g.entity_generation_id
		   ORDER BY ds.duplicate_status_end_unix_utc IS NULL DESC, ds.duplicate_status_end_unix_utc DESC, ds.rowid DESC LIMIT 1),
		(SELECT count(*) FROM entity_generation WHERE url_id=g.url_id),
		coalesce((SELECT dg.text_pile_id=g.text_pile_id FROM duplicate_summary ds JOIN entity_generation dg
		   ON dg.entity_generation_id=ds.duplicate_of_entity_generation_id
		   WHERE ds.subject_entity_generation_id=g.entity_generation_id AND ds.duplicate_status_end_unix_utc IS NULL LIMIT 1), 0),
		dd.title, dd.primary_headline, dd.description, dd.primary_language, m.mimetype, fs.file_size, ru.url,
		(SELECT count(*) FROM link_summary WHERE entity_generation_id=g.entity_generation_id)
		FROM entity_generation g JOIN url u ON u.url_id=g.url_id
		LEFT JOIN document_description dd ON dd.entity_generation_id=g.entity_generation_id
		LEFT JOIN file_summary fs ON fs.entity_generation_id=g.entity_generation_id
		LEFT JOIN mimetype m ON m.mimetype_id=fs.mimetype_id
		LEFT JOIN redirect_summary rs ON rs.entity_generation_id=g.entity_generation_id
		LEFT JOIN url ru ON ru.url_id=rs.to_url_id
		WHERE u.url=? ORDER BY g.first_seen_unix_utc DESC, g.entity_generation_id DESC LIMIT 1`, u).
		Scan(&genID, &g.UUID, &g.FirstSeen, &g.LastSeen, &g.ConfirmedEnd, &g.MarkedDuplicate, &dupOf, &g.Generations, &exact,
			&g.Title, &g.Headline, &g.Description, &g.Language, &g.MIMEType, &g.FileSize, &g.RedirectTo, &g.Links)
	switch {
	case err == nil:
		g.DuplicateOf = dupOf.String
		s.Generation = &g
		if g.MarkedDuplicate && g.ConfirmedEnd == nil && c.LastCrawlExitCode != nil && c.LastCrawlExitCode.Contentful() {
			s.ExactDuplicate = exact // else a near or canonical duplicate
			s.Status = crawl.StatusDuplicate
		}
	case !notFound(err):
		return s, fmt.Errorf("latest generation of %s: %w", u, err)
	}
	s.State = crawl.SeedState(c, s.Status, time.Now().Unix())
	return s.WithTimes(), nil
}

// Search runs a full-text query over the open, non-duplicate, indexable
// generations, best first, and returns at most limit hits, each with a
// score where larger is better.
//
// It ranks as crawl/search.go says, with FTS5: the words are matched in
// every column but secondary_text (a page's navigation, sidebars and
// footers), and the title bonus comes from a subquery per word on the
// title column. Two additions are this store's only (see
// searchquery.go): a plural word also matches its singular, and pages
// where neighbouring words of the query stand close together gain a
// proximity bonus, from a subquery per pair of words. A source listing
// is told by its columns' lengths in bytes (listingFunc; octet_length
// reads them from the row's header without the text), a changelog by
// its title (changelogFunc).
func (d *DB) Search(ctx context.Context, query string, limit int) ([]crawl.SearchHit, error) {
	if strings.TrimSpace(strings.ReplaceAll(query, "\x00", " ")) == "" {
		return nil, crawl.E("search", crawl.KindInvalid, fmt.Errorf("empty query"))
	}
	words := queryWords(query)
	if len(words) == 0 || limit == 0 {
		return nil, nil // no word ("*", "--"): no page holds one, as in the DynamoDB store
	}
	if d.w != nil {
		// What has been summarized is searched (see index.go). A
		// read-only handle cannot: Unindexed says how much it misses.
		if err := d.IndexAll(ctx); err != nil {
			return nil, fmt.Errorf("search %q: %w", query, err)
		}
	}
	// A pile's full-text row is its rowid; in a database of an earlier
	// version, opened read-only, it is the text_pile_id column.
	pile := "rowid"
	if d.older != nil && d.older.ownTextFTS {
		pile = "text_pile_id"
	}
	const content = "{title description text big_headlines small_headlines code_text quote_text} : "
	matches := `(f.` + pile + ` IN (SELECT ` + pile + ` FROM full_text_entity_index WHERE full_text_entity_index MATCH ?))`
	var inTitle, near, all []string
	var args []any
	for _, w := range words {
		inTitle = append(inTitle, matches)
		args = append(args, "{title} : "+w.titleMatch())
		all = append(all, w...)
	}
	args = append(args, crawl.SearchTitleBonus, float64(len(words)))
	for i := 1; i < len(words); i++ {
		near = append(near, matches)
		args = append(args, content+nearMatch(words[i-1], words[i], crawl.SearchProximityWindow))
	}
	if len(near) == 0 {
		near = append(near, "0")
	}
	args = append(args, crawl.SearchProximityBonus, float64(max(1, len(words)-1)), crawl.SearchListingPenalty,
		crawl.ChangelogPenalty(query), content+"("+strings.Join(all, " OR ")+")", limit)
	// bm25 weights in column order: text_pile_id, any, title, description,
	// text, secondary_text, big_headlines, small_headlines, code_text, quote_text.
	// The plan is fixed: the full-text match is the outer loop (CROSS
	// JOIN) and each hit's generation is found by its text pile (the unary
	// + keeps entity_generation_by_active out). Left to itself, SQLite
	// 3.54 ran the match once per open generation: 2.4 s a query on the
	// 526 pages of make eval, 20-60 ms this way.
	rows, err := d.db.QueryContext(ctx, `SELECT u.url, coalesce(dd.title, ''),
		snippet(full_text_entity_index, 4, '[', ']', '…', 16),
		-bm25(full_text_entity_index, 0, 0, 10, 4, 1, 0.5, 5, 3, 1, 1) + (`+strings.Join(inTitle, " + ")+`) * ? / ?
		+ (`+strings.Join(near, " + ")+`) * ? / ?
		- `+listingFunc+`(octet_length(p.text), octet_length(p.code_text)) * ?
		- `+changelogFunc+`(coalesce(dd.title, '')) * ? AS score
		FROM full_text_entity_index f
		CROSS JOIN entity_generation g ON g.text_pile_id=f.`+pile+` AND g.confirmed_end_unix_utc IS NULL AND +g.marked_duplicate=0
		JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
		JOIN text_pile p ON p.text_pile_id=g.text_pile_id
		JOIN url u ON u.url_id=g.url_id
		LEFT JOIN document_description dd ON dd.entity_generation_id=g.entity_generation_id
		WHERE full_text_entity_index MATCH ? ORDER BY score DESC, u.url LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", query, err)
	}
	defer rows.Close()
	var out []crawl.SearchHit
	for rows.Next() {
		var h crawl.SearchHit
		if err := rows.Scan(&h.URL, &h.Title, &h.Snippet, &h.Rank); err != nil {
			return nil, fmt.Errorf("scan hit: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// OutcomeCounts returns, for the crawls logged by the given agents (all
// agents when none), how many ended in each exit code, with the
// duplicates the summarizer found counted as such, as the crawl report
// counts them (crawl.ReportedExit: a 304 of a copy is unchanged).
func (d *DB) OutcomeCounts(ctx context.Context, agentUUIDs ...string) (map[crawl.ExitCode]int, error) {
	where, args := "", []any{}
	if len(agentUUIDs) > 0 {
		where = ` WHERE l.agent_id IN (SELECT agent_id FROM agent WHERE agent_uuid IN (?` + strings.Repeat(",?", len(agentUUIDs)-1) + `))`
		for _, a := range agentUUIDs {
			args = append(args, a)
		}
	}
	rows, err := d.db.QueryContext(ctx, `SELECT l.exit_code, s.exit_code=?, count(*) FROM crawl_log l
		LEFT JOIN crawl_summary s ON s.crawl_uuid=l.crawl_uuid`+where+` GROUP BY 1, 2`, append([]any{crawl.ExitDuplicate}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("count outcomes: %w", err)
	}
	defer rows.Close()
	out := map[crawl.ExitCode]int{}
	for rows.Next() {
		var c crawl.ExitCode
		var dup sql.NullBool
		var n int
		if err := rows.Scan(&c, &dup, &n); err != nil {
			return nil, err
		}
		out[crawl.ReportedExit(c, dup.Bool)] += n
	}
	return out, rows.Err()
}

// FilteredCounts returns how many candidates were ruled out, by exit code.
func (d *DB) FilteredCounts(ctx context.Context) (map[crawl.ExitCode]int, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT c.last_crawl_exit_code, count(*) FROM crawl_frontier f
		JOIN crawl_candidate c ON c.url_id=f.url_id WHERE f.state='filtered' GROUP BY 1`)
	if err != nil {
		return nil, fmt.Errorf("count filtered: %w", err)
	}
	defer rows.Close()
	out := map[crawl.ExitCode]int{}
	for rows.Next() {
		var c crawl.ExitCode
		var n int
		if err := rows.Scan(&c, &n); err != nil {
			return nil, err
		}
		out[c] = n
	}
	return out, rows.Err()
}
