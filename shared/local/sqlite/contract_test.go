package sqlite_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

var _ contract.Metadata = (*sqlite.DB)(nil)

// TestContract runs the adapter contract against the SQLite store and
// queue, each case on a fresh database file.
func TestContract(t *testing.T) {
	contract.Store(t, func(t *testing.T) contract.Metadata { return snapDB{openDB(t)} })
	contract.Queue(t, func(t *testing.T, visibility time.Duration) contract.MessageQueue {
		return queue{db: openDB(t), name: "fetch", lease: visibility}
	})
	contract.Robots(t, func(t *testing.T) contract.RobotsCache { return openDB(t) })
}

// snapDB is a database that shows every row of every table, so that the
// contract can check that a redelivered or lost write left no row behind.
type snapDB struct{ *sqlite.DB }

func (d snapDB) Snapshot(t *testing.T) contract.Snapshot {
	t.Helper()
	var tables []string
	rows, err := d.SQL().QueryContext(t.Context(), `SELECT name FROM sqlite_master WHERE type='table'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	out := contract.Snapshot{}
	for _, tb := range tables {
		out[tb] = strings.Join(tableRows(t, d.DB, tb), "\n")
	}
	return out
}

// tableRows returns a table's rows as text, sorted.
func tableRows(t *testing.T, db *sqlite.DB, table string) []string {
	t.Helper()
	rows, err := db.SQL().QueryContext(t.Context(), `SELECT * FROM "`+table+`"`)
	if err != nil {
		t.Fatalf("read %s: %v", table, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fields := make([]string, len(cols))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				fields[i] = "NULL"
			case []byte:
				fields[i] = fmt.Sprintf("x'%x'", v)
			default:
				fields[i] = fmt.Sprintf("%q", fmt.Sprint(v))
			}
		}
		out = append(out, strings.Join(fields, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// queue is one named queue of the database, as the pipeline's runner
// uses it: each Receive leases its messages for lease.
type queue struct {
	db    *sqlite.DB
	name  string
	lease time.Duration
}

func (q queue) Send(ctx context.Context, bodies ...[]byte) error {
	return q.db.Send(ctx, q.name, bodies...)
}

func (q queue) Receive(ctx context.Context, max int) ([]contract.Message, error) {
	ms, err := q.db.Receive(ctx, q.name, max, q.lease)
	out := make([]contract.Message, len(ms))
	for i, m := range ms {
		out[i] = contract.Message{ID: m.ID, Handle: m.ID, Body: m.Body, ReceiveCount: m.ReceiveCount}
	}
	return out, err
}

func (q queue) Delete(ctx context.Context, msgs ...contract.Message) error {
	for _, m := range msgs {
		if err := q.db.Delete(ctx, q.name, m.Handle); err != nil {
			return err
		}
	}
	return nil
}

func (q queue) ChangeVisibility(ctx context.Context, m contract.Message, d time.Duration) error {
	return q.db.Retry(ctx, q.name, m.Handle, d)
}

func (q queue) Pending(ctx context.Context) (int, error) { return q.db.Pending(ctx, q.name) }
