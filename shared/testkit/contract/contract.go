// Package contract is the adapter contract: one suite of tests run
// against the adapters of both homes, so that the embedded home (SQLite,
// files, the SQLite queue) and the AWS home (DynamoDB, S3, SQS) honour
// the same semantics: conditional transitions, idempotent redelivery,
// due-URL queries, batch limits, queue leases, blob lookups.
//
// The suites are Store (a Metadata store), Queue (a MessageQueue), Blobs
// (a BlobStore) and Robots (a RobotsCache).
// Each adapter package calls them from its contract_test.go:
//
//	func TestContract(t *testing.T) {
//		contract.Store(t, func(t *testing.T) contract.Metadata { return openDB(t) })
//	}
//
// An opener returns a new, empty adapter each time it is called (a fresh
// SQLite file, fresh DynamoDB tables, a fresh queue or bucket), cleaned
// up by t. The suites see only these interfaces, which are what the
// stages and their runners consume; what only one home has (SQLite's
// MarkAllDue and outcome counts, DynamoDB's GetAgent) and how an adapter
// lays its data out (SQL rows, items, GSIs) stay in the adapter's own
// tests. A store that is also a Snapshotter lets the suite check that a
// write that must change nothing changed nothing at all.
//
// This package holds test code only; no binary imports it.
package contract

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/report"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
	"github.com/serverless-crawler/crawler/shared/stage/schedule"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
)

// Metadata is the metadata store: the union of what the four stages
// consume (their Store interfaces), what `crawler status` and `crawler
// search` read, and what a run or an execution environment registers.
// sqlite.DB and dynamo.DB implement it, with the same signatures.
type Metadata interface {
	schedule.Store
	schedule.SiteStore
	fetch.Store
	parse.Store
	summarize.Store

	// Status is what `crawler status` reports (handlers.StatusReader).
	Status(ctx context.Context, url string) (crawl.URLStatus, error)
	// Search is `crawler search`.
	Search(ctx context.Context, query string, limit int) ([]crawl.SearchHit, error)
	// NextDue is when the next candidate of the scope falls due.
	NextDue(ctx context.Context) (int64, bool, error)
	// ScopeHosts lists the scope in byte order.
	ScopeHosts(ctx context.Context) ([]string, error)
	// RegisterAgent and FinishAgent record a seed 000 agent (stack.AgentRegistry).
	RegisterAgent(ctx context.Context, a crawl.Agent) error
	FinishAgent(ctx context.Context, AgentUUID string, at int64) error
	// EachCrawl, EachCandidate and DuplicateCount are what `crawler
	// report` reads.
	report.Source
}

func ptr[T any](v T) *T { return &v }

// run runs the named cases of a suite as subtests.
func run(t *testing.T, cases []testCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, c.f)
	}
}

type testCase struct {
	name string
	f    func(t *testing.T)
}

// Snapshotter is a store that can show everything it holds: rows, items,
// blobs written. Where a write must change nothing (a redelivery, a lost
// conditional write, a refused input) the suite then checks that nothing
// at all changed, beyond what the interface shows: no stray row, no
// counter counted twice, no blob written again.
type Snapshotter interface {
	Snapshot(t *testing.T) Snapshot
}

// Snapshot is what a store holds, as text, by any key the store likes
// (a table, an item's key).
type Snapshot map[string]string

// snapshot takes a snapshot of s, or returns nil if it cannot.
func snapshot(t *testing.T, s any) Snapshot {
	t.Helper()
	if sn, ok := s.(Snapshotter); ok {
		return sn.Snapshot(t)
	}
	return nil
}

// unchanged reports what differs between two snapshots of s: one taken
// before something that must not change s, and one taken now.
func unchanged(t *testing.T, s any, before Snapshot, what string) {
	t.Helper()
	if before == nil {
		return
	}
	after := snapshot(t, s)
	var diffs []string
	for k, v := range after {
		if w, ok := before[k]; !ok {
			diffs = append(diffs, "added "+k+": "+v)
		} else if w != v {
			diffs = append(diffs, "changed "+k+":\nwas: "+w+"\nnow: "+v)
		}
	}
	for k, v := range before {
		if _, ok := after[k]; !ok {
			diffs = append(diffs, "removed "+k+": "+v)
		}
	}
	if len(diffs) > 0 {
		sort.Strings(diffs)
		t.Errorf("%s changed what the store holds:\n%s", what, strings.Join(diffs, "\n"))
	}
}
