// Package sqlite is the embedded metadata store and queue: the seeds'
// tables in one SQLite file, through the pure-Go modernc.org/sqlite
// driver so every binary stays static.
package sqlite

import (
	"context"
	"database/sql"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"

	sqlitedriver "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed schema.sql
var schema string

// DB is an open crawl database: a pool of connections that read, and
// one connection that writes, owned by the writer goroutine (writer.go).
type DB struct {
	db *sql.DB // readers: see the last commit, never write

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // see prepared

	// The writer's; nil when opened read-only.
	w          *sql.DB
	writes     chan *writeReq
	closed     chan struct{}
	writerDone chan struct{}
	closeOnce  sync.Once
	wc         *sql.Conn            // w's one connection, held by the writer
	hot        map[string]*sql.Stmt // statements prepared on wc, used by the writer only
	ids        idCache              // the writer's only

	older *older // what a database of an earlier version, opened read-only, lacks
}

// An Option is a setting of Open.
type Option func(*options)

type options struct {
	log      *slog.Logger
	maxPages int
}

// WithLog has Open log what it does once in a database's life, such as
// rebuilding an earlier version's full-text index.
func WithLog(log *slog.Logger) Option { return func(o *options) { o.log = log } }

// WithMaxPages bounds the database file at n pages of 4 KiB (SQLite's
// max_page_count): a write past it fails as on a full disk
// (SQLITE_FULL, Unwritable).
func WithMaxPages(n int) Option { return func(o *options) { o.maxPages = n } }

// readers is the size of the read pool: reads (a candidate looked up, a
// generation found, the queues counted) run beside the writer, as WAL
// allows.
const readers = 4

// ErrCorrupt means the database file is damaged (it fails SQLite's
// integrity check) or is not a crawl database. Such a file is never
// written to.
var ErrCorrupt = errors.New("damaged or not a crawl database")

// Open opens (creating if needed) the database at path and brings its
// schema up to date. An existing file is checked first (SQLite's
// quick_check): a damaged one is refused with ErrCorrupt before anything
// is written to it.
//
// The options say where it logs what it does once in a database's life
// (WithLog; by default nowhere).
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		// Checked through a read-only connection: even the WAL pragma
		// below writes to the file.
		if err := integrityCheck(ctx, path); err != nil {
			return nil, err
		}
	}
	pragmas := "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
	if o.maxPages > 0 {
		pragmas += fmt.Sprintf("&_pragma=max_page_count(%d)", o.maxPages)
	}
	w, err := sql.Open("sqlite", dsn(path, pragmas))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection writes: SQLite has one writer anyway.
	w.SetMaxOpenConns(1)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, fmt.Errorf("bring %s up to date: %w", path, corrupt(err))
	}
	if _, err := w.ExecContext(ctx, schema); err != nil {
		w.Close()
		return nil, fmt.Errorf("create schema in %s: %w", path, corrupt(err))
	}
	// What an earlier version kept otherwise, moved over once.
	for _, up := range []func(context.Context, *sql.DB, *slog.Logger) error{migrateFullText, migrateTokens, migrateLinks} {
		if err := up(ctx, w, o.log); err != nil {
			w.Close()
			return nil, fmt.Errorf("bring %s up to date: %w", path, corrupt(err))
		}
	}
	wc, err := w.Conn(ctx)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, "&_pragma=query_only(1)"))
	if err != nil {
		wc.Close()
		w.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	d := &DB{db: r, stmts: map[string]*sql.Stmt{}, w: w, writes: make(chan *writeReq), closed: make(chan struct{}),
		writerDone: make(chan struct{}), wc: wc, hot: map[string]*sql.Stmt{},
		ids: newIDCache()}
	go d.write()
	return d, nil
}

// OpenReadOnly opens an existing database for reading only (status,
// search): it writes nothing, not even the schema, and works while a
// crawl writes to the same file.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	sdb, err := sql.Open("sqlite", dsn(path, "&mode=ro"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	sdb.SetMaxOpenConns(1)
	var n int
	if err := sdb.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'crawl_log'`).Scan(&n); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("read %s: %w", path, corrupt(err))
	}
	if n == 0 {
		sdb.Close()
		return nil, fmt.Errorf("%s has no crawl_log table: %w", path, ErrCorrupt)
	}
	old, err := olderSchema(ctx, sdb)
	if err != nil {
		sdb.Close()
		return nil, fmt.Errorf("read %s: %w", path, corrupt(err))
	}
	return &DB{db: sdb, stmts: map[string]*sql.Stmt{}, older: old}, nil
}

// olderSchema reads what a database made by an earlier version lacks of
// the schema (migrate adds it when the database is next opened for
// writing): the added columns it has not got, and whether it has the
// sites tables. A read-only handle reads such a database as it is.
func olderSchema(ctx context.Context, db *sql.DB) (*older, error) {
	o := &older{}
	var sites int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name='sites'`).Scan(&sites); err != nil {
		return nil, err
	}
	o.noSites = sites == 0
	for _, c := range addedColumns {
		var has int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name=?`, c.table, c.column).Scan(&has); err != nil {
			return nil, err
		}
		if has == 0 {
			o.missing = append(o.missing, c)
		}
	}
	var err error
	if o.ownTextFTS, err = ownTextFTS(ctx, db); err != nil {
		return nil, err
	}
	if !o.noSites && len(o.missing) == 0 && !o.ownTextFTS {
		return nil, nil
	}
	return o, nil
}

// older is what an earlier version's database lacks (nil: nothing).
type older struct {
	missing []addedColumn
	noSites bool
	// ownTextFTS: its full_text_entity_index keeps its own copy of the
	// text, with rowids of its own (migrateFullText).
	ownTextFTS bool
}

// columns returns a select list with the missing columns of alias's
// table read as their defaults.
func (o *older) columns(list, table, alias string) string {
	if o == nil {
		return list
	}
	for _, c := range o.missing {
		if c.table == table {
			list = regexp.MustCompile(`\b`+alias+`\.`+c.column+`\b`).ReplaceAllString(list, c.value)
		}
	}
	return list
}

// addedColumns are the columns added to a table after databases were
// made without them: migrate adds them to such a database before the
// schema (which may index them) is applied.
var addedColumns = []addedColumn{
	{"crawl_frontier", "site_id", "TEXT", "NULL"},
	{"crawl_frontier", "mrate", "REAL NOT NULL DEFAULT 0", "0.0"},
	{"crawl_frontier", "mrate_counter", "INTEGER NOT NULL DEFAULT 0", "0"},
	{"crawl_frontier", "recrawl_every", "INTEGER NOT NULL DEFAULT 0", "0"},
	{"file_body", "body_sha256", "TEXT", "NULL"},
}

// addedColumn is a column added after databases were made without it,
// its declaration, and the value a read of such a database takes for it.
type addedColumn struct{ table, column, decl, value string }

// migrate brings a database made by an earlier version up to the schema.
func migrate(ctx context.Context, w *sql.DB) error {
	for _, c := range addedColumns {
		var tables, has int
		if err := w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?`, c.table).Scan(&tables); err != nil {
			return err
		}
		if tables == 0 {
			continue // a new database: the schema makes the table whole
		}
		if err := w.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name=?`, c.table, c.column).Scan(&has); err != nil {
			return err
		}
		if has == 0 {
			if _, err := w.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.column+` `+c.decl); err != nil {
				return fmt.Errorf("add %s.%s: %w", c.table, c.column, err)
			}
		}
	}
	return nil
}

// ownTextFTS says whether the database's full_text_entity_index is of
// an earlier version, which kept its own copy of the text.
func ownTextFTS(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name='full_text_entity_index'
		AND sql NOT LIKE '%content=%'`).Scan(&n)
	return n > 0, err
}

// migrateFullText rebuilds the full-text index of an earlier version,
// which kept its own copy of every pile's text, as the index that reads
// it from text_pile (schema.sql): the titles and descriptions it was
// written with are kept in text_pile_title, and the index is rebuilt
// from its source, in one transaction. A crawl of the make-bench tree
// takes about a second.
func migrateFullText(ctx context.Context, w *sql.DB, log *slog.Logger) error {
	old, err := ownTextFTS(ctx, w)
	if err != nil || !old {
		return err
	}
	if log != nil {
		// A warning, which the CLI shows by default: a large database
		// takes minutes, once.
		var piles int
		w.QueryRowContext(ctx, `SELECT count(*) FROM full_text_entity_index`).Scan(&piles)
		log.WarnContext(ctx, "rebuilding the full-text index of a database made by an earlier version (once)", "text_piles", piles)
	}
	return inOneTx(ctx, w, "rebuild the full-text index",
		`INSERT OR IGNORE INTO text_pile_title(text_pile_id, title, description)
			SELECT f.text_pile_id, coalesce(f.title, ''), f.description FROM full_text_entity_index f
			JOIN text_pile p ON p.text_pile_id = f.text_pile_id`,
		`DROP TABLE full_text_entity_index`,
		schema, // the index as it is now
		`INSERT INTO full_text_entity_index(full_text_entity_index) VALUES('rebuild')`,
	)
}

// dsn is the driver's name for the file at path, with the pragmas every
// connection gets and then more.
func dsn(path, more string) string {
	// The path is part of a file: URI: escape what SQLite would read as
	// the query, the fragment or an escape.
	uriPath := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(path)
	return "file:" + uriPath + "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=temp_store(MEMORY)" + more
}

// integrityCheck runs SQLite's quick_check (the integrity check without
// the index-content cross-check, linear in the file's size).
func integrityCheck(ctx context.Context, path string) error {
	sdb, err := sql.Open("sqlite", dsn(path, "&mode=ro"))
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer sdb.Close()
	rows, err := sdb.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return fmt.Errorf("check %s: %w", path, corrupt(err))
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("check %s: %w", path, corrupt(err))
		}
		if line != "ok" {
			problems = append(problems, strings.Join(strings.Fields(line), " "))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check %s: %w", path, corrupt(err))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s fails SQLite's integrity check (%s): %w", path, strings.Join(problems, "; "), ErrCorrupt)
	}
	return nil
}

// corrupt marks SQLite's "malformed" and "not a database" errors as
// ErrCorrupt.
func corrupt(err error) error {
	var se *sqlitedriver.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff { // the primary code of an extended one
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("%w: %w", ErrCorrupt, err)
		}
	}
	return err
}

// Unwritable reports whether err is SQLite saying that the database
// cannot be written: the disk is full (SQLITE_FULL), the file is
// read-only (SQLITE_READONLY), or a write, a sync or a truncation of it
// failed (those SQLITE_IOERR codes). Retrying does not help until
// someone acts. A failed read is not one: it is retried, and its
// message dead-lettered, as any other failure.
func Unwritable(err error) bool {
	var se *sqlitedriver.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_READONLY:
		return true
	}
	switch se.Code() {
	case sqlite3.SQLITE_IOERR_WRITE, sqlite3.SQLITE_IOERR_FSYNC, sqlite3.SQLITE_IOERR_DIR_FSYNC, sqlite3.SQLITE_IOERR_TRUNCATE:
		return true
	}
	return false
}

// Close stops the writer (a write already begun is finished and
// committed) and closes the database.
func (d *DB) Close() error {
	var errs []error
	d.closeOnce.Do(func() {
		if d.w != nil {
			close(d.closed)
			<-d.writerDone
			for _, st := range d.hot {
				st.Close()
			}
			errs = append(errs, d.wc.Close())
			// Fold the WAL into the database, so the file is whole on its
			// own. Should it not be done (a reader still at it), the WAL
			// stays beside it, as valid as before.
			d.w.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
			errs = append(errs, d.w.Close())
		}
		d.mu.Lock()
		for q, st := range d.stmts {
			st.Close()
			delete(d.stmts, q)
		}
		d.mu.Unlock()
		errs = append(errs, d.db.Close())
	})
	return errors.Join(errs...)
}

// prepared returns a read query prepared once for the life of the
// database, for the reads run once or more per URL or per link: the
// driver parses and plans a statement on every call that is not
// prepared, which costs as much as running these. (Writes get the same
// from the writer: see wtx.prep.)
func (d *DB) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st, ok := d.stmts[query]; ok {
		return st, nil
	}
	st, err := d.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	d.stmts[query] = st
	return st, nil
}

// queryRow is QueryRowContext with the query prepared once (prepared):
// for the reads run once or more per URL.
func (d *DB) queryRow(ctx context.Context, query string, args ...any) scanner {
	st, err := d.prepared(ctx, query)
	if err != nil {
		return errRow{err}
	}
	return st.QueryRowContext(ctx, args...)
}

// query is QueryContext with the query prepared once (prepared).
func (d *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := d.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// SQL returns the read pool, for read-only queries in tests and reports.
func (d *DB) SQL() *sql.DB { return d.db }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// isUniqueViolation reports whether err is a UNIQUE constraint failure.
func isUniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

func notFound(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// deref is a nullable text as the driver takes it: its text, or nil.
func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// migrateTokens turns the token_statistics table of an earlier version,
// a row per token and pile, into token_statistics_by_pile, a row per
// pile, read through the token_statistics view (schema.sql), in one
// transaction. A crawl of the make-bench tree (322,000 rows) takes about
// a second.
func migrateTokens(ctx context.Context, w *sql.DB, log *slog.Logger) error {
	if old, err := isTable(ctx, w, "token_statistics"); err != nil || !old {
		return err
	}
	if log != nil {
		var piles int
		w.QueryRowContext(ctx, `SELECT count(DISTINCT text_pile_id) FROM token_statistics`).Scan(&piles)
		log.WarnContext(ctx, "storing the token counts of a database made by an earlier version a row per text pile (once)", "text_piles", piles)
	}
	// Grouping a table whose key leads with the token sorts all of it:
	// on disk, not in memory (the connection's temp_store), or a large
	// crawl's rows would not fit.
	if _, err := w.ExecContext(ctx, `PRAGMA temp_store=FILE`); err != nil {
		return fmt.Errorf("store token counts a row per pile: %w", err)
	}
	defer w.ExecContext(context.WithoutCancel(ctx), `PRAGMA temp_store=MEMORY`)
	return inOneTx(ctx, w, "store token counts a row per pile",
		// A pile still unindexed may have only part of its rows (a run
		// killed between its chunks): IndexPending writes it in full.
		`INSERT OR IGNORE INTO token_statistics_by_pile(text_pile_id, tokens)
			SELECT text_pile_id, json_group_array(json_array(token_id, occurances) ORDER BY token_id)
			FROM token_statistics WHERE text_pile_id NOT IN (SELECT text_pile_id FROM text_pile_unindexed)
			GROUP BY text_pile_id`,
		`DROP TABLE token_statistics`,
		schema, // the view
	)
}

// migrateLinks turns the link_summary table of an earlier version, a
// row per link, into generation_links, a row per generation, read
// through the link_summary view (schema.sql), in one transaction. The
// rows keep their order; their link_summary_id is the view's. The old
// table's pages are free pages of the file afterwards, which later
// writes reuse (VACUUM gives them back to the file system).
func migrateLinks(ctx context.Context, w *sql.DB, log *slog.Logger) error {
	if old, err := isTable(ctx, w, "link_summary"); err != nil || !old {
		return err
	}
	if log != nil {
		var links int
		w.QueryRowContext(ctx, `SELECT count(*) FROM link_summary`).Scan(&links)
		log.WarnContext(ctx, "storing the links of a database made by an earlier version a row per page (once)", "links", links)
	}
	return inOneTx(ctx, w, "store links a row per page",
		// The flags as crawl.LinkSummary.Flags sets them (in SQL, | and
		// << bind alike: the brackets are needed); the rows in their
		// table's order, which was the page's.
		`INSERT INTO generation_links(entity_generation_id, links)
			SELECT entity_generation_id, json_group_array(json_array(link_to_url,
				rel_nofollow | (rel_me<<1) | (rel_tag<<2) | (contains_headline<<3) | (in_header<<4) | (in_footer<<5) | (in_aside<<6) |
				(in_nav<<7) | (in_form<<8) | (in_main<<9) | (in_article<<10) | (in_section<<11) | (in_table<<12) | (in_figure<<13) |
				(in_address<<14) | (in_code<<15) | (in_headline<<16) | (in_list<<17) | (in_paragraph<<18),
				destination_type, link_locality, link_to_fragment, html_tag_name, text) ORDER BY link_summary_id)
			FROM link_summary GROUP BY entity_generation_id`,
		`DROP TABLE link_summary`,
		schema, // the view
	)
}

// isTable reports whether the database has a table (not a view) of that
// name: what an earlier version kept where this one has a view.
func isTable(ctx context.Context, w *sql.DB, name string) (bool, error) {
	var n int
	err := w.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type='table' AND name=?`, name).Scan(&n)
	return n > 0, err
}

// inOneTx runs queries in one transaction; what says what they do, for
// the error.
func inOneTx(ctx context.Context, w *sql.DB, what string, queries ...string) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer tx.Rollback()
	for _, q := range queries {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}
