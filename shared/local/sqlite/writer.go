package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
)

// The writer: every write to the database goes through one goroutine
// that owns the one write connection and commits in groups. A caller's
// write (a func over a *wtx) waits in line; the writer takes all the
// writes waiting, runs them in one transaction, commits once, and only
// then answers each caller. A write that fails fails alone: the others
// still commit.
//
// A write may run twice (see commitGroup): it must set what it returns
// afresh each time it runs.
//
// Why: a commit costs as much as a page's rows (the WAL frames of every
// b-tree page touched, the full-text index's flush), and the crawl's
// stages write concurrently (fetchers, parsers, summarizers, admissions,
// queue deletes). Grouping them pays that cost once per group, not once
// per write, and a write is still durable (committed, in the WAL) when
// its caller returns, so the resume promise is unchanged.

// maxGroup bounds the writes of one transaction, so that one caller's
// wait stays short under load.
const maxGroup = 256

type writeReq struct {
	ctx  context.Context
	f    func(context.Context, *wtx) error
	done chan error
}

// wtx is one write inside a group: it runs statements on the writer's
// connection, inside the group's transaction.
type wtx struct {
	d *DB
}

// tx runs f as one write: atomically, in a transaction shared with the
// other writes waiting at the same time. It returns f's error, or the
// commit's. f gets a context that is not cancelled with ctx (a statement
// interrupted by a cancellation would roll back the whole group): a
// write already started finishes; one not yet started when ctx is done
// is not run.
func (d *DB) tx(ctx context.Context, f func(context.Context, *wtx) error) error {
	if d.writes == nil {
		return errors.New("database is open read-only")
	}
	r := &writeReq{ctx: ctx, f: f, done: make(chan error, 1)}
	select {
	case d.writes <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-d.closed:
		return errClosed
	}
	return <-r.done
}

// exec runs one statement as a write.
func (d *DB) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		var err error
		res, err = w.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

var errClosed = errors.New("database is closed")

// write is the writer goroutine: it runs until Close.
func (d *DB) write() {
	defer close(d.writerDone)
	for {
		var group []*writeReq
		select {
		case r := <-d.writes:
			group = append(group, r)
		case <-d.closed:
			return
		}
	more:
		for len(group) < maxGroup {
			select {
			case r := <-d.writes:
				group = append(group, r)
			default:
				break more
			}
		}
		d.commitGroup(group)
	}
}

// commitGroup runs a group of writes in one transaction and answers
// them. Should one of them fail, the group is rolled back and each write
// runs again alone, so that it fails alone. (Savepoints would isolate
// them without running anything twice, but they cost more than the
// rare failure: every page a write touches is copied to the statement
// journal first, and the full-text index flushes at every savepoint.)
func (d *DB) commitGroup(reqs []*writeReq) {
	var run []*writeReq
	for _, r := range reqs {
		if err := r.ctx.Err(); err != nil {
			r.done <- err
			continue
		}
		run = append(run, r)
	}
	if len(run) == 0 {
		return
	}
	if len(run) > 1 {
		if d.runGroup(run, nil) {
			return
		}
	}
	for _, r := range run {
		d.runGroup([]*writeReq{r}, r.done)
	}
}

// runGroup runs writes in one transaction. If all succeed and commit it
// answers each and returns true. Else it rolls back and returns false,
// answering nothing unless alone is the group's only write's answer.
//
// The transaction is SQL on the writer's connection (BEGIN IMMEDIATE,
// COMMIT), not a *sql.Tx: statements prepared on the connection are
// then used as they are, and insertRows can hand rows to the driver
// (see there).
func (d *DB) runGroup(reqs []*writeReq, alone chan error) bool {
	ctx := context.Background()
	_, err := d.wc.ExecContext(ctx, "BEGIN IMMEDIATE")
	if err != nil {
		err = fmt.Errorf("begin: %w", corrupt(err))
	} else {
		w := &wtx{d: d}
		for _, r := range reqs {
			if err = r.f(context.WithoutCancel(r.ctx), w); err != nil {
				break
			}
		}
		if err == nil {
			if _, cerr := d.wc.ExecContext(ctx, "COMMIT"); cerr != nil {
				err = fmt.Errorf("commit: %w", corrupt(cerr))
			}
		}
		if err != nil {
			// Also after a failed COMMIT, which can leave the transaction
			// open. (When SQLite has already rolled back, this fails, and
			// that is ignored.)
			d.wc.ExecContext(ctx, "ROLLBACK")
		}
	}
	if err != nil {
		// Nothing of the group is stored: the caches may name rows that
		// are not.
		d.ids.reset()
		if alone != nil {
			alone <- err
		}
		return false
	}
	for _, r := range reqs {
		r.done <- nil
	}
	return true
}

// maxStatements bounds the statements kept prepared: the queries are
// the package's own, so they are few, but a bound keeps a mistake (a
// query built from data) from growing without end.
const maxStatements = 256

// prep returns query prepared on the writer's connection, once for the
// life of the database (nil if it cannot be, or past maxStatements: the
// caller then runs it unprepared, which returns the error).
func (w *wtx) prep(ctx context.Context, query string) *sql.Stmt {
	d := w.d
	if st, ok := d.hot[query]; ok {
		return st
	}
	if len(d.hot) >= maxStatements {
		return nil
	}
	st, err := d.wc.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	d.hot[query] = st
	return st
}

// ExecContext runs a statement, prepared once.
func (w *wtx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := w.prep(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return w.d.wc.ExecContext(ctx, query, args...)
}

// QueryRowContext runs a query of one row, prepared once.
func (w *wtx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := w.prep(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return w.d.wc.QueryRowContext(ctx, query, args...)
}

// QueryContext runs a query, prepared once.
func (w *wtx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := w.prep(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return w.d.wc.QueryContext(ctx, query, args...)
}

// insertRows inserts rows of n values each with insert (an INSERT ...
// VALUES without its rows), many rows a statement: a statement's cost
// through database/sql is about that of binding 50 values, so a page's
// hundreds of links and tokens go 64 rows at a time, the rest 16, 4 and 1
// at a time (a few statement shapes, each prepared once).
//
// The rows go to the driver directly (database/sql's Conn.Raw), with
// the values converted here, into one reused slice: database/sql would
// allocate and convert 1,664 arguments for each 64 rows of links, which
// was a sixth of the writer's time in these statements (BENCHMARKS.md).
// A value that is not already a driver.Value is converted as
// database/sql converts it.
func (w *wtx) insertRows(ctx context.Context, insert string, n int, values []any) error {
	d := w.d
	one := "(?" + strings.Repeat(",?", n-1) + ")"
	return d.wc.Raw(func(dc any) error {
		for len(values) > 0 {
			rows := len(values) / n
			k := 1
			for _, c := range []int{64, 16, 4} {
				if rows >= c {
					k = c
					break
				}
			}
			st, kept, err := d.rawStmt(ctx, dc, insert+" VALUES "+one+strings.Repeat(","+one, k-1))
			if err != nil {
				return err
			}
			if !kept {
				defer st.(driver.Stmt).Close()
			}
			args := d.args[:0]
			for i, v := range values[:k*n] {
				if !driver.IsValue(v) {
					if v, err = driver.DefaultParameterConverter.ConvertValue(v); err != nil {
						return fmt.Errorf("argument %d: %w", i+1, err)
					}
				}
				args = append(args, driver.NamedValue{Ordinal: i + 1, Value: v})
			}
			d.args = args
			_, err = st.ExecContext(ctx, args)
			clear(args) // no strings kept alive by the reused slice
			if err != nil {
				return err
			}
			values = values[k*n:]
		}
		return nil
	})
}

// rawStmt returns query prepared on the driver's connection, and
// whether it is kept prepared (up to maxStatements): if not, the caller
// closes it.
func (d *DB) rawStmt(ctx context.Context, dc any, query string) (st driver.StmtExecContext, kept bool, err error) {
	if st, ok := d.raw[query]; ok {
		return st, true, nil
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, false, fmt.Errorf("the SQLite driver's connection (%T) cannot prepare with a context", dc)
	}
	ds, err := pc.PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	se, ok := ds.(driver.StmtExecContext)
	if !ok {
		ds.Close()
		return nil, false, fmt.Errorf("the SQLite driver's statement (%T) cannot execute with a context", ds)
	}
	if len(d.raw) >= maxStatements {
		return se, false, nil
	}
	d.raw[query] = se
	return se, true, nil
}
