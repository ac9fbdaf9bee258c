package crawl

// The seed 000 crawler database, one type per table. Times are Unix
// seconds in UTC (the seeds' *_unix_utc); nil pointers are the seeds'
// documented Nulls.

// URL is a row of the url table: a normalized URL and its id.
type URL struct {
	ID  int64
	URL string
}

// MIMEType is a row of the mimetype table.
type MIMEType struct {
	ID       int64
	MIMEType string
}

// Agent is a crawling agent: one `crawler crawl` run, or one Lambda
// execution environment.
type Agent struct {
	ID            int64
	TimeStarted   int64
	TimeFinished  *int64 // nil: running, or terminated by force
	UUID          string
	Name          string
	HTTPUserAgent *string
}

// CrawlLog is the outcome of one crawl of one URL.
type CrawlLog struct {
	ID          int64     `json:"-"`
	AgentUUID   string    `json:"agent_uuid"` // the agent table's agent_uuid; the store maps it to agent_id
	URL         string    `json:"url"`
	CrawlType   CrawlType `json:"crawl_type"`
	CrawlUUID   string    `json:"crawl_uuid"`
	TimeStarted int64     `json:"time_started_unix_utc"`
	TimeTakenMS int64     `json:"time_taken_ms"`
	ExitCode    ExitCode  `json:"exit_code"`
	Message     *string   `json:"message,omitempty"`
}

// Request is one network request of a crawl.
type Request struct {
	ID                 int64    `json:"-"`
	URL                string   `json:"url"`
	TimeSent           int64    `json:"time_sent_unix_utc"`
	DurationMS         *int64   `json:"request_duration_ms,omitempty"`
	RobotsTxtApproved  bool     `json:"robotstxt_approved"`
	ExitCode           ExitCode `json:"exit_code"`
	ServerLastModified *int64   `json:"server_last_modified_unix_utc,omitempty"`
	HTTPStatusCode     *int     `json:"http_status_code,omitempty"`
	HTTPETag           *string  `json:"http_etag,omitempty"`
}

// File is the metadata of a fetched body.
type File struct {
	ID           int64   `json:"-"`
	URL          string  `json:"url"`
	LastModified *int64  `json:"last_modified_unix_utc,omitempty"`
	FileSize     *int64  `json:"file_size,omitempty"`
	MIMEType     string  `json:"mimetype"`
	CanonicalURL *string `json:"canonical_url,omitempty"`
	// BodyKey is where the raw body is in the blob store (not a seed
	// column: the seeds keep only the text, see FileText).
	BodyKey string `json:"body_key,omitempty"`
	// BodySHA256 is the body's SHA-256 in hex (ContentID): its key may
	// name where it is kept rather than what it is.
	BodySHA256 string `json:"body_sha256,omitempty"`
	// Not seed columns, kept beside the file row: the charset the body
	// was decoded from, and the response headers later stages read.
	Charset         string `json:"charset,omitempty"`
	ContentType     string `json:"content_type,omitempty"`
	ContentLanguage string `json:"content_language,omitempty"`
	RobotsTag       string `json:"x_robots_tag,omitempty"` // X-Robots-Tag
}

// FileText is the body of a text file, translated to UTF-8.
type FileText struct {
	FileID int64
	Text   string
}

// Redirect is a redirect answered to a request.
type Redirect struct {
	ID                int64             `json:"-"`
	URL               string            `json:"url"`
	LastModified      *int64            `json:"last_modified_unix_utc,omitempty"`
	ToURL             string            `json:"to_url"`
	InformationSource InformationSource `json:"information_source"`
	IsPermanent       bool              `json:"is_permanent"`
	BySecurityPolicy  bool              `json:"by_security_policy"`
}

// InformationSource says where a redirect was learned (redirect.information_source).
type InformationSource int

// The information sources. Never renumber: the values are stored.
const (
	SourceHTTPHeader InformationSource = 1 // a 3xx Location header
	SourceHTMLMeta   InformationSource = 2 // <meta http-equiv="refresh">
)

// Crawl is everything one crawl records in the crawler database: the
// crawl_log row and its requests, file (with its text) and redirect. The
// fetch stage builds it and the store writes it in one step, keyed by
// CrawlLog.CrawlUUID, so recording the same crawl twice changes nothing.
type Crawl struct {
	Log      CrawlLog  `json:"log"`
	Requests []Request `json:"requests,omitempty"`
	File     *File     `json:"file,omitempty"`
	// FileText, the whole body as text, never rides in a task: the
	// parser reads the body, and the summarizer its parsed document.
	FileText *string   `json:"-"`
	Redirect *Redirect `json:"redirect,omitempty"`
}
