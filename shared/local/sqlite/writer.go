package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
// then used as they are.
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
