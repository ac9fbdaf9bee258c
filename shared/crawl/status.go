package crawl

import "time"

// URLStatus is what `crawler status` reports for a URL: its candidate
// state in seed 004's words and its latest entity generation.
type URLStatus struct {
	URL            string         `json:"url"`
	State          string         `json:"state"`  // seed 004 state: pending, success, warning, error
	Status         string         `json:"status"` // seed 004 status: complete, redir, ...
	Frontier       CandidateState `json:"frontier_state"`
	ExitCode       *ExitCode      `json:"exit_code,omitempty"`
	ExitName       string         `json:"exit_name,omitempty"`
	LastCrawl      *int64         `json:"last_crawl_time_unix_utc,omitempty"`
	LastCrawlAt    string         `json:"last_crawl_time,omitempty"` // RFC 3339, UTC
	LastContentful *int64         `json:"last_contentful_crawl_time_unix_utc,omitempty"`
	LastContentAt  string         `json:"last_contentful_crawl_time,omitempty"`
	HTTPStatus     *int           `json:"http_status,omitempty"` // of the last crawl's last request
	ETag           *string        `json:"last_contentful_http_etag,omitempty"`
	Hops           int            `json:"hops"`
	NRedirs        int            `json:"n-redirs"`
	OrigURL        string         `json:"orig-url,omitempty"`
	Parent         string         `json:"parent,omitempty"`
	Site           string         `json:"site,omitempty"` // the site it belongs to (seed 001)
	ExactDuplicate bool           `json:"exact-duplicate,omitempty"`
	Crawls         int            `json:"crawls"` // crawls that sent a request (not robots.txt refusals)
	// DueAt is when the URL is due (frontier_state due or held): a
	// recrawl's date, or when a host that asked to wait (Retry-After) or
	// whose robots.txt was unavailable is asked again.
	DueAt      *int64          `json:"due_unix_utc,omitempty"`
	DueAtStr   string          `json:"due,omitempty"` // RFC 3339, UTC
	Message    *string         `json:"message,omitempty"`
	Generation *GenerationView `json:"generation,omitempty"`
}

// GenerationView is an entity generation with its description, for display.
type GenerationView struct {
	UUID            string  `json:"uuid"`
	FirstSeen       int64   `json:"first_seen_unix_utc"`
	FirstSeenAt     string  `json:"first_seen"` // RFC 3339, UTC
	LastSeen        int64   `json:"last_seen_unix_utc"`
	LastSeenAt      string  `json:"last_seen"`
	ConfirmedEnd    *int64  `json:"confirmed_end_unix_utc,omitempty"`
	ConfirmedEndAt  string  `json:"confirmed_end,omitempty"`
	MarkedDuplicate bool    `json:"marked_duplicate"`
	DuplicateOf     string  `json:"duplicate_of,omitempty"`
	Generations     int     `json:"generations"`
	Title           *string `json:"title,omitempty"`
	Headline        *string `json:"primary_headline,omitempty"`
	Description     *string `json:"description,omitempty"`
	Language        *string `json:"primary_language,omitempty"`
	MIMEType        *string `json:"mimetype,omitempty"`
	FileSize        *int64  `json:"file_size,omitempty"`
	RedirectTo      *string `json:"redirect_to,omitempty"`
	Links           int     `json:"links"`
}

// NewURLStatus is what a candidate says of its URL's status, as both
// homes' Status begin it: the store adds its crawls, its last message
// and HTTP status, and its generation.
func NewURLStatus(c Candidate) URLStatus {
	s := URLStatus{
		URL: c.URL, Frontier: c.State, ExitCode: c.LastCrawlExitCode, LastCrawl: c.LastCrawlTime,
		LastContentful: c.LastContentfulCrawlTime, ETag: c.LastContentfulETag, Hops: c.Hops,
		NRedirs: c.NRedirs, OrigURL: c.OrigURL, Parent: c.Parent, Site: c.SiteID, Status: StatusNone,
	}
	if c.LastCrawlExitCode != nil {
		s.ExitName = c.LastCrawlExitCode.String()
		s.Status = c.LastCrawlExitCode.Status()
	}
	if c.State == StateDue || c.State == StateHeld {
		due := c.DueAt
		s.DueAt = &due
	}
	return s
}

// WithTimes returns s with its times also written as RFC 3339 (UTC),
// beside the Unix seconds, for a reader.
func (s URLStatus) WithTimes() URLStatus {
	s.LastCrawlAt, s.LastContentAt, s.DueAtStr = rfc3339(s.LastCrawl), rfc3339(s.LastContentful), rfc3339(s.DueAt)
	if g := s.Generation; g != nil {
		v := *g
		v.FirstSeenAt, v.LastSeenAt, v.ConfirmedEndAt = rfc3339(&v.FirstSeen), rfc3339(&v.LastSeen), rfc3339(v.ConfirmedEnd)
		s.Generation = &v
	}
	return s
}

func rfc3339(unix *int64) string {
	if unix == nil {
		return ""
	}
	return time.Unix(*unix, 0).UTC().Format(time.RFC3339)
}

// SearchHit is one result of a full-text search.
type SearchHit struct {
	URL     string  `json:"url"`
	Title   string  `json:"title"`
	Snippet string  `json:"snippet"`
	Rank    float64 `json:"rank"`
}

// SeedState maps a candidate and its status word to seed 004's state:
// pending while the URL is in the pipeline (released, due now, held
// while its site is disabled or suspended, never
// crawled yet, or due again to retry a crawl that did not succeed), then
// success, warning or error. A URL whose last crawl succeeded and that
// waits for its recrawl (due after RecrawlPeriod) is not pending: it
// shows how that crawl went.
func SeedState(c Candidate, status string, now int64) string {
	success := status == StatusComplete || status == StatusUnchanged || status == StatusRedir
	awaitsRecrawl := c.LastCrawlTime != nil && c.DueAt > now && (success || status == StatusDuplicate)
	switch {
	case c.State == StateQueued, c.State == StateHeld, c.State == StateDue && !awaitsRecrawl:
		return "pending"
	case success:
		return "success"
	case status == StatusError:
		return "error"
	default:
		return "warning"
	}
}
