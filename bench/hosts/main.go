// Command hosts prints, for each host of a crawl's database, how many
// crawls it had and the seconds into the crawl of its first and last
// (crawl_log, whole seconds): whether the hosts were crawled side by
// side or one after another (bench/hosts.sh).
//
//	hosts DIR/crawl.db
package main

import (
	"database/sql"
	"fmt"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hosts CRAWL.DB")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "hosts:", err)
		os.Exit(1)
	}
}

func run(path string) error {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT f.host, count(*), min(l.time_started_unix_utc) - t.start, max(l.time_started_unix_utc) - t.start
		FROM crawl_log l JOIN crawl_frontier f USING (url_id), (SELECT min(time_started_unix_utc) AS start FROM crawl_log) t
		GROUP BY f.host ORDER BY 3, 1`)
	if err != nil {
		return fmt.Errorf("read the crawl log: %w", err)
	}
	defer rows.Close()
	fmt.Println("| host | crawls | first s | last s |")
	fmt.Println("|---|---:|---:|---:|")
	for rows.Next() {
		var host string
		var n, first, last int64
		if err := rows.Scan(&host, &n, &first, &last); err != nil {
			return err
		}
		fmt.Printf("| %s | %d | %d | %d |\n", host, n, first, last)
	}
	return rows.Err()
}
