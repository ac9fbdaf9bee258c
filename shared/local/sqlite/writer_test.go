package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func openTest(t *testing.T) *DB {
	t.Helper()
	d, err := Open(context.Background(), filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func (d *DB) testPile(t *testing.T, digest string) int64 {
	t.Helper()
	var id int64
	err := d.tx(context.Background(), func(ctx context.Context, w *wtx) error {
		return w.QueryRowContext(ctx, `INSERT INTO text_pile(blake2b512_digest) VALUES(?) RETURNING text_pile_id`,
			[]byte(digest)).Scan(&id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (d *DB) testStats(t *testing.T, pileID int64) map[string]int {
	t.Helper()
	rows, err := d.db.QueryContext(context.Background(), `SELECT t.token_text, s.occurances FROM token_statistics s
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

// TestIndexTokens checks that a pile's token counts are stored, tokens
// already known are not stored twice, and a token that is not valid
// UTF-8 still goes in.
func TestIndexTokens(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	tokens := map[string]int{
		"lamp": 3, "lighthouse": 1, "ünïcödé": 2, "灯台": 5, `quote"and\backslash`: 1, "<tag>&amp": 1, "12345": 4,
	}
	tests := []struct {
		name   string
		tokens map[string]int
	}{
		{"new tokens", tokens},
		{"tokens already known", tokens},
		{"not valid UTF-8", map[string]int{"ok": 1, "bad\xff": 2}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := d.testPile(t, fmt.Sprint(i))
			if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title, tokens) VALUES(?,'',?)`,
				id, encodeTokens(tt.tokens)); err != nil {
				t.Fatal(err)
			}
			if n, err := d.IndexPending(ctx); n != 1 || err != nil {
				t.Fatalf("IndexPending = %d, %v; want 1 pile", n, err)
			}
			if got := d.testStats(t, id); !reflect.DeepEqual(got, tt.tokens) {
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

// TestIndexTokensPastTheCache: once the token table is larger than
// the writer's cache, a pile's tokens are looked up in the table (a few
// hundred a statement) and only those not there are added: each token
// is stored once and every pile gets its counts.
func TestIndexTokensPastTheCache(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	pile := func(name string, tokens map[string]int) {
		t.Helper()
		id := d.testPile(t, name)
		if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title, tokens) VALUES(?,'',?)`,
			id, encodeTokens(tokens)); err != nil {
			t.Fatal(err)
		}
		if n, err := d.IndexPending(ctx); n != 1 || err != nil {
			t.Fatalf("IndexPending = %d, %v; want 1 pile", n, err)
		}
		if got := d.testStats(t, id); !reflect.DeepEqual(got, tokens) {
			t.Errorf("%s: %d token counts, want %d", name, len(got), len(tokens))
		}
	}
	first, second := map[string]int{}, map[string]int{}
	for i := range 1200 {
		first[fmt.Sprintf("known%d", i)] = i%7 + 1
		if i%2 == 0 {
			second[fmt.Sprintf("known%d", i)] = 2
		}
		second[fmt.Sprintf("new%d", i)] = 1
	}
	pile("first", first)
	// What the writer does once the table is past its cache: nothing
	// cached, and the table not loaded.
	d.ids.reset()
	d.ids.tokensTried = true
	pile("second", second)
	var n int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM token`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2400 {
		t.Errorf("%d tokens stored, want 2400 (each once)", n)
	}
}

// TestIndexedTextBounded: the full-text index takes the first
// MaxIndexedText characters of a pile's text; a word past them is not
// matched, and the pile keeps all of its text.
func TestIndexedTextBounded(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	id := d.testPile(t, "long")
	text := "early " + strings.Repeat("filler ", MaxIndexedText/7) + " beyond"
	if _, err := d.exec(ctx, `UPDATE text_pile SET text=? WHERE text_pile_id=?`, text, id); err != nil {
		t.Fatal(err)
	}
	if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title) VALUES(?,'')`, id); err != nil {
		t.Fatal(err)
	}
	if n, err := d.IndexPending(ctx); n != 1 || err != nil {
		t.Fatalf("IndexPending = %d, %v; want 1 pile", n, err)
	}
	for word, want := range map[string]int{"early": 1, "filler": 1, "beyond": 0} {
		var n int
		if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM full_text_entity_index WHERE full_text_entity_index MATCH ?`, word).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("%q matched %d piles, want %d", word, n, want)
		}
	}
	var kept int
	if err := d.db.QueryRowContext(ctx, `SELECT length(text) FROM text_pile WHERE text_pile_id=?`, id).Scan(&kept); err != nil || kept != len(text) {
		t.Errorf("the pile keeps %d bytes (%v), want %d", kept, err, len(text))
	}
	// The index holds what its content view says (which bounds the text
	// by the same number), so FTS5's own check finds them agreeing.
	if _, err := d.exec(ctx, `INSERT INTO full_text_entity_index(full_text_entity_index, rank) VALUES('integrity-check', 1)`); err != nil {
		t.Errorf("the full-text index's integrity-check: %v", err)
	}
	if n := strings.Count(schema, fmt.Sprintf("substr(p.text, 1, %d)", MaxIndexedText)); n != 1 {
		t.Errorf("the content view bounds text by MaxIndexedText %d times, want once", n)
	}
}

// TestRolledBackIDsForgotten: a write that adds URLs and tokens and then
// fails is rolled back, and the writer's caches must not keep the ids
// it added (a later write using one would point at no row: the foreign
// keys refuse it).
func TestRolledBackIDsForgotten(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	failed := errors.New("fails after adding")
	err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		if _, err := w.urlID(ctx, "http://example.com/gone"); err != nil {
			return err
		}
		if _, err := w.tokenIDs(ctx, []string{"gone"}); err != nil {
			return err
		}
		if _, err := w.mimetypeID(ctx, "application/gone"); err != nil {
			return err
		}
		// An agent registered in the write, and its id looked up.
		if _, err := w.ExecContext(ctx, `INSERT INTO agent(time_started_unix_utc, agent_uuid, name) VALUES(1, 'agent-gone', 'gone')`); err != nil {
			return err
		}
		if _, err := w.agentID(ctx, "agent-gone"); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("tx = %v, want the write's error", err)
	}
	// Other rows now take the ids the rolled-back write had.
	d.testPile(t, "other")
	if err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		if _, err := w.ExecContext(ctx, `INSERT INTO mimetype(mimetype) VALUES('application/other')`); err != nil {
			return err
		}
		if _, err := w.ExecContext(ctx, `INSERT INTO agent(time_started_unix_utc, agent_uuid, name) VALUES(1, 'agent-other', 'other')`); err != nil {
			return err
		}
		_, err := w.ExecContext(ctx, `INSERT INTO url(url) VALUES('http://example.com/other')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	pile := d.testPile(t, "pile")
	if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title, tokens) VALUES(?,'',?)`,
		pile, encodeTokens(map[string]int{"gone": 2})); err != nil {
		t.Fatal(err)
	}
	if _, err := d.IndexPending(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		id, err := w.urlID(ctx, "http://example.com/gone")
		if err != nil {
			return err
		}
		var u string
		if err := w.QueryRowContext(ctx, `SELECT url FROM url WHERE url_id=?`, id).Scan(&u); err != nil || u != "http://example.com/gone" {
			return fmt.Errorf("url id %d names %q (%v)", id, u, err)
		}
		if id, err = w.mimetypeID(ctx, "application/gone"); err != nil {
			return err
		}
		if err := w.QueryRowContext(ctx, `SELECT mimetype FROM mimetype WHERE mimetype_id=?`, id).Scan(&u); err != nil || u != "application/gone" {
			return fmt.Errorf("mimetype id %d names %q (%v)", id, u, err)
		}
		// The agent's registration was rolled back with the write.
		if id, err := w.agentID(ctx, "agent-gone"); err == nil {
			return fmt.Errorf("agent-gone has id %d, want no such agent", id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := d.testStats(t, pile); !reflect.DeepEqual(got, map[string]int{"gone": 2}) {
		t.Errorf("token_statistics = %v", got)
	}
}

// TestIDsLookedUpOrAdded: the writer's id lookups (an insert first, a
// lookup when the key is there) give the id of the row holding the key,
// whether the key is new, stored already by a write that bypassed the
// caches, or cached, and add no row for a key that is there.
func TestIDsLookedUpOrAdded(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	if _, err := d.exec(ctx, `INSERT INTO url(url) VALUES('http://example.com/old'),('http://example.com/old2')`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.exec(ctx, `INSERT INTO mimetype(mimetype) VALUES('text/old')`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		table, key string
		id         func(*wtx, context.Context, string) (int64, error)
	}{
		{"url", "http://example.com/old", (*wtx).urlID},
		{"url", "http://example.com/new", (*wtx).urlID},
		{"url", "http://example.com/old2", (*wtx).newURLID},
		{"url", "http://example.com/new2", (*wtx).newURLID},
		{"mimetype", "text/old", (*wtx).mimetypeID},
		{"mimetype", "text/new", (*wtx).mimetypeID},
	}
	for _, tt := range tests {
		t.Run(tt.table+" "+tt.key, func(t *testing.T) {
			var ids [2]int64
			for i := range ids {
				if err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
					var err error
					ids[i], err = tt.id(w, ctx, tt.key)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			if ids[0] != ids[1] {
				t.Errorf("ids %d then %d", ids[0], ids[1])
			}
			var got string
			var n int
			q := fmt.Sprintf(`SELECT %[1]s, (SELECT count(*) FROM %[1]s WHERE %[1]s=?) FROM %[1]s WHERE %[1]s_id=?`, tt.table)
			if err := d.db.QueryRowContext(ctx, q, tt.key, ids[0]).Scan(&got, &n); err != nil || got != tt.key || n != 1 {
				t.Errorf("id %d names %q, %d rows hold the key (%v)", ids[0], got, n, err)
			}
		})
	}
}

// TestGroupCommit: writes sent at once share transactions, and one that
// fails leaves the others stored.
func TestGroupCommit(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	const n = 200
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = d.tx(ctx, func(ctx context.Context, w *wtx) error {
				if _, err := w.urlID(ctx, fmt.Sprintf("http://example.com/%d", i)); err != nil {
					return err
				}
				if i%7 == 0 {
					return fmt.Errorf("write %d fails", i)
				}
				return nil
			})
		}()
	}
	wg.Wait()
	want := 0
	for i, err := range errs {
		if (err != nil) != (i%7 == 0) {
			t.Errorf("write %d: %v", i, err)
		}
		if err == nil {
			want++
		}
	}
	var got int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM url`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("%d URLs stored, want %d: a failed write took others with it, or was kept", got, want)
	}
}

// TestWriteAfterCancel: a write whose context is done before it runs is
// not run; the writer goes on with the others.
func TestWriteAfterCancel(t *testing.T) {
	d := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := d.tx(ctx, func(context.Context, *wtx) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Errorf("cancelled write: err %v, ran %v", err, ran)
	}
	if _, err := d.exec(context.Background(), `INSERT INTO url(url) VALUES('http://example.com/')`); err != nil {
		t.Errorf("write after a cancelled one: %v", err)
	}
}

func FuzzDecodeTokens(f *testing.F) {
	f.Add(encodeTokens(map[string]int{"lamp": 3, "bad\xff": 1}))
	f.Add([]byte{0x05, 'a'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		toks, err := decodeTokens(b)
		if err != nil {
			return
		}
		again, err := decodeTokens(encodeTokens(toks))
		if err != nil || !reflect.DeepEqual(again, toks) {
			t.Fatalf("%q: round trip %v, %v; want %v", b, again, err, toks)
		}
	})
}

// TestIndexBatchBoundedByBytes: IndexPending takes piles until their
// text passes indexBytes (one pile past it at most), so a run of large
// pages is indexed a few at a time, not hundreds at once.
func TestIndexBatchBoundedByBytes(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	defer func(b int) { indexBytes = b }(indexBytes)
	indexBytes = 1000
	for i := range 5 {
		id := d.testPile(t, fmt.Sprint("big", i))
		text := strings.Repeat(fmt.Sprintf("word%d ", i), 100) // 600 bytes
		if _, err := d.exec(ctx, `UPDATE text_pile SET text=? WHERE text_pile_id=?`, text, id); err != nil {
			t.Fatal(err)
		}
		if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title) VALUES(?,'')`, id); err != nil {
			t.Fatal(err)
		}
	}
	var batches []int
	for {
		n, err := d.IndexPending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		batches = append(batches, n)
	}
	if want := []int{2, 2, 1}; !reflect.DeepEqual(batches, want) {
		t.Errorf("batches of %v piles, want %v", batches, want)
	}
	var fts int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM full_text_entity_index`).Scan(&fts); err != nil || fts != 5 {
		t.Errorf("%d full-text rows (%v), want 5", fts, err)
	}
}

// TestIndexResumed: IndexPending writes a batch in steps, and a run
// killed between them leaves piles on the unindexed list whose tokens
// have ids. Indexing them again gives each pile its token counts once
// and one full-text row; a pile another process already took off the
// list gets no second full-text row, nor counts written twice.
func TestIndexResumed(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	defer func(c int) { indexPiles = c }(indexPiles)
	indexPiles = 1 // a write a pile
	tokens := map[string]int{"lamp": 3, "lighthouse": 1, "keeper": 2, "fog": 4, "horn": 1}
	var piles []int64
	for i := range 3 {
		id := d.testPile(t, fmt.Sprint("resumed", i))
		piles = append(piles, id)
		if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title, tokens) VALUES(?,'',?)`,
			id, encodeTokens(tokens)); err != nil {
			t.Fatal(err)
		}
	}
	// What a killed run left: ids for some of the tokens.
	if err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
		_, err := w.tokenIDs(ctx, []string{"lamp", "fog"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// What another process did: the last pile indexed, its full-text row written.
	if _, err := d.exec(ctx, `DELETE FROM text_pile_unindexed WHERE text_pile_id=?`, piles[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.exec(ctx, `INSERT INTO text_pile_title(text_pile_id, title) VALUES(?,'')`, piles[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.exec(ctx, `INSERT INTO full_text_entity_index(rowid, text_pile_id, any, title) VALUES(?,?,'any','')`, piles[2], piles[2]); err != nil {
		t.Fatal(err)
	}
	if _, err := d.exec(ctx, `INSERT INTO token_statistics_by_pile(text_pile_id, tokens) VALUES(?,'[]')`, piles[2]); err != nil {
		t.Fatal(err)
	}
	if n, err := d.IndexPending(ctx); n != 2 || err != nil {
		t.Fatalf("IndexPending = %d, %v; want 2 piles", n, err)
	}
	for _, id := range piles[:2] {
		if got := d.testStats(t, id); !reflect.DeepEqual(got, tokens) {
			t.Errorf("pile %d: token_statistics = %v, want %v", id, got, tokens)
		}
	}
	// A second indexer that read the piles before the first took them
	// off the list writes no second row.
	late := []unindexedPile{{id: piles[0], stats: "[[1,1]]"}, {id: piles[1], stats: "[[1,1]]"}}
	if err := d.tx(ctx, func(ctx context.Context, w *wtx) error { return indexText(ctx, w, late) }); err != nil {
		t.Fatal(err)
	}
	for _, id := range piles {
		var n int
		if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM full_text_entity_index WHERE text_pile_id=?`, id).Scan(&n); err != nil || n != 1 {
			t.Errorf("pile %d: %d full-text rows (%v), want 1", id, n, err)
		}
	}
	if n, err := d.Unindexed(ctx); n != 0 || err != nil {
		t.Errorf("Unindexed = %d, %v; want 0", n, err)
	}
}

// TestMigrateTokens: a database of an earlier version, whose
// token_statistics was a table (its key leading with the pile, or with
// the token before that), is opened with its rows as token_statistics
// rows still, read through the view, a row per pile underneath, and new
// piles indexed beside them; a pile the earlier version was killed
// indexing (on the list, part of its rows written) is indexed in full.
func TestMigrateTokens(t *testing.T) {
	for _, key := range []string{"text_pile_id, token_id", "token_id, text_pile_id"} {
		t.Run(key, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "crawl.db")
			d, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int64]map[string]int{}
			var rows []any
			for i, tokens := range []map[string]int{{"lamp": 3, "fog": 1}, {"fog": 2, "horn": 5, "keeper": 1}} {
				pile := d.testPile(t, fmt.Sprint("old", i))
				want[pile] = tokens
				for tok, n := range tokens {
					var id int64
					if err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
						ids, err := w.tokenIDs(ctx, []string{tok})
						id = ids[0]
						return err
					}); err != nil {
						t.Fatal(err)
					}
					rows = append(rows, id, pile, n)
				}
			}
			// A pile an earlier run was killed indexing: still on the
			// list, with part of its rows written.
			killed := d.testPile(t, "killed")
			want[killed] = map[string]int{"lamp": 2, "siren": 4}
			if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title, tokens) VALUES(?,'',?)`,
				killed, encodeTokens(want[killed])); err != nil {
				t.Fatal(err)
			}
			if err := d.tx(ctx, func(ctx context.Context, w *wtx) error {
				ids, err := w.tokenIDs(ctx, []string{"lamp"})
				rows = append(rows, ids[0], killed, 2)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{`DROP VIEW token_statistics`, `DROP TABLE token_statistics_by_pile`,
				`CREATE TABLE token_statistics (token_id INTEGER NOT NULL REFERENCES token(token_id),
				text_pile_id INTEGER NOT NULL REFERENCES text_pile(text_pile_id), occurances INTEGER NOT NULL,
				PRIMARY KEY (` + key + `)) WITHOUT ROWID`,
				`INSERT INTO token_statistics(token_id, text_pile_id, occurances) VALUES` +
					strings.TrimSuffix(strings.Repeat("(?,?,?),", len(rows)/3), ",")} {
				if _, err := d.exec(ctx, q, rows[:strings.Count(q, "?")]...); err != nil {
					t.Fatal(err)
				}
			}
			d.Close()

			if d, err = Open(ctx, path); err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			var kind string
			if err := d.db.QueryRowContext(ctx, `SELECT type FROM sqlite_master WHERE name='token_statistics'`).Scan(&kind); err != nil || kind != "view" {
				t.Fatalf("token_statistics is a %q (%v), want a view", kind, err)
			}
			// A new pile beside the migrated ones.
			pile := d.testPile(t, "new")
			want[pile] = map[string]int{"fog": 7, "siren": 1}
			if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title, tokens) VALUES(?,'',?)`,
				pile, encodeTokens(want[pile])); err != nil {
				t.Fatal(err)
			}
			if n, err := d.IndexPending(ctx); n != 2 || err != nil {
				t.Fatalf("IndexPending = %d, %v; want 2 piles (the killed run's and the new one)", n, err)
			}
			for pile, tokens := range want {
				if got := d.testStats(t, pile); !reflect.DeepEqual(got, tokens) {
					t.Errorf("pile %d: token_statistics = %v, want %v", pile, got, tokens)
				}
			}
			var n int
			if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM token_statistics_by_pile`).Scan(&n); err != nil || n != len(want) {
				t.Errorf("%d rows in token_statistics_by_pile (%v), want one a pile, %d", n, err, len(want))
			}
		})
	}
}

// TestTokenStatisticsView: what the view reads out of a pile's row is
// the seed's token_statistics: integers, one row per token and pile.
func TestTokenStatisticsView(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	pile := d.testPile(t, "view")
	if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title, tokens) VALUES(?,'',?)`,
		pile, encodeTokens(map[string]int{"zebra": 2, "aardvark": 1, "mole": 40000})); err != nil {
		t.Fatal(err)
	}
	if _, err := d.IndexPending(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := d.db.QueryContext(ctx, `SELECT typeof(token_id), typeof(text_pile_id), typeof(occurances), count(*)
		FROM token_statistics GROUP BY token_id, text_pile_id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var a, b, c string
		var k int
		if err := rows.Scan(&a, &b, &c, &k); err != nil {
			t.Fatal(err)
		}
		if a != "integer" || b != "integer" || c != "integer" || k != 1 {
			t.Errorf("row of types %s, %s, %s, %d times; want integers, once", a, b, c, k)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d token_statistics rows, want 3", n)
	}
	var stored string
	if err := d.db.QueryRowContext(ctx, `SELECT tokens FROM token_statistics_by_pile WHERE text_pile_id=?`, pile).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stored, "[[") || !strings.Contains(stored, ",40000]") {
		t.Errorf("stored %s, want [[token_id,occurances],...]", stored)
	}
}

// TestIndexTextOneSegment: a write of several piles gives each its own
// full-text row (a pile another process took off the list in between
// gets none) and adds one segment to the full-text index, not one a
// pile: FTS5 writes a segment at every statement savepoint, which the
// INSERT OR REPLACE of a pile's token counts opens, so the full-text
// rows go in with one statement, after those. Past ftsStatementBytes of
// text they go in as more statements, with the same rows.
func TestIndexTextOneSegment(t *testing.T) {
	defer func(b int) { ftsStatementBytes = b }(ftsStatementBytes)
	words := []string{"lighthouse", "foghorn", "keeper", "lantern", "beacon", "harbour"}
	for _, tt := range []struct {
		name     string
		bytes    int // ftsStatementBytes
		segments int
	}{
		{"one statement", ftsStatementBytes, 1},
		{"a statement a pile", 1, len(words) - 1},
		{"a statement every two piles", 30, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ftsStatementBytes = tt.bytes
			ctx := context.Background()
			d := openTest(t)
			var piles []unindexedPile
			for i, w := range words {
				id := d.testPile(t, w)
				if _, err := d.exec(ctx, `UPDATE text_pile SET text=? WHERE text_pile_id=?`, "the "+w+" stands", id); err != nil {
					t.Fatal(err)
				}
				if i != 2 { // the keeper's pile: taken off the list by another process
					if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title) VALUES(?,'')`, id); err != nil {
						t.Fatal(err)
					}
				}
				p := unindexedPile{id: id, title: "pile " + w, stats: "[[1,1]]"}
				p.textBytes = len("the " + w + " stands") // 17-21 bytes
				piles = append(piles, p)
			}
			before := ftsSegments(t, d)
			if err := d.tx(ctx, func(ctx context.Context, w *wtx) error { return indexText(ctx, w, piles) }); err != nil {
				t.Fatal(err)
			}
			for i, w := range words {
				var got []int64
				rows, err := d.db.QueryContext(ctx, `SELECT rowid FROM full_text_entity_index WHERE full_text_entity_index MATCH ?`, w)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var id int64
					rows.Scan(&id)
					got = append(got, id)
				}
				rows.Close()
				want := []int64{piles[i].id}
				if i == 2 {
					want = nil
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%q matches piles %v, want %v", w, got, want)
				}
			}
			if n := ftsSegments(t, d) - before; n != tt.segments {
				t.Errorf("indexing %d piles in one write added %d full-text segments, want %d", len(piles)-1, n, tt.segments)
			}
		})
	}
}

// ftsSegments counts the segments in the full-text index (its %_idx
// table has a row per segment and leaf page).
func ftsSegments(t *testing.T, d *DB) int {
	t.Helper()
	var n int
	if err := d.db.QueryRowContext(context.Background(), `SELECT count(DISTINCT segid) FROM full_text_entity_index_idx`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUnindexedPilesCountsTextAsIndexed: the list of piles to index
// counts each text column as the index takes it (at most
// MaxIndexedText), in bytes, without reading the text into Go.
func TestUnindexedPilesCountsTextAsIndexed(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	big := strings.Repeat("lighthouse ", MaxIndexedText/10) // over the bound
	for _, tt := range []struct {
		digest string
		cols   map[string]string
		want   int
	}{
		{"empty", nil, 0},
		{"small", map[string]string{"text": "the keeper", "code_text": "x := 1", "quote_text": "é"}, 10 + 6 + 2},
		{"over the bound", map[string]string{"text": big, "small_headlines": "beacon"}, MaxIndexedText + 6},
	} {
		id := d.testPile(t, tt.digest)
		for c, v := range tt.cols {
			if _, err := d.exec(ctx, `UPDATE text_pile SET `+c+`=? WHERE text_pile_id=?`, v, id); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.exec(ctx, `INSERT INTO text_pile_unindexed(text_pile_id, title) VALUES(?,'')`, id); err != nil {
			t.Fatal(err)
		}
		piles, err := unindexedPiles(ctx, d.db)
		if err != nil {
			t.Fatal(err)
		}
		if got := piles[len(piles)-1]; got.id != id || got.textBytes != tt.want {
			t.Errorf("%s: pile %d of %d text bytes, want pile %d of %d", tt.digest, got.id, got.textBytes, id, tt.want)
		}
	}
}
