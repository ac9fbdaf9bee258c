package contract

import (
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Opener returns a new, empty metadata store; t cleans it up.
type Opener func(t *testing.T) Metadata

// Store runs the store contract: candidates and their conditional
// transitions, the due-URL queries, crawls and their redelivery, entity
// generations and theirs, status and search.
func Store(t *testing.T, open Opener) {
	t.Run("Candidates", func(t *testing.T) { candidates(t, open) })
	t.Run("Queries", func(t *testing.T) { queries(t, open) })
	t.Run("Control", func(t *testing.T) { control(t, open) })
	t.Run("Crawls", func(t *testing.T) { crawls(t, open) })
	t.Run("Summaries", func(t *testing.T) { summaries(t, open) })
	t.Run("Status", func(t *testing.T) { status(t, open) })
	t.Run("Search", func(t *testing.T) { search(t, open) })
	t.Run("Sites", func(t *testing.T) { sites(t, open) })
}

// putNew inserts c as a new candidate and returns it as stored.
func putNew(t *testing.T, s Metadata, c crawl.Candidate) crawl.Candidate {
	t.Helper()
	c.Version = 0
	if err := s.PutCandidate(t.Context(), c); err != nil {
		t.Fatalf("put candidate %s: %v", c.URL, err)
	}
	return mustGet(t, s, c.URL)
}

func mustGet(t *testing.T, s Metadata, u string) crawl.Candidate {
	t.Helper()
	c, err := s.GetCandidate(t.Context(), u)
	if err != nil {
		t.Fatalf("get candidate %s: %v", u, err)
	}
	return c
}

func mustStatus(t *testing.T, s Metadata, u string) crawl.URLStatus {
	t.Helper()
	st, err := s.Status(t.Context(), u)
	if err != nil {
		t.Fatalf("status of %s: %v", u, err)
	}
	return st
}

func addScope(t *testing.T, s Metadata, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		if err := s.AddScopeHost(t.Context(), h); err != nil {
			t.Fatalf("add scope host %s: %v", h, err)
		}
	}
}

// dueCandidate is a candidate of example.com due at due.
func dueCandidate(u string, priority int, due int64) crawl.Candidate {
	return crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateDue, Priority: priority, DueAt: due,
		CrawlType: crawl.CrawlFirst, DiscoveredAt: 1}
}

func urlsOf(cs []crawl.Candidate) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.URL)
	}
	return out
}

// registerAgent registers the agent the fixtures' crawls name (the
// SQLite store refers to it; the DynamoDB store does not need it).
func registerAgent(t *testing.T, s Metadata) {
	t.Helper()
	a := crawl.Agent{TimeStarted: 1700000000, UUID: AgentUUID, Name: "test", HTTPUserAgent: ptr("crawler-test/1.0")}
	if err := s.RegisterAgent(t.Context(), a); err != nil {
		t.Fatalf("register agent: %v", err)
	}
}

// queuedCandidate stores a candidate of example.com released as
// crawlUUID and returns it.
func queuedCandidate(t *testing.T, s Metadata, u, crawlUUID string) crawl.Candidate {
	t.Helper()
	return putNew(t, s, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateQueued, CrawlUUID: crawlUUID,
		QueuedAt: 1700000000, CrawlType: crawl.CrawlFirst, DiscoveredAt: 1699999999})
}

// record records cr of a newly queued candidate as the fetch stage does.
func record(t *testing.T, s Metadata, cr crawl.Crawl) {
	t.Helper()
	next := CrawledAs(queuedCandidate(t, s, cr.Log.URL, cr.Log.CrawlUUID), cr)
	if fresh, err := s.RecordCrawl(t.Context(), cr, &next); err != nil || !fresh {
		t.Fatalf("record crawl %s: %v, %v", cr.Log.CrawlUUID, fresh, err)
	}
}

// asRead is cr as GetCrawl reads it back: without file_text, and with
// the ids a store assigns (SQLite's row ids; DynamoDB has none) cleared.
func asRead(cr crawl.Crawl) crawl.Crawl {
	cr.FileText = nil
	cr.Log.ID = 0
	cr.Requests = append([]crawl.Request(nil), cr.Requests...)
	for i := range cr.Requests {
		cr.Requests[i].ID = 0
	}
	if cr.File != nil {
		f := *cr.File
		f.ID = 0
		cr.File = &f
	}
	if cr.Redirect != nil {
		r := *cr.Redirect
		r.ID = 0
		cr.Redirect = &r
	}
	return cr
}

// mustGetCrawl reads a crawl back, ids cleared (see asRead).
func mustGetCrawl(t *testing.T, s Metadata, crawlUUID string) crawl.Crawl {
	t.Helper()
	cr, err := s.GetCrawl(t.Context(), crawlUUID)
	if err != nil {
		t.Fatalf("get crawl %s: %v", crawlUUID, err)
	}
	return asRead(cr)
}
