package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"reflect"
	"testing"
)

// TestInsertTokens checks that the set-based insert (the counts as a JSON
// object) stores what a statement per token stores, for tokens JSON has
// to escape too, and that a token that is not valid UTF-8 still goes in.
func TestInsertTokens(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	pile := func(digest string) int64 {
		var id int64
		if err := d.db.QueryRowContext(ctx, `INSERT INTO text_pile(blake2b512_digest) VALUES(?) RETURNING text_pile_id`,
			[]byte(digest)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	stats := func(pileID int64) map[string]int {
		rows, err := d.db.QueryContext(ctx, `SELECT t.token_text, s.occurances FROM token_statistics s
			JOIN token t ON t.token_id=s.token_id WHERE s.text_pile_id=?`, pileID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]int{}
		for rows.Next() {
			var tok string
			var n int
			if err := rows.Scan(&tok, &n); err != nil {
				t.Fatal(err)
			}
			got[tok] = n
		}
		return got
	}
	tokens := map[string]int{
		"lamp": 3, "lighthouse": 1, "ünïcödé": 2, "灯台": 5, `quote"and\backslash`: 1, "<tag>&amp": 1, "12345": 4,
	}
	tests := []struct {
		name   string
		tokens map[string]int
		insert func(context.Context, *sql.Tx, int64, map[string]int) error
	}{
		{"set-based", tokens, insertTokens},
		{"set-based, tokens already known", tokens, insertTokens},
		{"by row", tokens, insertTokensByRow},
		{"not valid UTF-8", map[string]int{"ok": 1, "bad\xff": 2}, insertTokens},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := pile(tt.name + string(rune('a'+i)))
			if err := d.tx(ctx, func(tx *sql.Tx) error { return tt.insert(ctx, tx, id, tt.tokens) }); err != nil {
				t.Fatal(err)
			}
			if got := stats(id); !reflect.DeepEqual(got, tt.tokens) {
				t.Errorf("token_statistics = %v, want %v", got, tt.tokens)
			}
		})
	}
	var n int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM token`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := len(tokens) + 2; n != want {
		t.Errorf("%d tokens stored, want %d (each once)", n, want)
	}
}
