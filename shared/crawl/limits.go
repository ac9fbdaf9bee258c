package crawl

import (
	"fmt"
	"strings"
	"time"
)

// The largest value each crawl setting takes, the same for a CLI flag,
// an enqueue event's field and the stack's parameters: past these a
// setting is refused with a message naming the bound, never clamped in
// silence (docs/limits.md).
const (
	// MaxConcurrency caps the requests in flight at once on one machine:
	// each may hold up to a body's worth of memory, and so may each of
	// the as many fetch workers recording the pages fetched.
	MaxConcurrency = 256
	// MaxHops bounds hops and max_depth: a sanity bound (no site's link
	// chains come near it) that keeps hops+1 far from overflowing.
	MaxHops = 1_000_000
	// MaxURLsFromPageLimit caps --max-urls-from-page (seed 001
	// MaxURLsFromPage).
	MaxURLsFromPageLimit = 100_000
	// MaxResourceSizeLimit caps --max-resource-size (seed 001
	// MaxResourceSize).
	MaxResourceSizeLimit = 1 << 30
	// MaxDelay caps the least time between two requests to one host.
	MaxDelay = time.Hour
	// MaxTimeout caps one request's time (seed 001 HTTPTimeout).
	MaxTimeout = 10 * time.Minute
	// MaxPriority bounds an event's priority, either way.
	MaxPriority = 1_000_000
	// MaxURLLength is the longest URL an event may carry (sitemaps allow
	// 2,048 characters; browsers and servers rarely take more than 8 KiB).
	MaxURLLength = 8 << 10
	// MaxKeptURLLength is the longest URL, once normalized, the crawler
	// keeps as a candidate, in both homes: DynamoDB's limit on a
	// partition key, which the AWS home keys candidates and generations
	// by, and the sitemap protocol's limit. Normalizing can make a URL
	// longer (each byte of a non-ASCII character becomes three), so it is
	// checked after. A longer link found in a page is not admitted
	// (schedule.TooLong) and stays in its page's links; a longer URL in
	// an event a user sent is refused (docs/limits.md).
	MaxKeptURLLength = 2048
	// MaxHostLength is the longest host name a URL may have to be
	// crawled: DNS's limit (RFC 1035). WHATWG's parser takes longer
	// ones, which no resolver answers; they are recorded as invalid
	// (the AWS home keys its control items by host, in 1,024 bytes).
	MaxHostLength = 253
	// MaxLogMessage is the most of a crawl's message its log keeps (the
	// head of what a server said, with the crawler's words around it).
	MaxLogMessage = 4 << 10
	// MaxResponseHeaderBytes bounds a response's header section (Go's
	// default is 10 MB): every field kept from the headers (ETag,
	// Content-Type, Location, Link, X-Robots-Tag) rides in an item of at
	// most 400 KB and a message of 256 KiB on AWS. A response past it is
	// recorded as a network error.
	MaxResponseHeaderBytes = 64 << 10
)

// ParseRoom is how many bytes of bodies are parsed and summarized at once
// in one process (both homes); a larger body is parsed alone. With the
// tree kept to pages under 4 MiB, this is what keeps memory a small
// multiple of the bodies fetched at once (docs/limits.md).
const ParseRoom = 16 << 20

// MaxMessageBytes is the largest message body the embedded home's queues
// take: SQS's limit as the AWS home keeps it (sqsq.MaxPayload), so that
// a stage that would overflow SQS fails on one machine too rather than
// only on AWS.
const MaxMessageBytes = 256 << 10

// CheckMessages refuses a send to queue whose bodies SQS would refuse
// (an empty one, or one over MaxMessageBytes): crawl.KindInvalid, naming
// the body, so that the caller sends nothing of the call.
func CheckMessages(queue string, bodies [][]byte) error {
	for i, b := range bodies {
		if len(b) == 0 || len(b) > MaxMessageBytes {
			return E(fmt.Sprintf("send to %s: message %d of %d (nothing sent)", queue, i+1, len(bodies)), KindInvalid,
				fmt.Errorf("body of %d bytes: a message holds 1 to %d", len(b), MaxMessageBytes))
		}
	}
	return nil
}

// HostName is a URL's host as DNS resolves it: without its port or a
// final dot (what MaxHostLength bounds).
func HostName(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:i]
	}
	return strings.TrimSuffix(host, ".")
}
