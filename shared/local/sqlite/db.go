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
	"os"
	"strings"
	"sync"

	sqlitedriver "modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

//go:embed schema.sql
var schema string

// DB is an open crawl database.
type DB struct {
	db *sql.DB

	mu    sync.Mutex
	stmts map[string]*sql.Stmt // see prepared
}

// ErrCorrupt means the database file is damaged (it fails SQLite's
// integrity check) or is not a crawl database. Such a file is never
// written to.
var ErrCorrupt = errors.New("damaged or not a crawl database")

// Open opens (creating if needed) the database at path and brings its
// schema up to date. An existing file is checked first (SQLite's
// quick_check): a damaged one is refused with ErrCorrupt before anything
// is written to it.
func Open(ctx context.Context, path string) (*DB, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		// Checked through a read-only connection: even the WAL pragma
		// below writes to the file.
		if err := integrityCheck(ctx, path); err != nil {
			return nil, err
		}
	}
	sdb, err := sql.Open("sqlite", dsn(path, "&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// One connection: SQLite has one writer anyway, and a single
	// connection makes every statement see the last committed write.
	sdb.SetMaxOpenConns(1)
	if _, err := sdb.ExecContext(ctx, schema); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("create schema in %s: %w", path, corrupt(err))
	}
	return &DB{db: sdb, stmts: map[string]*sql.Stmt{}}, nil
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
	return &DB{db: sdb, stmts: map[string]*sql.Stmt{}}, nil
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

// Close closes the database.
func (d *DB) Close() error {
	d.mu.Lock()
	for q, st := range d.stmts {
		st.Close()
		delete(d.stmts, q)
	}
	d.mu.Unlock()
	return d.db.Close()
}

// prepared returns query prepared once for the life of the database, for
// the statements run once or more per URL or per link: the driver parses
// and plans a statement on every call that is not prepared, which costs
// as much as running these. In a transaction use tx.StmtContext(ctx, st),
// which reuses it on the one connection; but call prepared before the
// transaction begins, since preparing needs that connection.
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

// SQL returns the underlying handle, for read-only queries in tests and
// reports.
func (d *DB) SQL() *sql.DB { return d.db }

// tx runs f in a transaction, committing if f returns nil.
func (d *DB) tx(ctx context.Context, f func(*sql.Tx) error) error {
	t, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := f(t); err != nil {
		t.Rollback()
		return err
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// urlID returns the id of u in the url table, adding it if needed.
func urlID(ctx context.Context, q queryer, u string) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx,
		`INSERT INTO url(url) VALUES(?) ON CONFLICT(url) DO UPDATE SET url=excluded.url RETURNING url_id`, u).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("url id of %s: %w", u, err)
	}
	return id, nil
}

// urlIDs is urlID for many URLs in one transaction (a page's links):
// its statements are prepared once, and a URL already stored is only
// read, not rewritten by the upsert.
type urlIDs struct{ sel, ins *sql.Stmt }

func prepareURLIDs(ctx context.Context, tx *sql.Tx) (*urlIDs, error) {
	sel, err := tx.PrepareContext(ctx, `SELECT url_id FROM url WHERE url=?`)
	if err != nil {
		return nil, fmt.Errorf("prepare url lookup: %w", err)
	}
	ins, err := tx.PrepareContext(ctx,
		`INSERT INTO url(url) VALUES(?) ON CONFLICT(url) DO UPDATE SET url=excluded.url RETURNING url_id`)
	if err != nil {
		sel.Close()
		return nil, fmt.Errorf("prepare url insert: %w", err)
	}
	return &urlIDs{sel: sel, ins: ins}, nil
}

func (s *urlIDs) id(ctx context.Context, u string) (int64, error) {
	var id int64
	err := s.sel.QueryRowContext(ctx, u).Scan(&id)
	if notFound(err) {
		err = s.ins.QueryRowContext(ctx, u).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("url id of %s: %w", u, err)
	}
	return id, nil
}

func (s *urlIDs) Close() {
	s.sel.Close()
	s.ins.Close()
}

// optURLID is urlID for an optional URL.
func optURLID(ctx context.Context, q queryer, u *string) (*int64, error) {
	if u == nil {
		return nil, nil
	}
	id, err := urlID(ctx, q, *u)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// lookupURLID returns the id of u, or sql.ErrNoRows.
func lookupURLID(ctx context.Context, q queryer, u string) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT url_id FROM url WHERE url=?`, u).Scan(&id)
	return id, err
}

func mimetypeID(ctx context.Context, q queryer, m string) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx,
		`INSERT INTO mimetype(mimetype) VALUES(?) ON CONFLICT(mimetype) DO UPDATE SET mimetype=excluded.mimetype RETURNING mimetype_id`, m).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("mimetype id of %s: %w", m, err)
	}
	return id, nil
}

func b2i(b bool) int {
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
