package crawl

import "fmt"

// ExitCode is the outcome of one crawl (crawl_log.exit_code,
// request.exit_code, crawl_candidate.last_crawl_exit_code). Codes are
// grouped by tens; the group is the category:
//
//	 1– 9  contentful: a body was fetched and stored
//	10–19  confirmed: the server said the stored content is still current
//	20–29  redirected
//	30–39  not requested, by policy (robots.txt, scope, depth, limits)
//	40–49  refused by the server (HTTP 4xx, 5xx)
//	50–59  failed in transport or content (timeouts, network, limits)
//	60–69  not a crawl target at all (invalid URL, unsupported scheme)
//
// Seed 000 speaks of a "contentful" category: Contentful reports it, and
// crawl_candidate.last_contentful_* move only on a contentful crawl.
// Status maps each code to seed 004's crawl-url status words.
type ExitCode int

// The crawl exit codes. Never renumber: the values are stored.
const (
	ExitUnknown ExitCode = 0

	// ExitComplete: the resource was fetched and stored (any 2xx).
	ExitComplete ExitCode = 1
	// ExitDuplicate: fetched, and its text equals another URL's open
	// generation (seed 004 exact-duplicate). Set by the summarizer.
	ExitDuplicate ExitCode = 2

	// ExitUnchanged: a conditional GET answered 304 Not Modified.
	ExitUnchanged ExitCode = 10

	// ExitRedirect: the server answered 3xx with a Location; the target
	// is enqueued as its own candidate.
	ExitRedirect ExitCode = 20

	// ExitRobotsDisallowed: robots.txt forbids the URL; never requested.
	ExitRobotsDisallowed ExitCode = 30
	// ExitOutOfScope: the URL's host is outside the crawl's scope.
	ExitOutOfScope ExitCode = 31
	// ExitExcluded: an --include/--exclude pattern rules the URL out.
	ExitExcluded ExitCode = 32
	// ExitTooDeep: the URL is more hops from a seed than max depth.
	ExitTooDeep ExitCode = 33
	// ExitBlockedAddress: the host resolves to an address the fetcher
	// refuses (loopback, private, link-local, ...).
	ExitBlockedAddress ExitCode = 34
	// ExitTooManyURLs: a limit on URLs (MaxURLsFromPage) was hit.
	ExitTooManyURLs ExitCode = 35

	// ExitHTTPClientError: the server answered 4xx (404, 410, 403, ...).
	ExitHTTPClientError ExitCode = 40
	// ExitHTTPServerError: the server answered 5xx, after retries.
	ExitHTTPServerError ExitCode = 41
	// ExitRateLimited: the server answered 429 and kept doing so.
	ExitRateLimited ExitCode = 42
	// ExitNoSitemap: a sitemap learned from robots.txt (named there, or
	// the /sitemap.xml guessed when it names none) answered 404 or 410:
	// the site has no such sitemap. Not an error of the site.
	ExitNoSitemap ExitCode = 43

	// ExitTimeout: no complete answer within the HTTP timeout.
	ExitTimeout ExitCode = 50
	// ExitNetworkError: DNS, connection refused or reset, TLS failure.
	ExitNetworkError ExitCode = 51
	// ExitRedirectLoop: a redirect points back into its own chain.
	ExitRedirectLoop ExitCode = 52
	// ExitTooManyRedirects: more redirect hops than the limit.
	ExitTooManyRedirects ExitCode = 53
	// ExitTooLarge: the body exceeded MaxResourceSize and was cut off.
	ExitTooLarge ExitCode = 54
	// ExitBadContent: the body could not be decoded (corrupt encoding).
	ExitBadContent ExitCode = 55

	// ExitInvalidURL: the URL cannot be parsed or normalized.
	ExitInvalidURL ExitCode = 60
	// ExitUnsupportedScheme: not http or https (mailto:, javascript:).
	ExitUnsupportedScheme ExitCode = 61
)

// Seed 004 crawl-url status words.
const (
	StatusComplete   = "complete"
	StatusRedir      = "redir"
	StatusDisallowed = "disallowed by robots.txt"
	StatusFiltered   = "filtered"
	StatusError      = "error"
	StatusDuplicate  = "duplicate"
	StatusKilled     = "killed"
	StatusUnchanged  = "unchanged"
	StatusNone       = "none"
)

var exitCodeInfo = map[ExitCode]struct {
	name   string
	status string
}{
	ExitUnknown:           {"unknown", StatusNone},
	ExitComplete:          {"complete", StatusComplete},
	ExitDuplicate:         {"duplicate", StatusDuplicate},
	ExitUnchanged:         {"unchanged", StatusUnchanged},
	ExitRedirect:          {"redirect", StatusRedir},
	ExitRobotsDisallowed:  {"robots-disallowed", StatusDisallowed},
	ExitOutOfScope:        {"out-of-scope", StatusFiltered},
	ExitExcluded:          {"excluded", StatusFiltered},
	ExitTooDeep:           {"too-deep", StatusFiltered},
	ExitBlockedAddress:    {"blocked-address", StatusFiltered},
	ExitTooManyURLs:       {"too-many-urls", StatusFiltered},
	ExitHTTPClientError:   {"http-client-error", StatusError},
	ExitHTTPServerError:   {"http-server-error", StatusError},
	ExitRateLimited:       {"rate-limited", StatusError},
	ExitNoSitemap:         {"no-sitemap", StatusFiltered},
	ExitTimeout:           {"timeout", StatusError},
	ExitNetworkError:      {"network-error", StatusError},
	ExitRedirectLoop:      {"redirect-loop", StatusError},
	ExitTooManyRedirects:  {"too-many-redirects", StatusError},
	ExitTooLarge:          {"too-large", StatusError},
	ExitBadContent:        {"bad-content", StatusError},
	ExitInvalidURL:        {"invalid-url", StatusError},
	ExitUnsupportedScheme: {"unsupported-scheme", StatusKilled},
}

// ExitCodes lists every defined exit code in numeric order.
func ExitCodes() []ExitCode {
	return []ExitCode{
		ExitUnknown, ExitComplete, ExitDuplicate, ExitUnchanged, ExitRedirect,
		ExitRobotsDisallowed, ExitOutOfScope, ExitExcluded, ExitTooDeep,
		ExitBlockedAddress, ExitTooManyURLs, ExitHTTPClientError,
		ExitHTTPServerError, ExitRateLimited, ExitNoSitemap, ExitTimeout, ExitNetworkError,
		ExitRedirectLoop, ExitTooManyRedirects, ExitTooLarge, ExitBadContent,
		ExitInvalidURL, ExitUnsupportedScheme,
	}
}

// String returns the code's short name, for logs and summaries.
func (c ExitCode) String() string {
	if i, ok := exitCodeInfo[c]; ok {
		return i.name
	}
	return fmt.Sprintf("exit-%d", int(c))
}

// Status returns the seed 004 crawl-url status word for the code.
func (c ExitCode) Status() string {
	if i, ok := exitCodeInfo[c]; ok {
		return i.status
	}
	return StatusError
}

// Contentful reports whether the crawl fetched and stored a body: seed
// 000's contentful category, which moves last_contentful_crawl_time.
func (c ExitCode) Contentful() bool { return c >= 1 && c <= 9 }

// Requested reports whether the crawl sent a request to the site:
// not when robots.txt or a filter kept it from being fetched, and not
// for too-many-redirects, which is decided before the request.
func (c ExitCode) Requested() bool {
	return c < 30 || (c >= 40 && c < 60 && c != ExitTooManyRedirects)
}

// Failed reports whether the crawl ended in an error (seed 004 "error").
// A failed crawl closes no entity generation, but for a 404 or a 410 of
// a page that had one (the summarize stage: the page is gone).
func (c ExitCode) Failed() bool { return c.Status() == StatusError }

// Logged reports whether the outcome is written to the crawl log. Seed
// 004 "killed" outcomes are not: they never were crawl targets.
func (c ExitCode) Logged() bool { return c.Status() != StatusKilled }
