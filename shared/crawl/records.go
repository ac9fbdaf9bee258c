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
	ID          int64
	AgentUUID   string // the agent table's agent_uuid; the store maps it to agent_id
	URL         string
	CrawlType   CrawlType
	CrawlUUID   string
	TimeStarted int64
	TimeTakenMS int64
	ExitCode    ExitCode
	Message     *string
}

// Request is one network request of a crawl.
type Request struct {
	ID                 int64
	URL                string
	TimeSent           int64
	DurationMS         *int64
	RobotsTxtApproved  bool
	ExitCode           ExitCode
	ServerLastModified *int64
	HTTPStatusCode     *int
	HTTPETag           *string
}

// File is the metadata of a fetched body.
type File struct {
	ID           int64
	URL          string
	LastModified *int64
	FileSize     *int64
	MIMEType     string
	CanonicalURL *string
	// BodyKey is where the raw body is in the blob store (not a seed
	// column: the seeds keep only the text, see FileText).
	BodyKey string
	// BodySHA256 is the body's SHA-256 in hex (ContentID): its key may
	// name where it is kept rather than what it is.
	BodySHA256 string
	// Not seed columns, kept beside the file row: the charset the body
	// was decoded from, and the response headers later stages read.
	Charset         string
	ContentType     string
	ContentLanguage string
	RobotsTag       string // X-Robots-Tag
}

// FileText is the body of a text file, translated to UTF-8.
type FileText struct {
	FileID int64
	Text   string
}

// Redirect is a redirect answered to a request.
type Redirect struct {
	ID                int64
	URL               string
	LastModified      *int64
	ToURL             string
	InformationSource InformationSource
	IsPermanent       bool
	BySecurityPolicy  bool
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
	Log      CrawlLog
	Requests []Request
	File     *File
	FileText *string
	Redirect *Redirect
}
