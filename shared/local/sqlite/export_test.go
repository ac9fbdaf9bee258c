package sqlite

import (
	"context"
	"database/sql"
)

// Exec runs a statement through the writer, for tests that set up rows
// the store's methods would not write.
func (d *DB) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.exec(ctx, query, args...)
}
