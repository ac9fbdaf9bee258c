package robots

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/web/urlnorm"
)

// The parse cases of Google's robots_test.cc that ask no verdict (line
// endings, byte order marks, Sitemap lines), in our own words: every
// line ending is a line ending, a BOM (or its start) is skipped.
func TestParseLines(t *testing.T) {
	const unix = "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n"
	tests := []struct {
		name    string
		body    string
		rules   int   // rules read, over all groups
		lines   []int // their line numbers
		ignored []int // lines ignored
	}{
		{"LF", unix, 2, []int{2, 6}, nil},
		{"CRLF", strings.ReplaceAll(unix, "\n", "\r\n"), 2, []int{2, 6}, nil},
		{"CR", strings.ReplaceAll(unix, "\n", "\r"), 2, []int{2, 6}, nil},
		{"no final newline", strings.TrimSuffix(unix, "\n"), 2, []int{2, 6}, nil},
		{"mixed", "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /", 2, []int{2, 6}, nil},
		{"full BOM", "\xEF\xBB\xBFUser-Agent: foo\nAllow: /AnyValue\n", 1, []int{2}, nil},
		{"two bytes of a BOM", "\xEF\xBBUser-Agent: foo\nAllow: /AnyValue\n", 1, []int{2}, nil},
		{"one byte of a BOM", "\xEFUser-Agent: foo\nAllow: /AnyValue\n", 1, []int{2}, nil},
		{"broken BOM spoils its line", "\xEF\x11\xBFUser-Agent: foo\nAllow: /AnyValue\n", 0, nil, []int{1, 2}},
		{"BOM mid-file spoils its line", "User-Agent: foo\n\xEF\xBB\xBFAllow: /AnyValue\n", 0, nil, []int{2}},
		{"comments anywhere", "# c\nUser-agent: a # c\nDisallow: /x#y\n", 1, []int{3}, nil},
		{"missing colon forgiven", "user-agent FooBot\ndisallow /\n", 1, []int{2}, nil},
		{"typo of disallow read as meant", "User-agent: a\nDissallow: /x\n", 1, []int{2}, nil},
		{"no name", ": x\nUser-agent: a\n", 0, nil, []int{1}},
		{"not a line", "hello world again\nUser-agent: a\n", 0, nil, []int{1}},
		{"unknown record in our group", "User-agent: *\nFoo: bar\n", 0, nil, []int{2}},
		{"known foreign record is quiet", "User-agent: *\nHost: example.org\nClean-param: ref\n", 0, nil, nil},
		{"allow pattern without slash", "User-agent: *\nAllow: x\n", 0, nil, []int{2}},
		{"disallow pattern without slash read from the root", "User-agent: *\nDisallow: x\n", 1, []int{2}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := parse([]byte(tt.body))
			var lines []int
			for _, g := range f.groups {
				for _, r := range g.rules {
					lines = append(lines, r.Line)
				}
			}
			if len(lines) != tt.rules || !slices.Equal(lines, tt.lines) {
				t.Errorf("rules on lines %v, want %v", lines, tt.lines)
			}
			var ign []int
			for _, l := range f.ignored {
				ign = append(ign, l.Line)
			}
			if !slices.Equal(ign, tt.ignored) {
				t.Errorf("ignored lines %v, want %v", ign, tt.ignored)
			}
		})
	}
}

func TestSitemapsAnywhere(t *testing.T) {
	body := "Sitemap: http://foo.bar/a.xml\nUser-Agent: foo\nAllow: /some/path\nUser-Agent: bar\nsitemap: http://foo.bar/b.xml\n"
	r := FromResponse(200, []byte(body), "bar/1", time.Unix(0, 0), time.Hour, time.Minute)
	if want := []string{"http://foo.bar/a.xml", "http://foo.bar/b.xml"}; !slices.Equal(r.Sitemaps, want) {
		t.Errorf("Sitemaps = %v, want %v", r.Sitemaps, want)
	}
}

// Verdicts say which group applied ("*" named as "*"), which rule
// decided and on what line, and which lines were ignored.
func TestVerdictReason(t *testing.T) {
	body := "Disallow: /orphan\n" + // 1: outside any group
		"User-agent: *\n" + // 2
		"Crawl-delay: x\n" + // 3
		"Disallow: /private/\n" + // 4
		"Allow: /private/ok$\n" + // 5
		"User-agent: otherbot\n" + // 6
		"Unknown: ignored but not ours\n" + // 7
		"Disallow: /\n"
	r := rulesFor(body, "serverless-crawler")
	tests := []struct {
		path    string
		allowed bool
		rule    int // deciding rule's line, 0 for none
		reason  string
	}{
		{"/private/a", false, 4, `robots.txt group "*", rule Disallow: /private/ (line 4); robots.txt ignored line 1 "Disallow: /orphan" (rule before any user-agent line), line 3 "Crawl-delay: x" (crawl-delay is not a number of seconds)`},
		{"/private/ok", true, 5, `robots.txt group "*", rule Allow: /private/ok$ (line 5); robots.txt ignored line 1`},
		{"/orphan", true, 0, `robots.txt group "*", no rule matches; robots.txt ignored line 1`},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			v := r.Verdict(tt.path)
			line := 0
			if v.Rule != nil {
				line = v.Rule.Line
			}
			if v.Allowed != tt.allowed || line != tt.rule || v.Group != "*" {
				t.Errorf("Verdict = allowed %v, rule line %d, group %q; want %v, %d, \"*\"", v.Allowed, line, v.Group, tt.allowed, tt.rule)
			}
			if !strings.HasPrefix(v.String(), tt.reason) {
				t.Errorf("reason %q\nwant it to start %q", v.String(), tt.reason)
			}
		})
	}
	if r.IgnoredCount != 2 {
		t.Errorf("IgnoredCount = %d, want 2 (line 7 is otherbot's business)", r.IgnoredCount)
	}
	if none := rulesFor("User-agent: otherbot\nDisallow: /\n", "serverless-crawler").Verdict("/x"); !none.Allowed || none.Group != "" ||
		none.String() != "robots.txt has no group for us nor for *" {
		t.Errorf("no group: %+v %q", none, none)
	}
}

// Groups: exact product tokens, case-insensitive; several user-agent
// lines per group; groups for one agent merged; "*" only when no group
// names us; Crawl-delay of the group that applies (the largest when
// merged).
func TestGroups(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		path    string
		allowed bool
		delay   time.Duration
	}{
		{"prefix of our token is not us", "User-agent: serverless\nDisallow: /\n", "/x", true, 0},
		{"our token as a prefix is not us", "User-agent: serverless-crawler-pro\nDisallow: /\n", "/x", true, 0},
		{"case-insensitive", "User-agent: Serverless-Crawler\nDisallow: /\n", "/x", false, 0},
		{"version after the token", "User-agent: serverless-crawler/2.0\nDisallow: /\n", "/x", false, 0},
		{"several agents, one group", "User-agent: a\nUser-agent: serverless-crawler\nDisallow: /x\n", "/x", false, 0},
		{"unknown line does not split agents", "User-agent: serverless-crawler\nFoo: bar\nUser-agent: a\nDisallow: /x\n", "/x", false, 0},
		{"crawl-delay does not split agents", "User-agent: serverless-crawler\nCrawl-delay: 3\nUser-agent: a\nDisallow: /x\n", "/x", false, 3 * time.Second},
		{"groups merged", "User-agent: serverless-crawler\nDisallow: /a\nCrawl-delay: 1\nUser-agent: b\nAllow: /x\nUser-agent: serverless-crawler\nDisallow: /x\nCrawl-delay: 2.5\n", "/x", false, 2500 * time.Millisecond},
		{"our empty group beats *", "User-agent: *\nDisallow: /\nUser-agent: serverless-crawler\n", "/x", true, 0},
		{"* groups merged", "User-agent: *\nDisallow: /a\nUser-agent: b\nDisallow: /\nUser-agent: *\nDisallow: /x\n", "/x", false, 0},
		{"unreadable agent takes the rules after it", "User-agent: serverless-crawler\nDisallow: /x\nUser-agent: ツ\nAllow: /x\n", "/x", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromResponse(200, []byte(tt.body), ua, time.Unix(0, 0), time.Hour, time.Minute)
			if v := r.Verdict(tt.path); v.Allowed != tt.allowed {
				t.Errorf("%s: allowed %v, want %v (%s)", tt.path, v.Allowed, tt.allowed, v)
			}
			if r.CrawlDelay != tt.delay {
				t.Errorf("CrawlDelay = %v, want %v", r.CrawlDelay, tt.delay)
			}
		})
	}
}

// Paths and patterns compare with percent-encoding normalized on both
// sides, and a URL as shared/web/urlnorm writes it (what the fetch stage
// asks about) meets the same rules as the URL as written.
func TestPercentEncoding(t *testing.T) {
	tests := []struct {
		name    string
		rule    string
		url     string
		allowed bool
	}{
		{"raw UTF-8 rule, escaped URL", "/ツ", "http://h/%E3%83%84", false},
		{"escaped rule, raw UTF-8 URL", "/%E3%83%84", "http://h/ツ", false},
		{"hex case", "/%aa", "http://h/%AA", false},
		{"hex case the other way", "/%AA", "http://h/%aa", false},
		{"escaped unreserved in rule", "/%7Ehome", "http://h/~home", false},
		{"escaped unreserved in URL", "/~home", "http://h/%7Ehome", false},
		{"escaped letters", "/foo/%62%61%7A", "http://h/foo/baz", false},
		{"escaped slash is not a slash", "/a%2Fb", "http://h/a/b", true},
		{"query", "/*?sort=", "http://h/list?sort=asc", false},
		{"anchored at the start", "/foo/bar$", "http://h/x/foo/bar", true},
		{"end anchor", "/foo/bar$", "http://h/foo/bar", false},
		{"end anchor, longer path", "/foo/bar$", "http://h/foo/bar/", true},
		{"stray percent", "/100%", "http://h/100%", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rulesFor("User-agent: *\nDisallow: "+tt.rule+"\n", "x")
			n, err := urlnorm.Normalize(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			nu, err := url.Parse(n.URL)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{pathOf(tt.url), nu.RequestURI()} {
				if v := r.Verdict(p); v.Allowed != tt.allowed {
					t.Errorf("%s: allowed %v, want %v (%s)", p, v.Allowed, tt.allowed, v)
				}
			}
		})
	}
}

// The longest pattern decides, measured in octets of the pattern (not
// of a regexp); Allow wins a tie.
func TestLongestMatch(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		path    string
		allowed bool
	}{
		{"tie goes to allow", "Disallow: /a\nAllow: /a\n", "/a", true},
		{"tie goes to allow, allow first", "Allow: /a\nDisallow: /a\n", "/a", true},
		{"wildcards count as written", "Allow: /a*b\nDisallow: /a/b\n", "/a/b", true},
		{"longer disallow", "Allow: /a\nDisallow: /a/\n", "/a/b", false},
		{"escaped pattern normalized before measuring", "Allow: /%7Ea\nDisallow: /~a\n", "/~a", true},
		{"star alone matches all", "Disallow: *\n", "/anything", false},
		{"a bare $ disallow is read from the root, as /$", "Disallow: $\n", "/", false},
		{"a bare $ allow is ignored", "Disallow: /\nAllow: $\n", "/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := rulesFor("User-agent: *\n"+tt.body, "x")
			if v := r.Verdict(tt.path); v.Allowed != tt.allowed {
				t.Errorf("%s: allowed %v, want %v (%s)", tt.path, v.Allowed, tt.allowed, v)
			}
		})
	}
}
