package crawl

import "encoding/json"

// FetchTask asks the fetch stage to crawl a released candidate.
type FetchTask struct {
	URL       string    `json:"url"`
	CrawlUUID string    `json:"crawl_uuid"`
	CrawlType CrawlType `json:"crawl_type"`
	Hops      int       `json:"hops"`
	MaxDepth  *int      `json:"max_depth,omitempty"`
	// Set from the URL's site (seed 001): its request delay and timeout
	// in ms, body size limit and links followed per page. 0: the
	// crawl's own setting.
	DelayMS   int64 `json:"delay_ms,omitempty"`
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	MaxBytes  int64 `json:"max_bytes,omitempty"`
	MaxLinks  int64 `json:"max_links,omitempty"`
	// RecrawlMin is the site's RecrawlPeriod in minutes; 0: the crawl's.
	RecrawlMin int64 `json:"recrawl_min,omitempty"`
}

// ParseTask asks the parse stage to read a fetched HTML body.
type ParseTask struct {
	URL       string `json:"url"`
	CrawlUUID string `json:"crawl_uuid"`
	Hops      int    `json:"hops"`
	MaxDepth  *int   `json:"max_depth,omitempty"`
	BodyKey   string `json:"body_key"`
	MIMEType  string `json:"mimetype"`
	// ContentType is the raw Content-Type header, for its charset.
	ContentType string `json:"content_type,omitempty"`
	// ContentLanguage is the Content-Language header.
	ContentLanguage string `json:"content_language,omitempty"`
	// NoFollow and NoIndex come from the X-Robots-Tag header.
	NoFollow bool `json:"nofollow,omitempty"`
	NoIndex  bool `json:"noindex,omitempty"`
	// MaxLinks is the site's MaxURLsFromPage (FetchTask); 0: the crawl's.
	MaxLinks int64 `json:"max_links,omitempty"`
	// Sitemap says the URL was learned from robots.txt (a Sitemap line,
	// or the /sitemap.xml guessed): a plain text body is then read as
	// a sitemap in the protocol's text format, one URL a line.
	Sitemap bool `json:"sitemap,omitempty"`
	// Crawl is the crawl as recorded (without its FileText), handed on
	// to the summarize task: the summarizer need not read it back from
	// the crawl log (on AWS a read unit a page). Nil in tasks sent
	// before it was carried: then the log is read.
	Crawl *Crawl `json:"crawl,omitempty"`
}

// SummarizeTask asks the summarize stage to fold a crawl into the
// summary database, with the parsed Document inline (as JSON when it is
// small, gzipped when that makes it fit: DocumentGz), else stored under
// DocumentKey; all are empty when nothing was parsed.
type SummarizeTask struct {
	URL         string          `json:"url"`
	CrawlUUID   string          `json:"crawl_uuid"`
	DocumentKey string          `json:"document_key,omitempty"`
	Document    json.RawMessage `json:"document,omitempty"`
	// DocumentGz is the document's JSON gzipped (base64 in the task's
	// JSON). SQS bills a message by the started 64 KiB, and documents
	// of real pages are often larger: on the documentation tree 101 of
	// 526 were past MaxInlineDocument as JSON and went to S3 (a PUT and a
	// GET each); gzipped, they are a fifth of that.
	DocumentGz []byte `json:"document_gz,omitempty"`
	// Crawl is the crawl as recorded (ParseTask.Crawl); nil: the
	// summarizer reads it from the crawl log.
	Crawl *Crawl `json:"crawl,omitempty"`
}

// MaxCarriedCrawl bounds the crawl a parse or summarize task carries,
// as JSON: about 700 bytes for a page, but its URLs and response
// headers are the server's to make long. A crawl past it is not carried
// (Carried), and the summarizer reads it from the crawl log instead; a
// summarize task then still fits SQS's 256 KiB beside a
// MaxInlineDocument.
const MaxCarriedCrawl = 16 << 10

// Carried is cr as a task carries it: without its FileText (the parser
// reads the body, the summarizer the parsed document), or nil when its
// JSON would be past MaxCarriedCrawl.
func Carried(cr Crawl) *Crawl {
	cr.FileText = nil
	if b, err := json.Marshal(cr); err != nil || len(b) > MaxCarriedCrawl {
		return nil
	}
	return &cr
}

// MaxInlineDocument is the largest parsed document a summarize task
// carries itself. Inline, a document costs no S3 PUT and GET ($5.40 per
// million on AWS, BENCHMARKS.md), only SQS payload: a task stays within
// SQS's 256 KiB message limit with room for the rest.
const MaxInlineDocument = 192 << 10

// PlainInlineDocument is the largest document JSON a summarize task
// carries as it is; a larger one is gzipped first (DocumentGz).
const PlainInlineDocument = 32 << 10

// MaxDocumentBytes bounds a document read back from DocumentGz, which
// is at most MaxInlineDocument gzipped: past it, the task is refused as
// malformed rather than decompressed without end.
const MaxDocumentBytes = 64 << 20
