package pipeline

import (
	"context"
	"sync"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
)

// recentCrawls is the summarizer's store with the crawls this process
// has just recorded kept in memory: the summarizer reads each crawl it
// summarizes (GetCrawl, four queries), and in one process the crawl it
// reads is, nearly always, the one the fetch worker recorded a moment
// before and handed on inline. A crawl is read from memory once and
// then forgotten; one the summarizer never asks for (its page went to
// the parse queue) is dropped after recentCrawlsKept newer ones. A miss
// reads the store, so what the summarizer sees is the same either way:
// the contract suite checks that GetCrawl returns the crawl as recorded
// (ids aside, which the summarizer does not use, and without file_text).
type recentCrawls struct {
	summarize.Store

	mu    sync.Mutex
	byID  map[string]crawl.Crawl
	order []string // ring of the kept crawls' UUIDs, oldest at next
	next  int
}

// recentCrawlsKept bounds the crawls kept: more than the fetch workers
// can have between recording a crawl and summarizing it.
const recentCrawlsKept = 256

func newRecentCrawls(s summarize.Store) *recentCrawls {
	return &recentCrawls{Store: s, byID: map[string]crawl.Crawl{}, order: make([]string, recentCrawlsKept)}
}

// keep remembers cr, recorded and committed, for the summarizer.
func (r *recentCrawls) keep(cr crawl.Crawl) {
	cr.FileText = nil // GetCrawl leaves it out; the summarizer reads the document
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.order[r.next]; old != "" {
		delete(r.byID, old)
	}
	r.order[r.next] = cr.Log.CrawlUUID
	r.next = (r.next + 1) % len(r.order)
	r.byID[cr.Log.CrawlUUID] = cr
}

// GetCrawl returns a crawl kept in memory, once, or reads it.
func (r *recentCrawls) GetCrawl(ctx context.Context, crawlUUID string) (crawl.Crawl, error) {
	r.mu.Lock()
	cr, ok := r.byID[crawlUUID]
	if ok {
		delete(r.byID, crawlUUID)
	}
	r.mu.Unlock()
	if ok {
		return cr, nil
	}
	return r.Store.GetCrawl(ctx, crawlUUID)
}
