package sqlite

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// DueCandidates returns up to limit candidates due at or before now,
// highest priority and earliest due first. When 2 to maxFairHosts hosts
// have candidates in state due, the limit is shared among those with
// candidates due now (fairShare).
func (d *DB) DueCandidates(ctx context.Context, now int64, limit int) ([]crawl.Candidate, error) {
	if limit <= 0 {
		return nil, nil
	}
	var some int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM crawl_frontier WHERE state='due' AND due_unix_utc<=? LIMIT 1)`,
		now).Scan(&some); err != nil {
		return nil, fmt.Errorf("look for due candidates: %w", err)
	}
	if some == 0 {
		return nil, nil
	}
	hosts, err := d.dueHosts(ctx, now)
	if err != nil {
		return nil, err
	}
	if len(hosts) > 1 {
		return d.fairShare(ctx, hosts, now, limit)
	}
	return d.queryCandidates(ctx, dueWhere, now, limit)
}

// maxFairHosts is the most hosts with candidates in state due among
// which DueCandidates shares its limit, a few queries each; past it, it
// takes candidates in release order whatever their host, as with one
// host.
const maxFairHosts = 64

// dueHosts returns the hosts that have candidates due by now, or nil
// when more than maxFairHosts hosts have candidates in state due (by now
// or later). It goes from host to host (a seek each: SQLite's min() over
// an index's next key), and seeks in crawl_frontier_host_due for one of
// the host's candidates due by now.
func (d *DB) dueHosts(ctx context.Context, now int64) ([]string, error) {
	rows, err := d.query(ctx, `WITH RECURSIVE h(host) AS (
			SELECT (SELECT min(host) FROM crawl_frontier WHERE state='due')
			UNION ALL
			SELECT (SELECT min(host) FROM crawl_frontier WHERE state='due' AND host>h.host) FROM h WHERE h.host IS NOT NULL
			LIMIT ?)
		SELECT host, EXISTS (SELECT 1 FROM crawl_frontier f WHERE f.state='due' AND f.host=h.host AND f.due_unix_utc<=?)
		FROM h WHERE host IS NOT NULL`, maxFairHosts+1, now)
	if err != nil {
		return nil, fmt.Errorf("hosts with candidates due: %w", err)
	}
	defer rows.Close()
	var out []string
	seen := 0
	for rows.Next() {
		var h string
		var dueNow bool
		if err := rows.Scan(&h, &dueNow); err != nil {
			return nil, fmt.Errorf("hosts with candidates due: %w", err)
		}
		if seen++; seen > maxFairHosts {
			return nil, rows.Close()
		}
		if dueNow {
			out = append(out, h)
		}
	}
	return out, rows.Err()
}

// fairShare picks DueCandidates' candidates host by host. A host has one
// request in flight at a time, and a fetch worker given its task waits
// for that host's turn: taken in release order alone, one host's backlog
// (a page of 300 links admitted a second before another host's) filled
// the fetch queue, and every worker waited on that host while the
// others' candidates waited in the frontier, so a crawl of several
// hosts at a politeness delay went one host after another. Each pick
// now goes to the host with the fewest candidates released and not yet
// recorded (state queued), counting those picked so far; ties to the
// host with the better next candidate. The picks come back in release
// order (priority, then due time; within those, in turn across hosts).
//
// Each host's candidates are read up to the level the picks would reach
// were every host's enough, and read again in full only when the picks
// need more of a host than that: a release of 32 among 64 hosts reads a
// row or none of each, not 32 (BenchmarkDueCandidates).
func (d *DB) fairShare(ctx context.Context, hosts []string, now int64, limit int) ([]crawl.Candidate, error) {
	held, err := d.releasedByHost(ctx)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, h := range hosts {
		total += held[h]
	}
	level := (total + limit + len(hosts) - 1) / len(hosts)
	due := make([][]crawl.Candidate, len(hosts))
	read := make([]int, len(hosts)) // the limit each host's candidates were read with
	readHost := func(i, n int) error {
		read[i], due[i] = n, nil
		if n == 0 {
			return nil
		}
		cs, err := d.queryCandidates(ctx, dueOfHostWhere, hosts[i], now, n)
		if err != nil {
			return fmt.Errorf("due candidates of %s: %w", hosts[i], err)
		}
		due[i] = cs
		return nil
	}
	for i, h := range hosts {
		if err := readHost(i, min(limit, max(0, level-held[h]))); err != nil {
			return nil, err
		}
	}
	var out []crawl.Candidate
	next := make([]int, len(hosts))
	picked := map[string]bool{}
	for len(out) < limit {
		best := -1
		for i, h := range hosts {
			if next[i] == len(due[i]) {
				continue
			}
			if best < 0 || held[h] < held[hosts[best]] ||
				held[h] == held[hosts[best]] && releaseOrder(due[i][next[i]], due[best][next[best]]) < 0 {
				best = i
			}
		}
		if best < 0 {
			// Every host's candidates read are taken: read in full those
			// that may have more, or stop.
			more := false
			for i := range hosts {
				if len(due[i]) == read[i] && read[i] < limit {
					if err := readHost(i, limit); err != nil {
						return nil, err
					}
					more = more || next[i] < len(due[i])
				}
			}
			if !more {
				break
			}
			continue
		}
		c := due[best][next[best]]
		next[best]++
		if picked[c.URL] {
			// Read twice, and a candidate admitted in between moved it.
			continue
		}
		picked[c.URL] = true
		out = append(out, c)
		held[hosts[best]]++
	}
	slices.SortStableFunc(out, releaseOrder)
	return out, nil
}

// releasedByHost counts each host's candidates released and not yet
// recorded (state queued).
func (d *DB) releasedByHost(ctx context.Context) (map[string]int, error) {
	rows, err := d.query(ctx, `SELECT host, count(*) FROM crawl_frontier WHERE state='queued' GROUP BY host`)
	if err != nil {
		return nil, fmt.Errorf("count released candidates by host: %w", err)
	}
	defer rows.Close()
	held := map[string]int{}
	for rows.Next() {
		var h string
		var n int
		if err := rows.Scan(&h, &n); err != nil {
			return nil, fmt.Errorf("count released candidates by host: %w", err)
		}
		held[h] = n
	}
	return held, rows.Err()
}

// dueWhere picks DueCandidates' rows. It walks crawl_frontier_release in
// release order and stops at the limit: the + keeps SQLite off the
// due-time index, with which it read and sorted every candidate due (on
// a crawl of 30,000 pages, a quarter of the CPU; BENCHMARKS.md). Within
// a priority the due ones come first in that index, so the walk only
// passes over candidates of a higher priority due later; DueCandidates
// first checks through the due-time index that one is due at all, so a
// crawl waiting for its next recrawl does not walk them every time.
//
// A site's URLs are held when it is disabled (PutSite); those made due
// meanwhile by a process that had not yet read the change are left
// here until it is enabled.
const dueWhere = `WHERE f.state='due' AND +f.due_unix_utc<=? AND ` + dueNotHeld + dueOrder

// dueNotHeld and dueOrder are dueWhere's, and its variants'.
const (
	dueNotHeld = `(f.site_id IS NULL OR NOT EXISTS (SELECT 1 FROM sites s WHERE s.Id=f.site_id
		AND (s.State=2 OR s.State=3 AND f.parent_url IS NOT NULL)))`
	dueOrder = ` ORDER BY f.priority DESC, f.due_unix_utc, f.url_id LIMIT ?`
)

// dueOfHostWhere is dueWhere for one host (fairShare), through
// crawl_frontier_host_release.
const dueOfHostWhere = `WHERE f.state='due' AND f.host=? AND +f.due_unix_utc<=? AND ` + dueNotHeld + dueOrder

// releaseOrder orders due candidates as dueWhere does, short of the
// url_id: higher priority, then earlier due.
func releaseOrder(a, b crawl.Candidate) int {
	return cmp.Or(cmp.Compare(b.Priority, a.Priority), cmp.Compare(a.DueAt, b.DueAt))
}
