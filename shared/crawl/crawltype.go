package crawl

import "fmt"

// CrawlType says why a crawl happened (crawl_log.crawl_type,
// crawl_summary.crawl_type). Never renumber: the values are stored.
type CrawlType int

// The crawl types.
const (
	// CrawlFirst: the URL had never been crawled.
	CrawlFirst CrawlType = 1
	// CrawlRecrawl: the URL's recrawl period ran out (scheduled recrawl).
	CrawlRecrawl CrawlType = 2
	// CrawlForced: enqueued with enqueue-type forced, skipping dedupe.
	CrawlForced CrawlType = 3
	// CrawlReenqueued: enqueued with enqueue-type reenqueued (or
	// `crawler crawl --recrawl`): dedupe and expiry are ignored.
	CrawlReenqueued CrawlType = 4
)

var crawlTypeNames = map[CrawlType]string{
	CrawlFirst: "first", CrawlRecrawl: "recrawl", CrawlForced: "forced", CrawlReenqueued: "reenqueued",
}

// String returns the crawl type's name.
func (t CrawlType) String() string {
	if n, ok := crawlTypeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("crawl-type-%d", int(t))
}
