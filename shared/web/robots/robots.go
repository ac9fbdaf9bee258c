// Package robots applies robots.txt (RFC 9309) with the maintained
// parser github.com/temoto/robotstxt, and caches the rules per origin.
package robots

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// MaxSize is how much of a robots.txt is read (RFC 9309 asks for at
// least 500 kibibytes).
const MaxSize = 500 << 10

// Rules are one origin's robots.txt as it applies to our user agent.
type Rules struct {
	// Status is the robots.txt HTTP status (0: unreachable).
	Status int
	// Reason says why the rules are what they are, for crawl log messages.
	Reason     string
	CrawlDelay time.Duration
	Sitemaps   []string
	Expires    time.Time
	// Temporary rules (robots.txt unreachable or 5xx) disallow everything
	// until Expires; the URLs they hold back are retried then.
	Temporary bool
	// Refused rules: the fetcher's address policy refused the host, so
	// nothing of it will be fetched (see Refused).
	Refused bool
	// Shared rules were read from a store shared with other crawler
	// processes: the process that fetched robots.txt enqueued its sitemaps.
	Shared bool
	group  *robotstxt.Group
	all    *bool // nil: use group; else allow (true) or disallow (false) everything
}

// Allowed reports whether the path (with its query) may be fetched.
func (r *Rules) Allowed(pathQuery string) bool {
	if r.all != nil {
		return *r.all
	}
	if r.group == nil {
		return true
	}
	return r.group.Test(pathQuery)
}

var yes, no = true, false

// Token returns the product token robots.txt groups are matched against:
// the User-Agent up to its first '/' or space ("serverless-crawler/0.1
// (+url)" -> "serverless-crawler").
func Token(userAgent string) string {
	t := strings.FieldsFunc(userAgent, func(r rune) bool { return r == '/' || r == ' ' })
	if len(t) == 0 {
		return userAgent
	}
	return t[0]
}

// FromResponse builds rules from a robots.txt answer: 2xx is parsed; 4xx
// allows everything; 5xx (and anything else) disallows everything for
// errTTL; an unparseable 2xx body allows everything.
func FromResponse(status int, body []byte, userAgent string, now time.Time, ttl, errTTL time.Duration) *Rules {
	r := &Rules{Status: status, Expires: now.Add(ttl)}
	switch {
	case status >= 200 && status < 300:
		data, err := robotstxt.FromBytes(body)
		if err != nil {
			r.all, r.Reason = &yes, fmt.Sprintf("robots.txt unparseable (%v): everything allowed", err)
			return r
		}
		r.group = data.FindGroup(Token(userAgent))
		r.CrawlDelay = r.group.CrawlDelay
		r.Sitemaps = data.Sitemaps
		r.Reason = fmt.Sprintf("robots.txt group %q", r.group.Agent)
	case status >= 400 && status < 500:
		r.all, r.Reason = &yes, fmt.Sprintf("robots.txt HTTP %d: everything allowed", status)
	default:
		r.all, r.Temporary, r.Expires = &no, true, now.Add(errTTL)
		r.Reason = fmt.Sprintf("robots.txt HTTP %d: host disallowed until %s", status, r.Expires.UTC().Format(time.RFC3339))
	}
	return r
}

// Unreachable builds the rules for a robots.txt that could not be
// fetched: everything disallowed for errTTL.
func Unreachable(err error, now time.Time, errTTL time.Duration) *Rules {
	exp := now.Add(errTTL)
	return &Rules{all: &no, Temporary: true, Expires: exp,
		Reason: fmt.Sprintf("robots.txt unreachable (%v): host disallowed until %s", err, exp.UTC().Format(time.RFC3339))}
}

// RefusedHost builds the rules for a host the fetcher may not connect
// to at all: everything disallowed, for ttl, and not as a temporary
// verdict worth retrying soon.
func RefusedHost(reason string, now time.Time, ttl time.Duration) *Rules {
	return &Rules{all: &no, Refused: true, Expires: now.Add(ttl), Reason: reason}
}

// URL returns the robots.txt URL of the origin of u.
func URL(u *url.URL) string { return u.Scheme + "://" + u.Host + "/robots.txt" }

// Cache holds rules per origin until they expire. Concurrent lookups of
// one origin share one load, so robots.txt is fetched once.
type Cache struct {
	mu      sync.Mutex
	entries map[string]*entry
	now     func() time.Time
}

type entry struct {
	ready chan struct{}
	rules *Rules
}

// NewCache returns an empty cache.
func NewCache() *Cache { return &Cache{entries: map[string]*entry{}, now: time.Now} }

// Get returns the origin's rules, calling load when there are none or
// they expired. loaded reports whether this call loaded them.
func (c *Cache) Get(ctx context.Context, origin string, load func(context.Context) (*Rules, error)) (rules *Rules, loaded bool, err error) {
	for {
		c.mu.Lock()
		e, ok := c.entries[origin]
		if ok {
			select {
			case <-e.ready:
				if c.now().Before(e.rules.Expires) {
					c.mu.Unlock()
					return e.rules, false, nil
				}
				ok = false // expired: load again
			default:
			}
		}
		if !ok {
			e = &entry{ready: make(chan struct{})}
			c.entries[origin] = e
			c.mu.Unlock()
			rules, err := load(ctx)
			if err != nil {
				// No verdict (the host's politeness slot was not ours to
				// take): forget the entry, so the next caller loads again.
				c.mu.Lock()
				delete(c.entries, origin)
				c.mu.Unlock()
				close(e.ready)
				return nil, false, err
			}
			e.rules = rules
			close(e.ready)
			return e.rules, true, nil
		}
		c.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}
