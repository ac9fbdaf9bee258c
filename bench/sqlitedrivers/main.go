// Command sqlitedrivers times the embedded home's heaviest SQLite writes
// (token rows, link rows, file text, the full-text index, shaped as a
// crawl of the documentation tree writes them) through a SQLite driver,
// to compare drivers (BENCHMARKS.md, "Where the writer's time goes").
// It is a module of its own so that the crawler's go.mod does not take
// the drivers it compares:
//
//	go run . modernc
//	go run . ncruces
//	CGO_ENABLED=1 go run -tags cgo_driver,sqlite_fts5 . cgo
package main

import (
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strings"
	"time"
)

// open is set by the file of the driver built in (drivers.go,
// cgo.go).
var open = map[string]func(path string) (*sql.DB, error){}

func main() {
	if len(os.Args) != 2 || open[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: sqlitedrivers DRIVER (modernc, ncruces; cgo with -tags cgo_driver,sqlite_fts5)")
		os.Exit(2)
	}
	name := os.Args[1]
	dir, err := os.MkdirTemp("", "sqlitedrivers")
	must(err)
	defer os.RemoveAll(dir)
	db, err := open[name](dir + "/t.db")
	must(err)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;
CREATE TABLE token_statistics(token_id INTEGER NOT NULL, text_pile_id INTEGER NOT NULL, occurances INTEGER NOT NULL,
  PRIMARY KEY(token_id, text_pile_id)) WITHOUT ROWID;
CREATE TABLE file_text(file_id INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE link_summary(link_summary_id INTEGER PRIMARY KEY, entity_generation_id INTEGER NOT NULL, link_to_url INTEGER NOT NULL,
  link_to_fragment TEXT, f1 INTEGER, f2 INTEGER, f3 INTEGER, f4 INTEGER, f5 INTEGER, f6 INTEGER, f7 INTEGER, f8 INTEGER,
  f9 INTEGER, f10 INTEGER, f11 INTEGER, f12 INTEGER, f13 INTEGER, link_text TEXT);
CREATE INDEX link_summary_by_generation ON link_summary(entity_generation_id);
CREATE VIRTUAL TABLE full_text USING fts5(id UNINDEXED, title, text);`)
	must(err)
	r := rand.New(rand.NewSource(1))
	words := make([]string, 20000)
	for i := range words {
		words[i] = fmt.Sprintf("w%dx", r.Intn(1000000))
	}
	var sb strings.Builder
	for sb.Len() < 100000 {
		sb.WriteString(words[int(r.ExpFloat64()*2000)%len(words)])
		sb.WriteByte(' ')
	}
	text := sb.String()
	const pages = 526

	// Token rows: two index batches of 263 piles, ~613 rows a pile,
	// sorted by token, 64 rows a statement, 4,096 a transaction.
	t0 := time.Now()
	for batch := range 2 {
		var rows [][3]int
		for pile := batch * 263; pile < (batch+1)*263; pile++ {
			seen := map[int]bool{}
			for len(seen) < 613 {
				seen[int(r.ExpFloat64()*20000)%100000] = true
			}
			for tok := range seen {
				rows = append(rows, [3]int{tok, pile, 2})
			}
		}
		slices.SortFunc(rows, func(a, b [3]int) int { return a[0]*1000 + a[1] - b[0]*1000 - b[1] })
		for chunk := range slices.Chunk(rows, 4096) {
			tx, err := db.Begin()
			must(err)
			for stmt := range slices.Chunk(chunk, 64) {
				args := make([]any, 0, 3*len(stmt))
				for _, row := range stmt {
					args = append(args, row[0], row[1], row[2])
				}
				_, err := tx.Exec("INSERT OR IGNORE INTO token_statistics VALUES "+
					strings.TrimSuffix(strings.Repeat("(?,?,?),", len(stmt)), ","), args...)
				must(err)
			}
			must(tx.Commit())
		}
	}
	fmt.Printf("%-8s token rows (322K)   %6.2f s\n", name, time.Since(t0).Seconds())

	// Link rows: 322 a page, 32 a statement, a transaction a page.
	t0 = time.Now()
	values := strings.TrimSuffix(strings.Repeat("(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?),", 32), ",")
	for g := range pages {
		tx, err := db.Begin()
		must(err)
		for range 10 {
			args := make([]any, 0, 17*32)
			for range 32 {
				args = append(args, g, r.Intn(5000), nil, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, "link text")
			}
			_, err := tx.Exec(`INSERT INTO link_summary(entity_generation_id, link_to_url, link_to_fragment,
				f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, link_text) VALUES `+values, args...)
			must(err)
		}
		must(tx.Commit())
	}
	fmt.Printf("%-8s link rows (168K)    %6.2f s\n", name, time.Since(t0).Seconds())

	// File text: 92 KB a page, a transaction each.
	t0 = time.Now()
	for range pages {
		_, err := db.Exec("INSERT INTO file_text(text) VALUES(?)", text[:92000])
		must(err)
	}
	fmt.Printf("%-8s file text (48 MB)   %6.2f s\n", name, time.Since(t0).Seconds())

	// The full-text index: 16 KB of text a page, 32 pages a transaction.
	t0 = time.Now()
	for chunk := range slices.Chunk(make([]int, pages), 32) {
		tx, err := db.Begin()
		must(err)
		for range chunk {
			off := r.Intn(80000)
			_, err := tx.Exec("INSERT INTO full_text(id, title, text) VALUES(?,?,?)", off, "a title", text[off:off+16000])
			must(err)
		}
		must(tx.Commit())
	}
	fmt.Printf("%-8s full-text (8.4 MB)  %6.2f s\n", name, time.Since(t0).Seconds())
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
