package crawl

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Site is seed 001's site object: the unit a crawl operator manages.
// Its root URLs say which URLs belong to it, its filters which of those
// are crawled, and its state, limits, delay, priority and recrawl period
// how. The fields are the seed's (sites, sites_urls, sites_filters); the
// SQLite store keeps them column for column. Times are Unix seconds.
type Site struct {
	ID      string // seed Id: at most MaxSiteIDLength characters
	Roots   []string
	Filters []SiteFilter

	State    SiteState
	Priority int // higher first, between sites
	// The limits; 0 means unlimited, as in the seed.
	MaxURLs         int64 // URLs collected (candidates of the site)
	MaxResources    int64 // resources fetched and stored
	MaxErrors       int64 // crawl errors; reaching it suspends the site
	MaxResourceSize int64 // bytes of one body; 0: the crawl's default
	MaxURLsFromPage int64 // links followed from one page; 0: the crawl's default
	RequestDelay    int64 // ms between two requests to one host; 0: the crawl's default
	HTTPTimeout     int64 // ms for one request; 0: the crawl's default
	RecrawlPeriod   int64 // minutes; 0: not recrawled periodically
	RecrawlDate     *int64
	URLType         URLType

	// Counters, kept by the store.
	Resources     int64 // fetched with a body stored
	Contents      int64 // summarized (a document or file summary)
	CollectedURLs int64
	NewURLs       int64 // collected and never crawled
	Errors        int64
	Size          int64 // body bytes stored
	AVGSpeed      float64
	AVGSpeedCount int64
	Iterations    int64

	// StateReason says why the site is in its state when the crawler put
	// it there (reaching MaxErrors); kept in sites_properties.
	StateReason string

	CDate, UDate, TcDate int64
}

// SiteState is seed 001 State.
type SiteState int

// The site states (seed 001: 1 Active, 2 Disabled, 3 Suspended).
const (
	// SiteActive: crawled as usual.
	SiteActive SiteState = 1
	// SiteDisabled: nothing of it is crawled; its URLs wait, held, until
	// it is enabled.
	SiteDisabled SiteState = 2
	// SiteSuspended: no periodic recrawl and no discovered link crawled;
	// URLs a user enqueues explicitly (seeds, forced) still are.
	SiteSuspended SiteState = 3
)

var siteStates = newNames("site state", []SiteState{SiteActive, SiteDisabled, SiteSuspended}, "active", "disabled", "suspended")

func (s SiteState) String() string { return siteStates.String(s) }

// Holds reports whether a site in this state holds a URL of its, one
// found in a page (discovered) or one a user enqueued: every URL while
// it is disabled, those found in pages while it is suspended.
func (s SiteState) Holds(discovered bool) bool {
	return s == SiteDisabled || s == SiteSuspended && discovered
}

// ParseSiteState reads a state's name.
func ParseSiteState(name string) (SiteState, error) { return siteStates.parse(name) }

// URLType is seed 001 URLType: what the crawler does with the links of
// the site's pages.
type URLType int

// The URL types (seed 001: 0 Regular, 1 Single, 3 collect URLs for all).
const (
	// URLRegular follows the links that stay within the site.
	URLRegular URLType = 0
	// URLSingle follows no links: only the URLs enqueued are crawled.
	URLSingle URLType = 1
	// URLCollectAll also follows links that leave every site, one hop:
	// the pages they lead to are crawled with the crawl's defaults.
	URLCollectAll URLType = 3
)

var urlTypes = newNames("url type", []URLType{URLRegular, URLSingle, URLCollectAll}, "regular", "single", "collect-all")

func (t URLType) String() string { return urlTypes.String(t) }

// ParseURLType reads a URL type's name.
func ParseURLType(name string) (URLType, error) { return urlTypes.parse(name) }

// SiteFilter is one row of seed 001 sites_filters: a regular expression
// (Go's RE2 syntax) matched against the normalized URL.
type SiteFilter struct {
	Pattern string     `json:"pattern"`
	Type    FilterType `json:"type"`
	Mode    FilterMode `json:"mode"`
}

// FilterType is sites_filters Type: 0 include, 1 exclude.
type FilterType int

// The filter types.
const (
	FilterInclude FilterType = 0
	FilterExclude FilterType = 1
)

// FilterMode is sites_filters Mode: 0 the site's URLs, 1 URLs of media
// content. The crawler collects no media URLs (it follows links, not
// images or video), so a media filter is kept but decides nothing.
type FilterMode int

// The filter modes.
const (
	FilterURLs  FilterMode = 0
	FilterMedia FilterMode = 1
)

var (
	filterTypes = newNames("filter type", []FilterType{FilterInclude, FilterExclude}, "include", "exclude")
	filterModes = newNames("filter mode", []FilterMode{FilterURLs, FilterMedia}, "urls", "media")
)

// MarshalText writes a filter type by name.
func (t FilterType) MarshalText() ([]byte, error) { return filterTypes.marshal(t) }

// UnmarshalText reads a filter type's name.
func (t *FilterType) UnmarshalText(b []byte) (err error) {
	*t, err = filterTypes.parse(string(b))
	return err
}

// MarshalText writes a filter mode by name.
func (m FilterMode) MarshalText() ([]byte, error) { return filterModes.marshal(m) }

// UnmarshalText reads a filter mode's name ("" is urls).
func (m *FilterMode) UnmarshalText(b []byte) (err error) {
	if len(b) == 0 {
		*m = FilterURLs
		return nil
	}
	*m, err = filterModes.parse(string(b))
	return err
}

// names are the names of an enumeration's values (seed 001 keeps the
// numbers; events and the CLI use the names).
type names[T ~int] struct {
	what   string
	values []T
	names  []string
}

func newNames[T ~int](what string, values []T, n ...string) names[T] {
	return names[T]{what: what, values: values, names: n}
}

func (n names[T]) lookup(v T) (string, bool) {
	for i, x := range n.values {
		if x == v {
			return n.names[i], true
		}
	}
	return "", false
}

func (n names[T]) valid(v T) bool { _, ok := n.lookup(v); return ok }

// String is v's name, or what and its number.
func (n names[T]) String(v T) string {
	if name, ok := n.lookup(v); ok {
		return name
	}
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(n.what, " ", "-"), int(v))
}

func (n names[T]) marshal(v T) ([]byte, error) {
	if name, ok := n.lookup(v); ok {
		return []byte(name), nil
	}
	return nil, fmt.Errorf("%s %d: want %s", n.what, int(v), n.list(true))
}

func (n names[T]) parse(s string) (T, error) {
	for i, name := range n.names {
		if name == s {
			return n.values[i], nil
		}
	}
	return 0, fmt.Errorf("%s %q: want %s", n.what, Truncate(s, 64), n.list(false))
}

// list is the names ("a, b or c"), with their numbers if numbers.
func (n names[T]) list(numbers bool) string {
	parts := make([]string, len(n.names))
	for i, name := range n.names {
		parts[i] = name
		if numbers {
			parts[i] = fmt.Sprintf("%d (%s)", int(n.values[i]), name)
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// The bounds of a site's fields (docs/limits.md).
const (
	MaxSiteIDLength      = 32      // seed 001: Id is a string of at most 32
	MaxSiteRoots         = 100     // root URLs of one site
	MaxSiteFilters       = 100     // filters of one site
	MaxFilterPattern     = 4 << 10 // seed 001: Pattern is a string of 4K
	MaxSiteLimit         = 1 << 40 // MaxURLs, MaxResources, MaxErrors
	MaxRecrawlPeriodMins = 366 * 24 * 60
)

var siteIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate checks a site's fields against their bounds, with a message
// naming the field and the bound.
func (s Site) Validate() error {
	if s.ID == "" || len(s.ID) > MaxSiteIDLength || !siteIDPattern.MatchString(s.ID) {
		return fmt.Errorf("site id %q: want 1 to %d letters, digits, '.', '_' or '-', starting with a letter or digit", Truncate(s.ID, 64), MaxSiteIDLength)
	}
	if err := s.validateValues(); err != nil {
		return fmt.Errorf("site %s: %w", s.ID, err)
	}
	return nil
}

// validateValues checks what Validate does but the ID, saying what is
// wrong without naming the site.
func (s Site) validateValues() error {
	if len(s.Roots) == 0 {
		return errors.New("no root URL")
	}
	if len(s.Roots) > MaxSiteRoots {
		return fmt.Errorf("%d root URLs, more than the %d a site may have", len(s.Roots), MaxSiteRoots)
	}
	for _, r := range s.Roots {
		if len(r) > MaxKeptURLLength {
			return fmt.Errorf("a root URL is %d bytes long, more than the %d it may have", len(r), MaxKeptURLLength)
		}
	}
	if len(s.Filters) > MaxSiteFilters {
		return fmt.Errorf("%d filters, more than the %d a site may have", len(s.Filters), MaxSiteFilters)
	}
	for _, f := range s.Filters {
		if err := f.Validate(); err != nil {
			return err
		}
	}
	if !siteStates.valid(s.State) {
		return fmt.Errorf("site state %d: want %s", int(s.State), siteStates.list(true))
	}
	if !urlTypes.valid(s.URLType) {
		return fmt.Errorf("url type %d: want %s", int(s.URLType), urlTypes.list(true))
	}
	for _, b := range []struct {
		name     string
		v, least int64
		most     int64
	}{
		{"priority", int64(s.Priority), -MaxPriority, MaxPriority},
		{"max_urls", s.MaxURLs, 0, MaxSiteLimit},
		{"max_resources", s.MaxResources, 0, MaxSiteLimit},
		{"max_errors", s.MaxErrors, 0, MaxSiteLimit},
		{"max_resource_size", s.MaxResourceSize, 0, MaxResourceSizeLimit},
		{"max_urls_from_page", s.MaxURLsFromPage, 0, MaxURLsFromPageLimit},
		{"request_delay_ms", s.RequestDelay, 0, MaxDelay.Milliseconds()},
		{"http_timeout_ms", s.HTTPTimeout, 0, MaxTimeout.Milliseconds()},
		{"recrawl_period_min", s.RecrawlPeriod, 0, MaxRecrawlPeriodMins},
	} {
		if b.v < b.least || b.v > b.most {
			return fmt.Errorf("%s must be from %d to %d, got %d", b.name, b.least, b.most, b.v)
		}
	}
	return nil
}

// CompileFilter compiles a URL filter's pattern (a site's, or a run's
// --include and --exclude): a regular expression of 1 to
// MaxFilterPattern bytes. An empty one is refused: it matches every URL,
// which no one means.
func CompileFilter(pattern string) (*regexp.Regexp, error) {
	if pattern == "" || len(pattern) > MaxFilterPattern {
		return nil, fmt.Errorf("filter pattern of %d bytes: want 1 to %d", len(pattern), MaxFilterPattern)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("filter pattern %q: %w", Truncate(pattern, 100), err)
	}
	return re, nil
}

// FiltersKey is a short key of a site's filters, the same for the same
// list in the same order: what tells a run the filters changed.
func FiltersKey(fs []SiteFilter) string {
	h := sha256.New()
	for _, f := range fs {
		fmt.Fprintf(h, "%d %d %d:%s\n", f.Type, f.Mode, len(f.Pattern), f.Pattern)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Validate checks a filter: a pattern that compiles, within its bound.
func (f SiteFilter) Validate() error {
	if _, err := CompileFilter(f.Pattern); err != nil {
		return err
	}
	if !filterTypes.valid(f.Type) {
		return fmt.Errorf("filter type %d: want %s", int(f.Type), filterTypes.list(true))
	}
	if !filterModes.valid(f.Mode) {
		return fmt.Errorf("filter mode %d: want %s", int(f.Mode), filterModes.list(true))
	}
	return nil
}

// RootPrefix is the part of a normalized root URL that the URLs of its
// site begin with: up to the last '/' of its path ("https://h/docs/"
// for "https://h/docs/index.html"; "https://h/" for "https://h/").
func RootPrefix(root string) string {
	rest := root
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return root + "/"
	}
	base := len(root) - len(rest)
	path := rest[slash:]
	if q := strings.IndexAny(path, "?#"); q >= 0 {
		path = path[:q]
	}
	return root[:base+slash] + path[:strings.LastIndexByte(path, '/')+1]
}

// Sites finds the site a normalized URL belongs to: the site whose root
// prefix is the longest that the URL begins with. The sites' filters
// are compiled once.
type Sites struct {
	byPrefix []sitePrefix // longest first
	sites    map[string]*CompiledSite
}

type sitePrefix struct {
	prefix string
	site   *CompiledSite
}

// CompiledSite is a site with its filters compiled.
type CompiledSite struct {
	Site
	include, exclude []*regexp.Regexp
}

// NewSites compiles sites whose roots are normalized URLs. A filter that
// does not compile is an error (Validate refuses it before it is stored).
func NewSites(sites []Site) (*Sites, error) {
	out := &Sites{sites: map[string]*CompiledSite{}}
	for _, s := range sites {
		cs := &CompiledSite{Site: s}
		for _, f := range s.Filters {
			if f.Mode != FilterURLs {
				continue
			}
			re, err := regexp.Compile(f.Pattern)
			if err != nil {
				return nil, fmt.Errorf("site %s: filter %q: %w", s.ID, f.Pattern, err)
			}
			if f.Type == FilterInclude {
				cs.include = append(cs.include, re)
			} else {
				cs.exclude = append(cs.exclude, re)
			}
		}
		out.sites[s.ID] = cs
		for _, r := range s.Roots {
			out.byPrefix = append(out.byPrefix, sitePrefix{RootPrefix(r), cs})
		}
	}
	// Longest prefix first; equal prefixes by site ID, so that the choice
	// does not depend on the order the sites were read in.
	sortPrefixes(out.byPrefix)
	return out, nil
}

func sortPrefixes(p []sitePrefix) {
	slices.SortFunc(p, func(a, b sitePrefix) int {
		return cmp.Or(cmp.Compare(len(b.prefix), len(a.prefix)), cmp.Compare(a.site.ID, b.site.ID))
	})
}

// Of returns the site a normalized URL belongs to, or nil.
func (ss *Sites) Of(url string) *CompiledSite {
	if ss == nil {
		return nil
	}
	for _, p := range ss.byPrefix {
		if strings.HasPrefix(url, p.prefix) {
			return p.site
		}
	}
	return nil
}

// ByID returns a site by its ID, or nil.
func (ss *Sites) ByID(id string) *CompiledSite {
	if ss == nil {
		return nil
	}
	return ss.sites[id]
}

// Len is how many sites there are.
func (ss *Sites) Len() int {
	if ss == nil {
		return 0
	}
	return len(ss.sites)
}

// Admits reports whether the site's URL filters let a URL of the site
// through: it matches an include filter (if there are any) and no
// exclude filter.
func (cs *CompiledSite) Admits(url string) bool {
	if len(cs.include) > 0 && !anyMatch(cs.include, url) {
		return false
	}
	return !anyMatch(cs.exclude, url)
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
