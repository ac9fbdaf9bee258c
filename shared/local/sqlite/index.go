package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The search index (full_text_entity_index) and the token index
// (token_statistics) are written for many text piles at once, not with
// each page's summary: ApplySummary leaves a new pile in
// text_pile_unindexed, and IndexPending moves up to a batch of them into
// both indexes, in a series of short writes. The pipeline calls it while
// it crawls, when a full batch is waiting or a pile has waited long
// enough, and until nothing is left when a run ends; Search calls it
// first, so it sees every summary applied before it.
//
// Why: a page adds one full-text row that the full-text index flushes
// as a segment of its own at the commit. Written a few dozen piles a
// write (indexPiles), the full-text index writes one segment for all of
// them. A pile's token counts are one row (token_statistics_by_pile,
// schema.sql): as a row per token, they were a sixth of the writer's
// work (BENCHMARKS.md, "Token counts a row per pile").

// IndexBatch is the most piles one IndexPending call takes, and
// indexBytes the most text (past the first pile): a batch of large pages
// must not hold hundreds of them in memory at once. The pipeline indexes
// whenever a batch is waiting: at 256, a crawl of the make-bench tree
// left half its pages to index after its last fetch, 0.3 s of a 2.6 s
// crawl (BENCHMARKS.md, "The search index kept up with the crawl").
const IndexBatch = 64

var indexBytes = 16 << 20 // a variable for tests

// indexPiles is the most piles of one write: IndexPending writes a
// batch as a series of short writes, so that the crawl's other writes
// (a fetch's record, a page's summary) wait for one of them, not for
// the whole batch (1.3 s for 256 pages of the Python tree on a slow
// machine, during which the crawl stalled: BENCHMARKS.md).
var indexPiles = 32 // a variable for tests

// IndexPending writes the full-text rows and token counts of up to a
// batch of text piles that have none yet, and returns how many piles it
// took (0: none was waiting).
//
// It writes in steps: the batch's new tokens; then, a few piles a
// write, each pile's token counts and full-text row with its removal
// from text_pile_unindexed. A pile is indexed (searchable, its counts
// stored, and off the list) only with that last write, so a run killed
// in between indexes it again. Of two processes indexing at once (a
// crawl, and a search from another process), each pile is written by
// the one that takes it off the list; should both add one new token,
// the second's write fails (token_text is unique) and its batch is
// taken again later.
func (d *DB) IndexPending(ctx context.Context) (int, error) {
	// The batch is read, and its token counts decoded, beside the writer
	// (on the read pool, which sees every summary committed): only the
	// token ids are a write.
	piles, err := unindexedPiles(ctx, d.db)
	if err != nil || len(piles) == 0 {
		return 0, wrapIndex(err)
	}
	var texts []string
	counts := make([][]tokenCount, len(piles))
	for i, p := range piles {
		toks, err := decodeTokens(p.tokens)
		if err != nil {
			return 0, wrapIndex(fmt.Errorf("text pile %d: %w", p.id, err))
		}
		for t, c := range toks {
			texts = append(texts, t)
			counts[i] = append(counts[i], tokenCount{n: int64(c)})
		}
	}
	var ids []int64
	if len(texts) > 0 {
		err = d.tx(ctx, func(ctx context.Context, tx *wtx) error {
			ids, err = tx.tokenIDs(ctx, texts)
			return err
		})
		if err != nil {
			return 0, wrapIndex(err)
		}
	}
	for i := range piles {
		for j := range counts[i] {
			counts[i][j].token, ids = ids[0], ids[1:]
		}
		piles[i].stats = tokenStatistics(counts[i])
	}
	for chunk := range slices.Chunk(piles, indexPiles) {
		if err := d.tx(ctx, func(ctx context.Context, tx *wtx) error { return indexText(ctx, tx, chunk) }); err != nil {
			return 0, wrapIndex(err)
		}
	}
	return len(piles), nil
}

// tokenStatistics is a pile's token_statistics_by_pile.tokens: a JSON
// array of [token_id, occurances] pairs in token order; "" when the pile
// has no token counts (--tokens=false, or a pile of no words).
func tokenStatistics(counts []tokenCount) string {
	if len(counts) == 0 {
		return ""
	}
	slices.SortFunc(counts, func(a, b tokenCount) int { return cmp.Compare(a.token, b.token) })
	b := make([]byte, 0, 12*len(counts)+2)
	b = append(b, '[')
	for i, c := range counts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendInt(b, c.token, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, c.n, 10)
		b = append(b, ']')
	}
	return string(append(b, ']'))
}

// indexText writes the full-text rows of piles and takes them off the
// unindexed list; a pile already off it was indexed by another process.
//
// The full-text rows go in with one statement, after the rest. FTS5
// writes the rows it holds in memory out as a segment whenever SQLite
// opens a statement savepoint in the transaction, which it does for
// every statement that may need undoing on its own (the INSERT OR
// REPLACE of a pile's token counts is one). A full-text row a pile,
// between those, made a segment a pile, and FTS5 then spent its time
// merging them: on the PostgreSQL tree 0.41 of the writer's 1.18 CPU s
// went to the full-text index, 0.15 after (BENCHMARKS.md, "One
// full-text statement a write"; TestIndexTextOneSegment).
func indexText(ctx context.Context, tx *wtx, piles []unindexedPile) error {
	var ids []any
	size := 0
	// flush writes the full-text rows gathered so far in one statement,
	// from the index's content view: what the index holds is what the
	// view gives, bounds included (MaxIndexedText), for snippets, a
	// rebuild and FTS5's integrity-check alike.
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO full_text_entity_index(rowid, text_pile_id, any, title, description, text,
			secondary_text, big_headlines, small_headlines, code_text, quote_text)
			SELECT text_pile_id, text_pile_id, "any", title, description, text, secondary_text, big_headlines, small_headlines, code_text, quote_text
			FROM full_text_entity_source WHERE text_pile_id IN (?`+strings.Repeat(",?", len(ids)-1)+`)`, ids...); err != nil {
			return fmt.Errorf("insert full_text_entity_index (text piles %v): %w", ids, err)
		}
		ids, size = ids[:0], 0
		return nil
	}
	for _, p := range piles {
		res, err := tx.ExecContext(ctx, `DELETE FROM text_pile_unindexed WHERE text_pile_id=?`, p.id)
		if err != nil {
			return fmt.Errorf("delete text_pile_unindexed: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("delete text_pile_unindexed: %w", err)
		} else if n == 0 {
			continue
		}
		if p.stats != "" {
			// OR REPLACE: a pile still on the list has these counts in
			// full, whatever an earlier version's run left of its rows
			// before it was killed (migrateTokens moved them over).
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO token_statistics_by_pile(text_pile_id, tokens) VALUES(?,?)`,
				p.id, p.stats); err != nil {
				return fmt.Errorf("insert token_statistics_by_pile: %w", err)
			}
		}
		// The title first: the index is written from its content view,
		// text_pile and text_pile_title (schema.sql).
		if _, err := tx.ExecContext(ctx, `INSERT INTO text_pile_title(text_pile_id, title, description) VALUES(?,?,?)`,
			p.id, p.title, p.desc); err != nil {
			return fmt.Errorf("insert text_pile_title: %w", err)
		}
		ids = append(ids, p.id)
		size += p.textBytes
		if size >= ftsStatementBytes {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// MaxIndexedText bounds each text column of a pile as the full-text
// index takes it: its first 1,048,576 characters (the content view's
// substr, schema.sql, which must say the same number; a test checks
// they agree); the pile keeps all of it. FTS5 holds every distinct term
// of a row in memory until it is written: a page of 9.9 MB of random
// words took the crawl's memory from 156 to 390 MB, past
// docs/limits.md's bound (an exploratory test, 2026-11-30). The largest
// page of eight documentation trees has 1.7 MB of text (two pages of the
// Java API's index); the others have under 300 KB.
const MaxIndexedText = 1 << 20

// ftsStatementBytes bounds the text of one full-text statement (past
// its last pile): the driver copies every bound string into C memory,
// which the Go runtime's memory limit does not see, so a write of large
// pages goes in as a few statements (a segment each) rather than one.
var ftsStatementBytes = 4 << 20 // a variable for tests

func wrapIndex(err error) error {
	if err != nil {
		return fmt.Errorf("index text piles: %w", err)
	}
	return nil
}

// IndexAll runs IndexPending until no text pile is left unindexed.
func (d *DB) IndexAll(ctx context.Context) error {
	for {
		n, err := d.IndexPending(ctx)
		if err != nil || n == 0 {
			return err
		}
	}
}

// Unindexed counts the text piles not in the search index yet.
func (d *DB) Unindexed(ctx context.Context) (int, error) {
	var n int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM text_pile_unindexed`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count unindexed text piles: %w", err)
	}
	return n, nil
}

type tokenCount struct{ token, n int64 }

type unindexedPile struct {
	id     int64
	title  string
	desc   *string
	tokens []byte
	// textBytes is the bytes of its text columns as the index takes
	// them (each at most MaxIndexedText), read without the text itself:
	// the index is written from its content view, and the pile's text
	// is only counted here, to bound a batch and a statement.
	textBytes int
	stats     string // tokenStatistics, once the tokens have ids
}

// querier is a connection pool or a write: what a read can run on.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// pileTextBytes is the SQL of unindexedPile.textBytes, over text_pile p
// (?1 is MaxIndexedText). octet_length reads a text's length from its
// row, not its pages; the bound is in characters, as substr's
// (schema.sql), so a bound reached in bytes is a little under it.
var pileTextBytes = func() string {
	var cols []string
	for _, c := range []string{"text", "secondary_text", "big_headlines", "small_headlines", "code_text", "quote_text"} {
		cols = append(cols, "min(coalesce(octet_length(p."+c+"),0),?1)")
	}
	return strings.Join(cols, "+")
}()

func unindexedPiles(ctx context.Context, q querier) ([]unindexedPile, error) {
	rows, err := q.QueryContext(ctx, `SELECT u.text_pile_id, u.title, u.description, u.tokens, `+pileTextBytes+`
		FROM text_pile_unindexed u JOIN text_pile p ON p.text_pile_id=u.text_pile_id ORDER BY u.text_pile_id LIMIT ?2`, MaxIndexedText, IndexBatch)
	if err != nil {
		return nil, fmt.Errorf("read unindexed text piles: %w", err)
	}
	defer rows.Close()
	var out []unindexedPile
	size := 0
	for size < indexBytes && rows.Next() {
		var p unindexedPile
		if err := rows.Scan(&p.id, &p.title, &p.desc, &p.tokens, &p.textBytes); err != nil {
			return nil, fmt.Errorf("read unindexed text piles: %w", err)
		}
		out = append(out, p)
		size += len(p.tokens) + p.textBytes
	}
	return out, rows.Err()
}

// encodeTokens packs token counts as, for each token, its length and
// bytes and its count, as uvarints: compact, and any bytes go through
// unchanged (a token need not be valid UTF-8).
func encodeTokens(tokens map[string]int) []byte {
	if len(tokens) == 0 {
		return nil
	}
	var b []byte
	for t, n := range tokens {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		b = binary.AppendUvarint(b, uint64(n))
	}
	return b
}

var errTokens = errors.New("damaged token counts")

func decodeTokens(b []byte) (map[string]int, error) {
	out := map[string]int{}
	for len(b) > 0 {
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l {
			return nil, errTokens
		}
		t := string(b[k : k+int(l)])
		b = b[k+int(l):]
		n, k := binary.Uvarint(b)
		if k <= 0 || n > 1<<31 {
			return nil, errTokens
		}
		b = b[k:]
		out[t] = int(n)
	}
	return out, nil
}
