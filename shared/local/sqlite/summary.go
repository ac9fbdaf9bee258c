package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// OpenGeneration returns a URL's open generation, or crawl.ErrNotFound.
func (d *DB) OpenGeneration(ctx context.Context, u string) (crawl.OpenGeneration, error) {
	var o crawl.OpenGeneration
	g := &o.Generation
	err := d.queryRow(ctx, `SELECT g.entity_generation_id, g.entity_generation_uuid, u.url, g.url_fragment,
		g.first_seen_unix_utc, g.last_seen_unix_utc, g.confirmed_end_unix_utc, g.marked_duplicate, g.text_pile_id,
		coalesce(c.content_key,''), coalesce(c.noindex,0)
		FROM entity_generation g JOIN url u ON u.url_id=g.url_id LEFT JOIN generation_content c ON c.entity_generation_id=g.entity_generation_id
		WHERE u.url=? AND g.url_fragment IS NULL AND g.confirmed_end_unix_utc IS NULL
		ORDER BY g.first_seen_unix_utc DESC, g.entity_generation_id DESC LIMIT 1`, u).
		Scan(&g.ID, &g.UUID, &g.URL, &g.URLFragment, &g.FirstSeen, &g.LastSeen, &g.ConfirmedEnd, &g.MarkedDuplicate,
			&g.TextPileID, &o.ContentKey, &o.NoIndex)
	if notFound(err) {
		return o, crawl.ErrNotFound
	}
	if err != nil {
		return o, fmt.Errorf("open generation of %s: %w", u, err)
	}
	return o, nil
}

// FindOriginal returns the open, non-duplicate, indexable generation of
// another URL whose text pile has the given digest: what a new generation
// with that text would duplicate. It returns 0 when there is none. (A
// noindex page is never an original: its copies would vanish from search.)
func (d *DB) FindOriginal(ctx context.Context, digest []byte, u string) (int64, error) {
	var id int64
	err := d.queryRow(ctx, `SELECT g.entity_generation_id FROM text_pile p
		JOIN entity_generation g ON g.text_pile_id=p.text_pile_id AND g.confirmed_end_unix_utc IS NULL AND g.marked_duplicate=0
		JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
		JOIN url u ON u.url_id=g.url_id
		WHERE p.blake2b512_digest=? AND u.url<>? ORDER BY g.first_seen_unix_utc, g.entity_generation_id LIMIT 1`, digest, u).Scan(&id)
	if notFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("find original of %s: %w", u, err)
	}
	return id, nil
}

// FindNearOriginal returns the open, non-duplicate, indexable generation
// of another URL, the earliest first seen, whose text pile's SimHash is
// within crawl.NearDistance bits of simhash: what a new generation with
// that fingerprint nearly duplicates. It returns a zero Original when
// there is none. Candidates are read by band (each indexed) and
// compared here.
func (d *DB) FindNearOriginal(ctx context.Context, simhash uint64, u string) (crawl.Original, error) {
	b := crawl.SimHashBands(simhash)
	rows, err := d.query(ctx, nearOriginalQuery, b[0], b[1], b[2], b[3], u)
	if err != nil {
		return crawl.Original{}, fmt.Errorf("find near original of %s: %w", u, err)
	}
	defer rows.Close()
	for rows.Next() {
		var o crawl.Original
		var h int64
		if err := rows.Scan(&o.ID, &h, &o.Digest); err != nil {
			return crawl.Original{}, fmt.Errorf("find near original of %s: %w", u, err)
		}
		if crawl.Near(uint64(h), simhash) {
			return o, nil
		}
	}
	if err := rows.Err(); err != nil {
		return crawl.Original{}, fmt.Errorf("find near original of %s: %w", u, err)
	}
	return crawl.Original{}, nil
}

// nearOriginalQuery reads the piles sharing a band with a SimHash, then
// their open generations. The join order is forced (CROSS JOIN, and a
// unary + that keeps the planner off entity_generation_by_active): left
// to itself, SQLite walked every open generation for each page summarized,
// a crawl's time growing with the square of its pages (BENCHMARKS.md).
const nearOriginalQuery = `SELECT g.entity_generation_id, s.simhash, p.blake2b512_digest FROM text_pile_simhash s
	CROSS JOIN entity_generation g ON g.text_pile_id=s.text_pile_id AND g.confirmed_end_unix_utc IS NULL AND +g.marked_duplicate=0
	JOIN text_pile p ON p.text_pile_id=s.text_pile_id
	JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
	JOIN url u ON u.url_id=g.url_id
	WHERE (s.band0=? OR s.band1=? OR s.band2=? OR s.band3=?) AND u.url<>?
	ORDER BY g.first_seen_unix_utc, g.entity_generation_id`

// SummaryRecorded reports whether a crawl is already in the summary database.
func (d *DB) SummaryRecorded(ctx context.Context, crawlUUID string) (bool, error) {
	var n int
	if err := d.queryRow(ctx, `SELECT count(*) FROM crawl_summary WHERE crawl_uuid=?`, crawlUUID).Scan(&n); err != nil {
		return false, fmt.Errorf("look up summary of %s: %w", crawlUUID, err)
	}
	return n > 0, nil
}

// ApplySummary applies a crawl's summary update in one transaction. It
// returns false when the crawl was already summarized, and
// crawl.ErrConflict when the URL's open generation is no longer
// s.OpenID.
func (d *DB) ApplySummary(ctx context.Context, s crawl.SummaryUpdate) (bool, error) {
	var links linkRows
	if s.New != nil {
		// Encoded here, not in the one writer that every page waits on.
		var err error
		if links, err = encodeLinkRows(s.New.Links); err != nil {
			return false, fmt.Errorf("apply summary of crawl %s of %s: %w", s.Crawl.CrawlUUID, s.URL, err)
		}
	}
	fresh := true
	err := d.tx(ctx, func(ctx context.Context, tx *wtx) error {
		var err error
		fresh, err = applySummary(ctx, tx, s, links)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("apply summary of crawl %s of %s: %w", s.Crawl.CrawlUUID, s.URL, err)
	}
	return fresh, nil
}

// applySummary applies s within tx (ApplySummary). It returns false when
// the crawl was already summarized.
//
// A 304 (crawl.GenerationExtendOpen) confirms the content of the URL's
// latest contentful crawl before it, and extends the open generation if
// that holds it. When that crawl's own summary is not applied yet, the
// 304 waits for it (and applySummary returns true
// with nothing written): the contentful summary, once applied, settles
// the 304s that confirmed its content (settleWaiting), so that they
// extend the generation holding that content, not the one open before.
func applySummary(ctx context.Context, tx *wtx, s crawl.SummaryUpdate, links linkRows) (bool, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM crawl_summary WHERE crawl_uuid=?`, s.Crawl.CrawlUUID).Scan(&n); err != nil {
		return false, fmt.Errorf("look up summary: %w", err)
	}
	if n > 0 {
		return false, nil
	}
	urlid, err := tx.urlID(ctx, s.URL)
	if err != nil {
		return false, err
	}
	var open, openFirstSeen, openLastSeen int64
	var openDup bool
	err = tx.QueryRowContext(ctx, `SELECT entity_generation_id, first_seen_unix_utc, last_seen_unix_utc, marked_duplicate FROM entity_generation
		WHERE url_id=? AND url_fragment IS NULL AND confirmed_end_unix_utc IS NULL
		ORDER BY first_seen_unix_utc DESC, entity_generation_id DESC LIMIT 1`, urlid).Scan(&open, &openFirstSeen, &openLastSeen, &openDup)
	if err != nil && !notFound(err) {
		return false, fmt.Errorf("read open generation: %w", err)
	}
	action, exit := s.Action, s.Crawl.ExitCode
	if action == crawl.GenerationExtendOpen {
		of, logged, waits, err := confirmed(ctx, tx, urlid, s.SeenAt)
		if err != nil {
			return false, err
		}
		if waits {
			return true, nil
		}
		// A 304: the open generation, unless it opened after this crawl,
		// or does not hold the content the 304 confirmed (it was seen
		// neither at nor after that content's crawl: the URL redirected
		// since, say), as the DynamoDB store's readers judge.
		action = crawl.GenerationAttach
		if open != 0 && openFirstSeen <= s.SeenAt && (!logged || openFirstSeen <= of && of <= openLastSeen) {
			action = crawl.GenerationExtend
			if openDup {
				exit = crawl.ExitDuplicate
			}
		}
	} else if open != s.OpenID {
		return false, crawl.ErrConflict
	}
	genID := nullID(open)
	switch action {
	case crawl.GenerationExtend:
		if _, err := tx.ExecContext(ctx, `UPDATE entity_generation SET last_seen_unix_utc=max(last_seen_unix_utc, ?)
			WHERE entity_generation_id=?`, s.SeenAt, open); err != nil {
			return false, fmt.Errorf("extend generation %d: %w", open, err)
		}
	case crawl.GenerationReplace:
		if s.New != nil && s.New.DuplicateOf != 0 {
			if err := checkOriginal(ctx, tx, s.New.DuplicateOf); err != nil {
				return false, err
			}
		}
		if open != 0 {
			if _, err := tx.ExecContext(ctx, `UPDATE entity_generation SET confirmed_end_unix_utc=?,
				last_seen_unix_utc=min(last_seen_unix_utc, ?) WHERE entity_generation_id=?`, s.SeenAt, s.SeenAt, open); err != nil {
				return false, fmt.Errorf("close generation %d: %w", open, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE duplicate_summary SET duplicate_status_end_unix_utc=?
				WHERE subject_entity_generation_id=? AND duplicate_status_end_unix_utc IS NULL`, s.SeenAt, open); err != nil {
				return false, fmt.Errorf("end duplicate status of %d: %w", open, err)
			}
			if err := promoteDuplicates(ctx, tx, open, s.SeenAt); err != nil {
				return false, err
			}
		}
		id, err := insertGeneration(ctx, tx, urlid, s.New, links)
		if err != nil {
			return false, err
		}
		genID = &id
	}
	if open != 0 && (action == crawl.GenerationExtend || action == crawl.GenerationReplace) && !crawl.ObservedAtFetch(s.Crawl.ExitCode) {
		if err := observeChange(ctx, tx, urlid, action == crawl.GenerationReplace, s.SeenAt); err != nil {
			return false, err
		}
	}
	c := s.Crawl
	var csID int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO crawl_summary(entity_generation_id, was_robotstxt_approved, crawl_type,
		crawl_uuid, agent_uuid, time_started_unix_utc, exit_code, request_duration_ms) VALUES(?,?,?,?,?,?,?,?)
		RETURNING crawl_summary_id`, genID, b2i(c.WasRobotsTxtApproved), c.CrawlType, c.CrawlUUID, c.AgentUUID,
		c.TimeStarted, exit, c.RequestDurationMS).Scan(&csID); err != nil {
		return false, fmt.Errorf("insert crawl_summary: %w", err)
	}
	if h := s.HTTP; h != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO http_summary(crawl_summary_id, status_code, etag) VALUES(?,?,?)`,
			csID, h.StatusCode, h.ETag); err != nil {
			return false, fmt.Errorf("insert http_summary: %w", err)
		}
	}
	if c.ExitCode.Contentful() {
		if err := settleWaiting(ctx, tx, urlid, s.SeenAt); err != nil {
			return false, err
		}
	}
	return true, nil
}

// checkOriginal returns crawl.ErrConflict unless generation id is still
// an original (open, not itself a duplicate, indexable), as it was when
// the summarizer found it: a summary marking a copy of a generation that
// has closed since would leave the copy out of search for good (the
// original's copies were handed on when it closed).
func checkOriginal(ctx context.Context, tx *wtx, id int64) error {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM entity_generation g
		JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id AND gc.noindex=0
		WHERE g.entity_generation_id=? AND g.confirmed_end_unix_utc IS NULL AND g.marked_duplicate=0`, id).Scan(&n); err != nil {
		return fmt.Errorf("look up original %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("generation %d is no longer an original: %w", id, crawl.ErrConflict)
	}
	return nil
}

func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func insertGeneration(ctx context.Context, tx *wtx, urlid int64, n *crawl.NewGeneration, rows linkRows) (int64, error) {
	if n == nil {
		return 0, fmt.Errorf("replace without a new generation")
	}
	var pileID *int64
	if n.TextPile != nil {
		id, err := textPileID(ctx, tx, n)
		if err != nil {
			return 0, err
		}
		pileID = &id
	}
	g := n.Generation
	var genID int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO entity_generation(entity_generation_uuid, url_id, url_fragment,
		first_seen_unix_utc, last_seen_unix_utc, marked_duplicate, text_pile_id) VALUES(?,?,?,?,?,?,?) RETURNING entity_generation_id`,
		g.UUID, urlid, g.URLFragment, g.FirstSeen, g.LastSeen, b2i(n.DuplicateOf != 0), pileID).Scan(&genID); err != nil {
		return 0, fmt.Errorf("insert entity_generation: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO generation_content(entity_generation_id, content_key, body_key, noindex) VALUES(?,?,?,?)`,
		genID, n.ContentKey, nullStr(n.BodyKey), b2i(n.NoIndex)); err != nil {
		return 0, fmt.Errorf("insert generation_content: %w", err)
	}
	if n.DuplicateOf != 0 {
		if _, err := tx.ExecContext(ctx, `INSERT INTO duplicate_summary(subject_entity_generation_id, duplicate_of_entity_generation_id,
			duplicate_status_start_unix_utc) VALUES(?,?,?)`, genID, n.DuplicateOf, g.FirstSeen); err != nil {
			return 0, fmt.Errorf("insert duplicate_summary: %w", err)
		}
	}
	if f := n.File; f != nil {
		var mid *int64
		if f.MIMEType != nil {
			id, err := tx.mimetypeID(ctx, *f.MIMEType)
			if err != nil {
				return 0, err
			}
			mid = &id
		}
		canon, err := tx.optURLID(ctx, f.CanonicalURL)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO file_summary(entity_generation_id, file_size, mimetype_id, canonical_url_id)
			VALUES(?,?,?,?)`, genID, f.FileSize, mid, canon); err != nil {
			return 0, fmt.Errorf("insert file_summary: %w", err)
		}
	}
	if r := n.Redirect; r != nil {
		to, err := tx.urlID(ctx, r.ToURL)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO redirect_summary(entity_generation_id, to_url_id, information_source,
			by_security_policy, to_url_fragment) VALUES(?,?,?,?,?)`, genID, to, r.InformationSource, b2i(r.BySecurityPolicy),
			r.ToURLFragment); err != nil {
			return 0, fmt.Errorf("insert redirect_summary: %w", err)
		}
	}
	if dd := n.Description; dd != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO document_description(entity_generation_id, time_created_unix_utc,
			time_updated_unix_utc, primary_language, title, primary_headline, description, indexiness) VALUES(?,?,?,?,?,?,?,?)`,
			genID, dd.TimeCreated, dd.TimeUpdated, dd.PrimaryLanguage, dd.Title, dd.PrimaryHeadline, dd.Description, dd.Indexiness); err != nil {
			return 0, fmt.Errorf("insert document_description: %w", err)
		}
	}
	if len(n.Links) > 0 {
		js, err := rows.json(n.Links, func(u string) (int64, error) { return tx.urlID(ctx, u) })
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO generation_links(entity_generation_id, links) VALUES(?,?)`,
			genID, js); err != nil {
			return 0, fmt.Errorf("insert link_summary: %w", err)
		}
	}
	return genID, nil
}

// textPileID returns the id of the generation's text pile, storing the
// pile, its tokens and its full-text row the first time its digest is seen.
func textPileID(ctx context.Context, tx *wtx, n *crawl.NewGeneration) (int64, error) {
	p := n.TextPile
	var id int64
	err := tx.QueryRowContext(ctx, `SELECT text_pile_id FROM text_pile WHERE blake2b512_digest=?`, p.Digest).Scan(&id)
	if err == nil {
		return id, nil
	}
	if !notFound(err) {
		return 0, fmt.Errorf("look up text pile: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `INSERT INTO text_pile(blake2b512_digest, text, secondary_text, big_headlines,
		small_headlines, code_text, quote_text) VALUES(?,?,?,?,?,?,?) RETURNING text_pile_id`, p.Digest, p.Text,
		p.SecondaryText, p.BigHeadlines, p.SmallHeadlines, p.CodeText, p.QuoteText).Scan(&id); err != nil {
		return 0, fmt.Errorf("insert text_pile: %w", err)
	}
	if n.SimHash != 0 {
		b := crawl.SimHashBands(n.SimHash)
		if _, err := tx.ExecContext(ctx, `INSERT INTO text_pile_simhash(text_pile_id, simhash, band0, band1, band2, band3)
			VALUES(?,?,?,?,?,?)`, id, int64(n.SimHash), b[0], b[1], b[2], b[3]); err != nil {
			return 0, fmt.Errorf("insert text_pile_simhash: %w", err)
		}
	}
	var title string
	var desc *string
	if dd := n.Description; dd != nil {
		if dd.Title != nil {
			title = *dd.Title
		}
		desc = dd.Description
	}
	// Its full-text row and token counts go in later, with other piles'
	// (index.go).
	if _, err := tx.ExecContext(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title, description, tokens) VALUES(?,?,?,?)`,
		id, title, desc, encodeTokens(n.Tokens)); err != nil {
		return 0, fmt.Errorf("insert text_pile_unindexed: %w", err)
	}
	return id, nil
}

// promoteDuplicates hands the role of original on when generation orig
// closes at time at: its earliest open, indexable duplicate becomes the
// original (its duplicate status ends), and the others become duplicates
// of that one (their old status ends, a new one starts). Without this a
// page's copies would stay marked duplicates of text no longer live, and
// drop out of search.
func promoteDuplicates(ctx context.Context, tx *wtx, orig, at int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT g.entity_generation_id, coalesce(gc.noindex, 0) FROM duplicate_summary d
		JOIN entity_generation g ON g.entity_generation_id=d.subject_entity_generation_id AND g.confirmed_end_unix_utc IS NULL
		LEFT JOIN generation_content gc ON gc.entity_generation_id=g.entity_generation_id
		WHERE d.duplicate_of_entity_generation_id=? AND d.duplicate_status_end_unix_utc IS NULL
		ORDER BY g.first_seen_unix_utc, g.entity_generation_id`, orig)
	if err != nil {
		return fmt.Errorf("find duplicates of %d: %w", orig, err)
	}
	var dups []int64
	heir := int64(0)
	for rows.Next() {
		var id int64
		var noindex bool
		if err := rows.Scan(&id, &noindex); err != nil {
			rows.Close()
			return fmt.Errorf("scan duplicate: %w", err)
		}
		if heir == 0 && !noindex {
			heir = id
			continue
		}
		dups = append(dups, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE duplicate_summary SET duplicate_status_end_unix_utc=?
		WHERE duplicate_of_entity_generation_id=? AND duplicate_status_end_unix_utc IS NULL`, at, orig); err != nil {
		return fmt.Errorf("end duplicate statuses of copies of %d: %w", orig, err)
	}
	if heir == 0 {
		// No indexable copy left: the copies are originals now.
		for _, id := range dups {
			if _, err := tx.ExecContext(ctx, `UPDATE entity_generation SET marked_duplicate=0 WHERE entity_generation_id=?`, id); err != nil {
				return fmt.Errorf("unmark duplicate %d: %w", id, err)
			}
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE entity_generation SET marked_duplicate=0 WHERE entity_generation_id=?`, heir); err != nil {
		return fmt.Errorf("promote %d to original: %w", heir, err)
	}
	for _, id := range dups {
		if _, err := tx.ExecContext(ctx, `INSERT INTO duplicate_summary(subject_entity_generation_id, duplicate_of_entity_generation_id,
			duplicate_status_start_unix_utc) VALUES(?,?,?)`, id, heir, at); err != nil {
			return fmt.Errorf("re-point duplicate %d to %d: %w", id, heir, err)
		}
	}
	return nil
}

// observeChange folds a revisit into the URL's MRate (crawl/revisit.go):
// its content changed (a new generation) or not. A URL due again after
// this very crawl (its recrawl period set) is made due at the date the
// new rate gives.
func observeChange(ctx context.Context, tx *wtx, urlID int64, changed bool, seenAt int64) error {
	var mrate float64
	var counter, every int64
	var state string
	var last sql.NullInt64
	err := tx.QueryRowContext(ctx, `SELECT f.mrate, f.mrate_counter, f.recrawl_every, f.state, c.last_crawl_time_unix_utc
		FROM crawl_frontier f JOIN crawl_candidate c ON c.url_id=f.url_id WHERE f.url_id=?`, urlID).
		Scan(&mrate, &counter, &every, &state, &last)
	if notFound(err) {
		return nil // a URL summarized without a candidate (tests, imports): nothing to schedule
	}
	if err != nil {
		return fmt.Errorf("read change rate: %w", err)
	}
	mrate, counter = crawl.ObserveChange(mrate, counter, changed)
	q := `UPDATE crawl_frontier SET mrate=?, mrate_counter=?, version=version+1 WHERE url_id=?`
	args := []any{mrate, counter, urlID}
	if every > 0 && crawl.CandidateState(state) == crawl.StateDue && last.Valid && last.Int64 == seenAt {
		q = `UPDATE crawl_frontier SET mrate=?, mrate_counter=?, due_unix_utc=?, version=version+1 WHERE url_id=?`
		args = []any{mrate, counter, crawl.NextVisit(seenAt, time.Duration(every)*time.Second, mrate, counter), urlID}
	}
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("record change rate: %w", err)
	}
	return nil
}
