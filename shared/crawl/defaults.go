package crawl

import "time"

// The defaults of a crawl's per-site limits (seed 001's RequestDelay,
// HTTPTimeout and MaxResourceSize), the same in both homes: the CLI's
// flags and the stack's parameters start from them.
const (
	// DefaultUserAgent names the crawler and where to read about it.
	DefaultUserAgent = "serverless-crawler/0.1 (+https://github.com/serverless-crawler/crawler)"
	// DefaultDelay is the least time between two request starts to a host.
	DefaultDelay = time.Second
	// DefaultTimeout bounds one request: connect, headers and body.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResourceSize is where a body is cut off (ExitTooLarge).
	DefaultMaxResourceSize = 10 << 20
)
