package sqlite_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// filledDB is a closed database file with a few hundred rows in it, so
// that its tables span many pages.
func filledDB(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	var bodies [][]byte
	for i := range 500 {
		bodies = append(bodies, []byte(fmt.Sprintf(`{"url":"https://example.com/page/%d","pad":%q}`, i, strings.Repeat("x", 200))))
	}
	if err := db.Send(ctx, "enqueue", bodies...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestOpenRefusesDamagedFile: a file damaged in the middle, or one that
// is not a database, is refused with ErrCorrupt and left as it was.
func TestOpenRefusesDamagedFile(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"a page in the middle overwritten", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 8*4096 {
				t.Fatalf("the database is only %d bytes", len(b))
			}
			mid := len(b) / 4096 / 2 * 4096
			copy(b[mid:mid+4096], bytes.Repeat([]byte{0xA5}, 4096))
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("not sqlite "), 2000), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filledDB(t)
			c.damage(t, path)
			before := fileSum(t, path)
			db, err := sqlite.Open(context.Background(), path)
			if err == nil {
				db.Close()
				t.Fatal("a damaged database was opened for writing")
			}
			if !errors.Is(err, sqlite.ErrCorrupt) {
				t.Fatalf("err = %v, want ErrCorrupt", err)
			}
			if fileSum(t, path) != before {
				t.Error("the damaged file was written to")
			}
			if _, err := os.Stat(path + "-wal"); err == nil {
				if fi, _ := os.Stat(path + "-wal"); fi.Size() > 0 {
					t.Error("a write-ahead log was written beside the damaged file")
				}
			}
		})
	}
}

// TestOpenReadOnly: status and search read without writing, beside a
// crawl that holds the file open for writing, and a file that is not a
// crawl database is refused.
func TestOpenReadOnly(t *testing.T) {
	ctx := context.Background()
	path := filledDB(t)
	before := fileSum(t, path)
	ro, err := sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, ro, `SELECT count(*) FROM queue_message`); n != 500 {
		t.Errorf("read %d queued messages, want 500", n)
	}
	if _, err := ro.SQL().ExecContext(ctx, `DELETE FROM queue_message`); err == nil {
		t.Error("a read-only database took a write")
	}
	ro.Close()
	if fileSum(t, path) != before {
		t.Error("opening read-only changed the file")
	}

	rw, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if err := rw.Send(ctx, "enqueue", []byte(`{"url":"https://example.com/new"}`)); err != nil {
		t.Fatal(err)
	}
	ro, err = sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("read-only beside a writer: %v", err)
	}
	if n := count(t, ro, `SELECT count(*) FROM queue_message`); n != 501 {
		t.Errorf("read %d queued messages beside the writer, want 501", n)
	}
	ro.Close()

	other := filepath.Join(t.TempDir(), "other.db")
	if err := os.WriteFile(other, bytes.Repeat([]byte("not sqlite "), 2000), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.OpenReadOnly(ctx, other); !errors.Is(err, sqlite.ErrCorrupt) {
		t.Errorf("a file that is not a database: err = %v, want ErrCorrupt", err)
	}
}

// TestOlderDatabase: a database made before sites and adaptive recrawl
// (no sites tables, no site_id or mrate columns) is read as it is by a
// read-only handle, which writes nothing, and brought up to date when
// it is next opened for writing, its candidates intact.
func TestOlderDatabase(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	const u = "http://example.com/"
	if err := db.PutCandidate(ctx, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateDue, CrawlType: crawl.CrawlFirst}); err != nil {
		t.Fatal(err)
	}
	registerAgent(t, db)
	if _, err := db.RecordCrawl(ctx, contract.CompleteCrawl("http://example.com/page", "crawl-old"), nil); err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Make it as an earlier version left it.
	asEarlierVersion(t, path,
		`DROP INDEX crawl_frontier_by_site`,
		`ALTER TABLE crawl_frontier DROP COLUMN site_id`, `ALTER TABLE crawl_frontier DROP COLUMN mrate`,
		`ALTER TABLE crawl_frontier DROP COLUMN mrate_counter`, `ALTER TABLE crawl_frontier DROP COLUMN recrawl_every`,
		`DROP TABLE sites_filters`, `DROP TABLE sites_urls`, `DROP TABLE sites_properties`, `DROP TABLE sites`,
		`DROP INDEX file_body_by_sha256`, `ALTER TABLE file_body DROP COLUMN body_sha256`,
	)
	before := fileSum(t, path)

	ro, err := sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := ro.GetCandidate(ctx, u); err != nil || c.URL != u || c.SiteID != "" || c.MRateCounter != 0 {
		t.Errorf("read-only candidate of an older database: %+v, %v", c, err)
	}
	if st, err := ro.Status(ctx, u); err != nil || st.State != "pending" {
		t.Errorf("read-only status: %+v, %v", st, err)
	}
	// A crawl recorded before bodies had their hash kept: its file reads
	// back without one.
	if cr, err := ro.GetCrawl(ctx, "crawl-old"); err != nil || cr.File == nil || cr.File.BodySHA256 != "" || cr.File.BodyKey == "" {
		t.Errorf("read-only crawl of an older database: %+v, %v", cr.File, err)
	}
	if sites, err := ro.Sites(ctx); err != nil || len(sites) != 0 {
		t.Errorf("read-only sites: %v, %v", sites, err)
	}
	if _, err := ro.GetSite(ctx, "x"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("read-only site: %v, want not found", err)
	}
	ro.Close()
	if fileSum(t, path) != before {
		t.Error("reading an older database changed it")
	}

	rw, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open an older database for writing: %v", err)
	}
	defer rw.Close()
	c, err := rw.GetCandidate(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	c.SiteID, c.MRate, c.MRateCounter = "docs", 0.5, 2
	if err := rw.PutCandidate(ctx, c); err != nil {
		t.Fatalf("write the added columns after the upgrade: %v", err)
	}
	if got, err := rw.GetCandidate(ctx, u); err != nil || got.SiteID != "docs" || got.MRateCounter != 2 {
		t.Errorf("after the upgrade: %+v, %v", got, err)
	}
	if cr, err := rw.GetCrawl(ctx, "crawl-old"); err != nil || cr.File == nil || cr.File.BodySHA256 != "" {
		t.Errorf("an older crawl after the upgrade: %+v, %v", cr.File, err)
	}
	if _, ok, err := rw.BodyKeyOf(ctx, contract.CompleteCrawl("", "").File.BodySHA256); ok || err != nil {
		t.Errorf("an older crawl's body found by a hash it was not kept with: %v, %v", ok, err)
	}
}

// TestOlderLinkSummary: a database of an earlier version, whose
// link_summary was a table of a row per link, is read as it is by a
// read-only handle and moved to a row per page when next opened for
// writing: the same rows, in the same order, through the view, and new
// pages' links beside them.
func TestOlderLinkSummary(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string][]crawl.LinkSummary{"http://example.com/a": everyLinkColumn(), "http://example.com/b": everyLinkColumn()[:3]}
	for u, links := range pages {
		ng := contract.TextGen(u, 100, contract.TextPile(u), "Page")
		ng.Links = links
		apply(t, db, contract.SummaryUpdate(u, "c"+u, 100, crawl.GenerationReplace, 0, ng))
	}
	gens := map[string]int64{}
	for u := range pages {
		gens[u] = openGen(t, db, u).Generation.ID
	}
	db.Close()
	// Make it as an earlier version left it: the rows in a table, ids
	// of their own.
	asEarlierVersion(t, path,
		`CREATE TABLE link_rows AS SELECT * FROM link_summary ORDER BY link_summary_id`,
		`DROP VIEW link_summary`, `DROP TABLE generation_links`,
		`CREATE TABLE link_summary (
  link_summary_id      INTEGER PRIMARY KEY,
  entity_generation_id INTEGER NOT NULL REFERENCES entity_generation(entity_generation_id),
  link_to_url          INTEGER NOT NULL REFERENCES url(url_id),
  link_to_fragment     TEXT,
  rel_nofollow         INTEGER NOT NULL,
  rel_me               INTEGER NOT NULL,
  rel_tag              INTEGER NOT NULL,
  in_header            INTEGER NOT NULL,
  in_footer            INTEGER NOT NULL,
  in_aside             INTEGER NOT NULL,
  in_nav               INTEGER NOT NULL,
  in_form              INTEGER NOT NULL,
  in_main              INTEGER NOT NULL,
  in_article           INTEGER NOT NULL,
  in_section           INTEGER NOT NULL,
  in_table             INTEGER NOT NULL,
  in_figure            INTEGER NOT NULL,
  in_address           INTEGER NOT NULL,
  in_code              INTEGER NOT NULL,
  in_headline          INTEGER NOT NULL,
  in_list              INTEGER NOT NULL,
  in_paragraph         INTEGER NOT NULL,
  contains_headline    INTEGER NOT NULL,
  destination_type     INTEGER,
  link_locality        INTEGER NOT NULL,
  html_tag_name        TEXT,
  text                 TEXT
);
CREATE INDEX link_summary_by_generation ON link_summary(entity_generation_id);`,
		`INSERT INTO link_summary SELECT NULL, entity_generation_id, link_to_url, link_to_fragment, rel_nofollow, rel_me, rel_tag,
			in_header, in_footer, in_aside, in_nav, in_form, in_main, in_article, in_section, in_table, in_figure, in_address,
			in_code, in_headline, in_list, in_paragraph, contains_headline, destination_type, link_locality, html_tag_name, text
			FROM link_rows ORDER BY rowid`,
		`DROP TABLE link_rows`,
	)

	ro, err := sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for u, links := range pages {
		sameLinks(t, readLinks(t, ro.SQL(), gens[u]), links)
	}
	ro.Close()

	rw, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open an older database for writing: %v", err)
	}
	defer rw.Close()
	var kind string
	if err := rw.SQL().QueryRowContext(ctx, `SELECT type FROM sqlite_master WHERE name='link_summary'`).Scan(&kind); err != nil || kind != "view" {
		t.Fatalf("link_summary is a %q (%v), want a view", kind, err)
	}
	const c = "http://example.com/c"
	ng := contract.TextGen(c, 200, contract.TextPile(c), "New")
	ng.Links = everyLinkColumn()[2:]
	apply(t, rw, contract.SummaryUpdate(c, "cc", 200, crawl.GenerationReplace, 0, ng))
	pages[c], gens[c] = ng.Links, openGen(t, rw, c).Generation.ID
	for u, links := range pages {
		sameLinks(t, readLinks(t, rw.SQL(), gens[u]), links)
	}
	if n := count(t, rw, `SELECT count(*) FROM generation_links`); n != len(pages) {
		t.Errorf("%d rows in generation_links, want one a page, %d", n, len(pages))
	}
}

// TestOlderFullTextIndex: a database whose full-text index kept its own
// copy of the text (before the index read it from text_pile), with
// rowids of its own, is searched as it is by a read-only handle, and
// rebuilt on the next open for writing: the same hits and snippets,
// the titles kept, the rowid the pile's id, and new pages indexed.
func TestOlderFullTextIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	pages := []struct{ url, title, text string }{
		{"http://example.com/lamp", "Lamps", "the keeper trims the wick of the lamp every evening"},
		{"http://example.com/boat", "Boats", "the keeper rows the boat to the rock when the sea is calm"},
	}
	for i, p := range pages {
		apply(t, db, contract.SummaryUpdate(p.url, p.url, int64(100+i), crawl.GenerationReplace, 0,
			contract.TextGen(p.url, int64(100+i), contract.TextPile(p.text), p.title)))
	}
	want, err := db.Search(ctx, "keeper lamp", 10)
	if err != nil || len(want) != 2 {
		t.Fatalf("Search = %v, %v; want two hits", want, err)
	}
	db.Close()

	// Make it as an earlier version left it: the index with the text in
	// it, its rowids not the piles' ids, and no text_pile_title.
	asEarlierVersion(t, path,
		`CREATE TABLE old_rows AS SELECT * FROM full_text_entity_source`,
		`DROP TABLE full_text_entity_index`,
		`CREATE VIRTUAL TABLE full_text_entity_index USING fts5(
			text_pile_id UNINDEXED, any, title, description, text, secondary_text,
			big_headlines, small_headlines, code_text, quote_text)`,
		`INSERT INTO full_text_entity_index(rowid, text_pile_id, any, title, description, text, secondary_text,
			big_headlines, small_headlines, code_text, quote_text)
			SELECT text_pile_id + 1000, text_pile_id, "any", title, description, text, secondary_text,
			big_headlines, small_headlines, code_text, quote_text FROM old_rows`,
		`DROP TABLE old_rows`, `DELETE FROM text_pile_title`,
	)

	ro, err := sqlite.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ro.Search(ctx, "keeper lamp", 10); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("read-only Search of the older index = %v, %v; want %v", got, err, want)
	}
	ro.Close()

	var logged bytes.Buffer
	rw, err := sqlite.Open(ctx, path, sqlite.WithLog(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatalf("open for writing: %v", err)
	}
	defer rw.Close()
	if got := logged.String(); !strings.Contains(got, "rebuilding the full-text index") || !strings.Contains(got, "text_piles=2") {
		t.Errorf("logged %q, want the rebuild of two piles said", got)
	}
	if got, err := rw.Search(ctx, "keeper lamp", 10); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Search after the rebuild = %v, %v; want %v", got, err, want)
	}
	if n := count(t, rw, `SELECT count(*) FROM full_text_entity_index f JOIN text_pile_title t ON t.text_pile_id = f.rowid
		WHERE f.text_pile_id = f.rowid AND t.title IN ('Lamps', 'Boats')`); n != 2 {
		t.Errorf("%d rows with their pile's id and title after the rebuild, want 2", n)
	}
	if n := count(t, rw, `SELECT count(*) FROM sqlite_master WHERE name='full_text_entity_index' AND sql LIKE '%content=%'`); n != 1 {
		t.Error("the index still keeps its own text")
	}
	if _, err := rw.Exec(ctx, `INSERT INTO full_text_entity_index(full_text_entity_index, rank) VALUES('integrity-check', 1)`); err != nil {
		t.Errorf("integrity-check after the rebuild: %v", err)
	}
	const u = "http://example.com/rock"
	apply(t, rw, contract.SummaryUpdate(u, u, 200, crawl.GenerationReplace, 0,
		contract.TextGen(u, 200, contract.TextPile("the keeper paints the rock white"), "Rocks")))
	if got, err := rw.Search(ctx, "paints", 10); err != nil || len(got) != 1 || got[0].URL != u || got[0].Title != "Rocks" {
		t.Errorf("a page indexed after the rebuild: %v, %v", got, err)
	}
}

// asEarlierVersion runs queries on the database at path, through a
// connection of its own, to make it as an earlier version left it.
func asEarlierVersion(t *testing.T, path string, queries ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, q := range queries {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
