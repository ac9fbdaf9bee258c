package contract

import (
	"encoding/hex"

	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// The fixtures below are the suites' crawls and summaries, exported for
// the adapters' own tests of what the suites cannot see.

// AgentUUID is the agent the fixtures' crawls and summaries name.
const AgentUUID = "0d6a1f5e-2a43-4c1e-9d3b-6f1f0c1d2e3f"

// CrawledAs is the candidate as the fetch stage leaves it after cr.
func CrawledAs(c crawl.Candidate, cr crawl.Crawl) crawl.Candidate {
	code, at := cr.Log.ExitCode, cr.Log.TimeStarted
	c.State, c.LastCrawlTime, c.LastCrawlExitCode = crawl.StateCrawled, &at, &code
	if code.Contentful() {
		c.LastContentfulCrawlTime = &at
		c.LastContentfulETag = cr.Requests[len(cr.Requests)-1].HTTPETag
	}
	return c
}

// CompleteCrawl is a crawl of u that fetched an HTML page: one request,
// a file with every optional field set, and its text.
func CompleteCrawl(u, crawlUUID string) crawl.Crawl {
	text := "<html><title>Lamps</title></html>"
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: AgentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			TimeStarted: 1700000100, TimeTakenMS: 42, ExitCode: crawl.ExitComplete},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000100, DurationMS: ptr(int64(40)), RobotsTxtApproved: true,
			ExitCode: crawl.ExitComplete, ServerLastModified: ptr(int64(1690000000)), HTTPStatusCode: ptr(200),
			HTTPETag: ptr(`"v1"`)}},
		File: &crawl.File{URL: u, LastModified: ptr(int64(1690000000)), FileSize: ptr(int64(len(text))),
			MIMEType: "text/html", CanonicalURL: ptr("http://example.com/canonical"), BodyKey: crawl.BodyKey([]byte(text)),
			BodySHA256: crawl.BodySHA256([]byte(text)), Charset: "utf-8", ContentType: "text/html; charset=utf-8", ContentLanguage: "en", RobotsTag: "noarchive"},
		FileText: &text,
	}
}

// RedirectCrawl is a crawl of u answered with a permanent redirect to to.
func RedirectCrawl(u, to, crawlUUID string) crawl.Crawl {
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: AgentUUID, URL: u, CrawlType: crawl.CrawlReenqueued, CrawlUUID: crawlUUID,
			TimeStarted: 1700000200, TimeTakenMS: 7, ExitCode: crawl.ExitRedirect, Message: ptr("301 to " + to)},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000200, DurationMS: ptr(int64(6)), RobotsTxtApproved: true,
			ExitCode: crawl.ExitRedirect, HTTPStatusCode: ptr(301)}},
		Redirect: &crawl.Redirect{URL: u, ToURL: to, InformationSource: crawl.SourceHTTPHeader, IsPermanent: true,
			LastModified: ptr(int64(1690000001))},
	}
}

// UnchangedCrawl is a recrawl of u, started at at, that a conditional
// GET answered 304 Not Modified.
func UnchangedCrawl(u, crawlUUID string, at int64) crawl.Crawl {
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: AgentUUID, URL: u, CrawlType: crawl.CrawlRecrawl, CrawlUUID: crawlUUID,
			TimeStarted: at, TimeTakenMS: 3, ExitCode: crawl.ExitUnchanged},
		Requests: []crawl.Request{{URL: u, TimeSent: at, DurationMS: ptr(int64(2)), RobotsTxtApproved: true,
			ExitCode: crawl.ExitUnchanged, HTTPStatusCode: ptr(304), HTTPETag: ptr(`"v1"`)}},
	}
}

// FailedCrawl is a crawl of u that timed out: a log and one request.
func FailedCrawl(u, crawlUUID string) crawl.Crawl {
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: AgentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			TimeStarted: 1700000300, TimeTakenMS: 30000, ExitCode: crawl.ExitTimeout, Message: ptr("timeout after 30s")},
		Requests: []crawl.Request{{URL: u, TimeSent: 1700000300, RobotsTxtApproved: true, ExitCode: crawl.ExitTimeout}},
	}
}

// TextPile is a text pile of text, its digest computed.
func TextPile(text string) *crawl.TextPile {
	p := crawl.TextPile{Text: text}
	p.Digest = p.ComputeDigest()
	return &p
}

// TextGen is a generation of u whose content is the text pile p, first
// seen at at. (Generation UUIDs are random UUIDs here; the summarizer
// derives a crawl's from its crawl_uuid. The DynamoDB store derives the
// generation id from it.)
func TextGen(u string, at int64, p *crawl.TextPile, title string) *crawl.NewGeneration {
	return &crawl.NewGeneration{
		Generation:  crawl.EntityGeneration{UUID: uuid.NewString(), URL: u, FirstSeen: at, LastSeen: at},
		ContentKey:  "text:" + hex.EncodeToString(p.Digest),
		TextPile:    p,
		Description: &crawl.DocumentDescription{Title: ptr(title), Indexiness: 50},
	}
}

// DupGen is TextGen marked as a duplicate of generation orig.
func DupGen(u string, at int64, p *crawl.TextPile, title string, orig int64) *crawl.NewGeneration {
	g := TextGen(u, at, p, title)
	g.DuplicateOf, g.Generation.MarkedDuplicate = orig, true
	return g
}

// SummaryUpdate is the summary of a complete crawl of u at at, planned
// against the open generation openID (0: none).
//
// The generation ng a crawl opens takes the crawl's UUID
// (crawl.GenerationUUID), as the summarizer makes it: a store may tell
// by it which crawl opened a generation.
func SummaryUpdate(u, crawlUUID string, at int64, action crawl.GenerationAction, openID int64, ng *crawl.NewGeneration) crawl.SummaryUpdate {
	if ng != nil {
		ng.Generation.UUID = crawl.GenerationUUID(crawlUUID)
	}
	return crawl.SummaryUpdate{
		URL: u, Action: action, OpenID: openID, SeenAt: at, New: ng,
		Crawl: crawl.CrawlSummary{WasRobotsTxtApproved: true, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			AgentUUID: AgentUUID, TimeStarted: at, ExitCode: crawl.ExitComplete, RequestDurationMS: ptr(int64(12))},
		HTTP: &crawl.HTTPSummary{StatusCode: 200, ETag: ptr(`"e"`)},
	}
}
