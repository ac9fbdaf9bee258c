package crawl

import "time"

// The largest value each crawl setting takes, the same for a CLI flag,
// an enqueue event's field and the stack's parameters: past these a
// setting is refused with a message naming the bound, never clamped in
// silence (docs/limits.md).
const (
	// MaxConcurrency caps the URLs fetched at once on one machine: each
	// fetch may hold up to a body's worth of memory.
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
)

// ParseRoom is how many bytes of bodies are parsed and summarized at once
// in one process (both homes); a larger body is parsed alone. With the
// tree kept to pages under 4 MiB, this is what keeps memory a small
// multiple of the bodies fetched at once (docs/limits.md).
const ParseRoom = 16 << 20
