package sqlite

import (
	"database/sql/driver"

	sqlitedriver "modernc.org/sqlite"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// The SQL functions Search calls, so that its page penalties are
// crawl's rules, not copies of them in SQL. Registered for every
// connection of the process, as SQLite functions are.
const (
	// changelogFunc(title): 1 when the title is a changelog's
	// (crawl.ChangelogTitle), else 0.
	changelogFunc = "crawler_changelog_title"
	// listingFunc(text bytes, code bytes): 1 when a page with text and
	// code that long is a source listing (crawl.SourceListing), else 0.
	listingFunc = "crawler_source_listing"
)

func init() {
	sqlitedriver.MustRegisterDeterministicScalarFunction(changelogFunc, 1,
		func(_ *sqlitedriver.FunctionContext, args []driver.Value) (driver.Value, error) {
			title, _ := args[0].(string)
			return sqlBool(crawl.ChangelogTitle(title)), nil
		})
	sqlitedriver.MustRegisterDeterministicScalarFunction(listingFunc, 2,
		func(_ *sqlitedriver.FunctionContext, args []driver.Value) (driver.Value, error) {
			text, _ := args[0].(int64)
			code, _ := args[1].(int64)
			return sqlBool(crawl.SourceListing(int(text), int(code))), nil
		})
}

func sqlBool(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
