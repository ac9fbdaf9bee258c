//go:build cgo_driver

package main

import (
	"database/sql"

	_ "github.com/mattn/go-sqlite3"
)

func init() {
	open["cgo"] = func(path string) (*sql.DB, error) { return sql.Open("sqlite3", "file:"+path) }
}
