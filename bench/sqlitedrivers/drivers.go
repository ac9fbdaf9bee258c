//go:build !cgo_driver

package main

import (
	"database/sql"

	ncruces "github.com/ncruces/go-sqlite3/driver"
	"github.com/ncruces/go-sqlite3/ext/fts5"
	_ "modernc.org/sqlite"
)

func init() {
	open["modernc"] = func(path string) (*sql.DB, error) { return sql.Open("sqlite", "file:"+path) }
	open["ncruces"] = func(path string) (*sql.DB, error) { return ncruces.Open("file:"+path, fts5.Register) }
}
