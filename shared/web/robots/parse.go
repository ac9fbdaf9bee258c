package robots

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rule is one Allow or Disallow line of the group that applies to us.
type Rule struct {
	Allow bool
	// Pattern is the path pattern as written (comment and blanks cut).
	Pattern string
	// Line is the rule's line number in robots.txt, from 1.
	Line int
	p    pattern
}

// String returns the rule as written, with its line number.
func (r *Rule) String() string {
	verb := "Disallow"
	if r.Allow {
		verb = "Allow"
	}
	return fmt.Sprintf("%s: %s (line %d)", verb, clip(r.Pattern), r.Line)
}

// IgnoredLine is a robots.txt line that was not applied, and why.
// Ignored lines change nothing else: the verdicts of a file are those of
// the same file with its ignored lines blanked.
type IgnoredLine struct {
	Line int    // from 1
	Text string // the line, cut to 80 bytes
	Why  string
}

// String returns the line's number, text and why it was ignored.
func (l IgnoredLine) String() string {
	return fmt.Sprintf("line %d %q (%s)", l.Line, l.Text, l.Why)
}

// file is a parsed robots.txt: its groups with their rules not yet
// compiled (only ours will be), its sitemaps and its ignored lines.
type file struct {
	groups   []*group
	sitemaps []string
	ignored  []ignored
}

type group struct {
	agents     []string // product tokens as written; "*" for the global group
	rules      []Rule   // Pattern and Line set; compiled when chosen
	crawlDelay time.Duration
}

// ignored is an ignored line and the group it sat in (-1: none).
type ignored struct {
	IgnoredLine
	group int
}

// record names the lines RFC 9309 defines, and those we also read.
type record int

const (
	recOther record = iota
	recUserAgent
	recAllow
	recDisallow
	recCrawlDelay
	recSitemap
)

// records maps line names, lower-cased, to what they are. Frequent
// misspellings of "disallow" and "user-agent" are read as meant (as
// Google does): reading them makes a file stricter, never looser.
var records = map[string]record{
	"user-agent": recUserAgent, "useragent": recUserAgent, "user agent": recUserAgent,
	"allow":    recAllow,
	"disallow": recDisallow, "dissallow": recDisallow, "dissalow": recDisallow, "disalow": recDisallow,
	"diasllow": recDisallow, "disallaw": recDisallow,
	"crawl-delay": recCrawlDelay,
	"sitemap":     recSitemap, "site-map": recSitemap,
}

// quietRecords are records other crawlers define that we have no use
// for: skipped without a mention in the crawl log.
var quietRecords = map[string]bool{
	"host": true, "clean-param": true, "request-rate": true, "visit-time": true, "noindex": true,
	"content-signal": true, "content-usage": true,
}

// maxCrawlDelay bounds a Crawl-delay before it becomes a Duration (the
// fetch stage caps it far lower).
const maxCrawlDelay = 24 * time.Hour

// parse reads a robots.txt as RFC 9309 says, never failing: a line it
// cannot understand is ignored (and listed), the rest applies.
//
// Groups: one or more User-agent lines (blank lines and other records
// between them allowed) followed by rules; a User-agent line after a
// rule starts a new group. Lines ending in LF, CRLF or CR; a UTF-8 byte
// order mark (or the start of one) is skipped; "#" starts a comment
// anywhere in a line.
func parse(body []byte) *file {
	s := string(body)
	for _, bom := range []string{"\xEF\xBB\xBF", "\xEF\xBB", "\xEF"} {
		if strings.HasPrefix(s, bom) {
			s = s[len(bom):]
			break
		}
	}
	f := &file{}
	cur := -1         // index of the current group
	inAgents := false // the last group line was a User-agent: another one joins the group
	ignore := func(n int, raw, why string) {
		f.ignored = append(f.ignored, ignored{IgnoredLine{n, clip(strings.TrimSpace(raw)), why}, cur})
	}
	for n := 1; s != ""; n++ {
		var raw string
		raw, s = cutLine(s)
		line := raw
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		key, value, ok := splitLine(line)
		if !ok {
			ignore(n, raw, `not a "name: value" line`)
			continue
		}
		lkey := strings.ToLower(key)
		switch rec := records[lkey]; rec {
		case recUserAgent:
			if cur < 0 || !inAgents {
				f.groups = append(f.groups, &group{})
				cur = len(f.groups) - 1
			}
			g := f.groups[cur]
			g.agents = append(g.agents, agentToken(value))
			inAgents = true
		case recAllow, recDisallow:
			if cur < 0 {
				ignore(n, raw, "rule before any user-agent line")
				continue
			}
			allow := rec == recAllow
			if value != "" && value[0] != '/' && value[0] != '*' {
				if allow {
					// Read literally it matches nothing; read as from the
					// root it would allow what the file may not mean to.
					ignore(n, raw, `allow pattern does not start with "/" or "*"`)
					continue
				}
				value = "/" + value // the stricter reading of a disallow
			}
			inAgents = false
			if value == "" {
				continue // an empty pattern matches nothing
			}
			g := f.groups[cur]
			g.rules = append(g.rules, Rule{Allow: allow, Pattern: value, Line: n})
		case recCrawlDelay:
			if cur < 0 {
				ignore(n, raw, "crawl-delay before any user-agent line")
				continue
			}
			secs, err := strconv.ParseFloat(value, 64)
			if err != nil || secs < 0 || math.IsNaN(secs) || math.IsInf(secs, 0) {
				ignore(n, raw, "crawl-delay is not a number of seconds")
				continue
			}
			d := maxCrawlDelay
			if secs < maxCrawlDelay.Seconds() {
				d = time.Duration(secs * float64(time.Second))
			}
			g := f.groups[cur]
			g.crawlDelay = max(g.crawlDelay, d)
		case recSitemap:
			if value != "" {
				f.sitemaps = append(f.sitemaps, strings.Clone(value))
			}
		default:
			if !quietRecords[lkey] {
				ignore(n, raw, fmt.Sprintf("unknown record %q", clip(lkey)))
			}
		}
	}
	return f
}

// cutLine cuts the first line off s; lines end in LF, CRLF or CR.
func cutLine(s string) (line, rest string) {
	i := strings.IndexAny(s, "\r\n")
	if i < 0 {
		return s, ""
	}
	if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
		return s[:i], s[i+2:]
	}
	return s[:i], s[i+1:]
}

// splitLine splits "name: value". A missing colon is forgiven when the
// name is one we read and one value follows ("disallow /"), as Google
// does: the meaning is plain.
func splitLine(line string) (key, value string, ok bool) {
	if k, v, found := strings.Cut(line, ":"); found {
		k = strings.TrimSpace(k)
		return k, strings.TrimSpace(v), k != ""
	}
	f := strings.Fields(line)
	if len(f) == 2 && records[strings.ToLower(f[0])] != recOther {
		return f[0], f[1], true
	}
	return "", "", false
}

// agentToken reads a User-agent value: "*" (also when followed by
// blanks and more), else the product token at its start (letters,
// digits, "-" and "_": "FooBot/2.1" and "FooBot Images" are "FooBot").
// A value with no token ("", "ツ") names an agent no crawler is: its
// group applies to no one, but still takes the rules that follow it.
func agentToken(v string) string {
	if v == "*" || strings.HasPrefix(v, "*") && len(v) > 1 && (v[1] == ' ' || v[1] == '\t') {
		return "*"
	}
	i := 0
	for i < len(v) && isTokenByte(v[i]) {
		i++
	}
	if i == 0 {
		return ""
	}
	return strings.Clone(v[:i])
}

func isTokenByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// clip cuts s to 80 bytes (at a UTF-8 boundary) for messages.
func clip(s string) string {
	const n = 80
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
