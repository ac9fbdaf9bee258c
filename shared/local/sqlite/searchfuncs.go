package sqlite

import (
	"database/sql/driver"

	sqlitedriver "modernc.org/sqlite"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// changelogFunc is the SQL function Search calls with a page's title:
// 1 when the title is a changelog's (crawl.ChangelogTitle), else 0.
// Registered for every connection of the process, as SQLite functions
// are, so that the rule is crawl's one regular expression, not a copy
// of it in SQL.
const changelogFunc = "crawler_changelog_title"

func init() {
	sqlitedriver.MustRegisterDeterministicScalarFunction(changelogFunc, 1,
		func(_ *sqlitedriver.FunctionContext, args []driver.Value) (driver.Value, error) {
			title, _ := args[0].(string)
			if crawl.ChangelogTitle(title) {
				return int64(1), nil
			}
			return int64(0), nil
		})
}
