package crawl

// Candidate is a URL that may be crawled: seed 000's crawl_candidate row
// plus the frontier state the scheduler needs (which the seed leaves out:
// hops, when it is due, which crawl it was released as). The SQLite store
// keeps the seed's columns in crawl_candidate and the rest in
// crawl_frontier; DynamoDB keeps both in one item.
type Candidate struct {
	// crawl_candidate (seed 000)
	URL                     string
	LastCrawlTime           *int64
	LastCrawlExitCode       *ExitCode
	LastContentfulCrawlTime *int64
	LastContentfulETag      *string

	// frontier
	Host                   string
	State                  CandidateState
	Hops                   int
	Priority               int
	DueAt                  int64 // Unix seconds; meaningful in StateDue
	CrawlType              CrawlType
	CrawlUUID              string // the crawl it was last released as
	QueuedAt               int64  // when it was released (StateQueued)
	LastContentfulModified *int64 // Last-Modified of the last contentful crawl
	NRedirs                int    // seed 004 n-redirs: redirects that led here
	OrigURL                string // seed 004 orig-url: where the redirects began
	RedirectChain          []string
	DiscoveredAt           int64
	Parent                 string // the page it was first found on; "" for seeds
	MaxDepth               *int   // the depth limit it was enqueued with, if any
	SiteID                 string // the site it belongs to (seed 001), "" for none
	// Adaptive recrawl (revisit.go): seed 001 MRate and MRateCounter, and
	// the recrawl period (seconds) its next visit follows, 0 if none.
	MRate        float64
	MRateCounter int64
	RecrawlEvery int64
	// Version counts writes; a conditional write expects the version read.
	Version int64
}

// CandidateState is where a candidate is in the frontier.
type CandidateState string

// The candidate states.
const (
	// StateDue: waiting to be released to fetch once DueAt has passed.
	StateDue CandidateState = "due"
	// StateQueued: released to the fetch queue as crawl CrawlUUID.
	StateQueued CandidateState = "queued"
	// StateCrawled: crawled; due again only by recrawl or re-enqueue.
	StateCrawled CandidateState = "crawled"
	// StateFiltered: ruled out by scope, depth, patterns or robots.txt.
	StateFiltered CandidateState = "filtered"
	// StateHeld: due, but its site is disabled (or suspended, for a link
	// found in a page): it waits, intact, and is due again when the site
	// is enabled.
	StateHeld CandidateState = "held"
)
