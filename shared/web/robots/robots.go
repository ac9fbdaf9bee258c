// Package robots reads robots.txt as RFC 9309 says, and caches the
// rules per origin.
//
// The parser and matcher are our own (parse.go, match.go): no maintained
// Go library both follows RFC 9309 and fits a crawler that parses a file
// once and matches it many times. github.com/temoto/robotstxt fails open
// (one line it cannot read and it allows everything) and matches by
// other rules; github.com/jimsmart/grobotstxt (a port of Google's
// parser) re-parses the whole file on every question and does not read
// Crawl-delay. docs/robots.md has the measurements.
package robots

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// MaxSize is how much of a robots.txt is read (RFC 9309 asks for at
// least 500 kibibytes).
const MaxSize = 500 << 10

// maxIgnored is how many ignored lines rules keep to report.
const maxIgnored = 20

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
	// Ignored are the lines of robots.txt that were not applied (outside
	// any group, or in a group that applies to us), at most maxIgnored of
	// IgnoredCount.
	Ignored      []IgnoredLine
	IgnoredCount int

	group string // the group that applies: its user-agent, "*", or "" for none
	rules []Rule // the group's rules, most specific first, Allow before Disallow
	all   *bool  // nil: use rules; else allow (true) or disallow (false) everything
}

// Verdict is robots.txt's answer for one URL, and why.
type Verdict struct {
	Allowed bool
	// Group is the user-agent of the group that applied, as written in
	// robots.txt ("*" for the global group); "" when no group applied.
	Group string
	// Rule is the rule that decided; nil when none matched (allowed), or
	// when robots.txt was not read (see Rules.Reason).
	Rule  *Rule
	rules *Rules
}

// String says why, for the crawl log: the group, the rule that decided
// and its line, the lines that were ignored; or why robots.txt was not
// read.
func (v Verdict) String() string {
	r := v.rules
	if r == nil {
		return ""
	}
	if r.all != nil {
		return r.Reason
	}
	var s string
	switch {
	case v.Group == "":
		s = "robots.txt has no group for us nor for *"
	case v.Rule == nil:
		s = fmt.Sprintf("robots.txt group %q, no rule matches", v.Group)
	default:
		s = fmt.Sprintf("robots.txt group %q, rule %s", v.Group, v.Rule)
	}
	if note := r.IgnoredNote(); note != "" {
		s += "; " + note
	}
	return s
}

// Allowed reports whether the path (with its query) may be fetched.
func (r *Rules) Allowed(pathQuery string) bool { return r.Verdict(pathQuery).Allowed }

// Verdict returns whether the path (with its query) may be fetched, and
// why. RFC 9309 section 2.2.2: the rule whose pattern has the most
// octets decides; between an Allow and a Disallow of equal length, the
// Allow; no matching rule allows. Path and patterns are compared with
// their percent-encoding normalized.
func (r *Rules) Verdict(pathQuery string) Verdict {
	if r.all != nil {
		return Verdict{Allowed: *r.all, rules: r}
	}
	v := Verdict{Allowed: true, Group: r.group, rules: r}
	if pathQuery == "" {
		pathQuery = "/"
	}
	p := normalize(pathQuery)
	for i := range r.rules {
		if r.rules[i].p.match(p) {
			v.Allowed, v.Rule = r.rules[i].Allow, &r.rules[i]
			break
		}
	}
	return v
}

// IgnoredNote says which robots.txt lines were ignored, for the crawl
// log ("" when none was).
func (r *Rules) IgnoredNote() string {
	if r.IgnoredCount == 0 {
		return ""
	}
	const shown = 3
	var b strings.Builder
	b.WriteString("robots.txt ignored ")
	for i, l := range r.Ignored[:min(shown, len(r.Ignored))] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(l.String())
	}
	if more := r.IgnoredCount - min(shown, len(r.Ignored)); more > 0 {
		fmt.Fprintf(&b, " and %d more lines", more)
	}
	return b.String()
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

// FromResponse builds rules from a robots.txt answer: 2xx is parsed
// (lines that cannot be understood are ignored, the rest applies); 4xx
// allows everything; 5xx (and anything else) disallows everything for
// errTTL.
func FromResponse(status int, body []byte, userAgent string, now time.Time, ttl, errTTL time.Duration) *Rules {
	r := &Rules{Status: status, Expires: now.Add(ttl)}
	switch {
	case status >= 200 && status < 300:
		r.apply(parse(body), Token(userAgent))
	case status >= 400 && status < 500:
		r.all, r.Reason = &yes, fmt.Sprintf("robots.txt HTTP %d: everything allowed", status)
	default:
		r.all, r.Temporary, r.Expires = &no, true, now.Add(errTTL)
		r.Reason = fmt.Sprintf("robots.txt HTTP %d: host disallowed until %s", status, r.Expires.UTC().Format(time.RFC3339))
	}
	return r
}

// apply keeps what of a parsed file applies to the product token: the
// groups naming it (case-insensitively, the whole token), merged; else
// the groups for "*", merged (RFC 9309 section 2.2.1). Only their rules
// are compiled, and copied out of the body so it is not kept alive.
func (r *Rules) apply(f *file, token string) {
	var chosen []int
	for _, pick := range []func(string) bool{
		func(a string) bool { return token != "" && a != "*" && strings.EqualFold(a, token) },
		func(a string) bool { return a == "*" },
	} {
		for i, g := range f.groups {
			for _, a := range g.agents {
				if pick(a) {
					if len(chosen) == 0 {
						r.group = a
					}
					chosen = append(chosen, i)
					break
				}
			}
		}
		if len(chosen) > 0 {
			break
		}
	}
	for _, i := range chosen {
		g := f.groups[i]
		r.CrawlDelay = max(r.CrawlDelay, g.crawlDelay)
		for _, rule := range g.rules {
			rule.Pattern = strings.Clone(rule.Pattern)
			rule.p = compile(rule.Pattern)
			r.rules = append(r.rules, rule)
		}
	}
	slices.SortStableFunc(r.rules, func(a, b Rule) int {
		if a.p.length != b.p.length {
			return b.p.length - a.p.length
		}
		if a.Allow != b.Allow {
			if a.Allow {
				return -1
			}
			return 1
		}
		return a.Line - b.Line
	})
	r.Sitemaps = f.sitemaps
	for _, l := range f.ignored {
		if l.group >= 0 && !slices.Contains(chosen, l.group) {
			continue // another crawler's business
		}
		r.IgnoredCount++
		if len(r.Ignored) < maxIgnored {
			l.Text = strings.Clone(l.Text)
			r.Ignored = append(r.Ignored, l.IgnoredLine)
		}
	}
	if r.group == "" {
		r.Reason = "robots.txt has no group for us nor for *"
	} else {
		r.Reason = fmt.Sprintf("robots.txt group %q", r.group)
	}
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
