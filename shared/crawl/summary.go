package crawl

import "github.com/google/uuid"

// The seed 002 summary database, one type per table.

// EntityGeneration is a span of time in which a URL showed one content:
// first seen, last seen, and, once closed, the first_seen of its successor.
type EntityGeneration struct {
	ID              int64
	UUID            string
	URL             string
	URLFragment     *string
	FirstSeen       int64
	LastSeen        int64
	ConfirmedEnd    *int64 // nil: the generation is open
	MarkedDuplicate bool
	TextPileID      *int64
}

// Open reports whether the generation has not been closed.
func (g EntityGeneration) Open() bool { return g.ConfirmedEnd == nil }

// GenerationUUID is the UUID of the generation a crawl opens, the same
// each time the crawl is planned: a crawl opens at most one generation,
// and a redelivered or re-planned summary then names the same one. A
// store that writes a new generation in steps (the DynamoDB one, the
// URL's head before the generation's item) finishes it on redelivery
// under the id the first delivery wrote, and can tell from it whether a
// crawl opened a generation at all.
func GenerationUUID(crawlUUID string) string {
	return uuid.NewSHA1(generationNamespace, []byte(crawlUUID)).String()
}

// generationNamespace is the name space of GenerationUUID (RFC 9562's
// name-based UUIDs): a constant, never to change.
var generationNamespace = uuid.MustParse("7c1e2d0a-5b6f-4c39-9a51-3f8e6d2b4a10")

// OpensGeneration reports whether a crawl that ended with code may have
// opened a URL's first generation: one that fetched content, or a
// redirect. (A 404 or a 410 opens a generation only over an open one,
// Gone.)
func OpensGeneration(code ExitCode) bool { return code.Contentful() || code == ExitRedirect }

// Gone reports whether an HTTP status says a page is no longer there
// (404, 410): the summarize stage then closes its open generation and
// opens one without content, and the fetch stage asks for the page
// whole next time (no validators, as after a redirect), so that a 304
// cannot confirm the content it had before it went.
func Gone(status int) bool { return status == 404 || status == 410 }

// DuplicateSummary flags a generation as an exact duplicate of another.
type DuplicateSummary struct {
	SubjectGenerationID     int64
	DuplicateOfGenerationID int64
	StatusStart             int64
	StatusEnd               *int64
}

// CrawlSummary is a crawl as seen from the summary database.
type CrawlSummary struct {
	ID                   int64
	GenerationID         *int64 // nil: a failed crawl of a URL with no generation yet
	WasRobotsTxtApproved bool
	CrawlType            CrawlType
	CrawlUUID            string
	AgentUUID            string
	TimeStarted          int64
	ExitCode             ExitCode
	RequestDurationMS    *int64
}

// HTTPSummary extends a CrawlSummary that got an HTTP response.
type HTTPSummary struct {
	CrawlSummaryID int64
	StatusCode     int
	ETag           *string
}

// FileSummary is a generation's file metadata.
type FileSummary struct {
	GenerationID int64
	FileSize     *int64
	MIMEType     *string
	CanonicalURL *string
}

// RedirectSummary is a generation's redirect.
type RedirectSummary struct {
	GenerationID      int64
	ToURL             string
	InformationSource InformationSource
	BySecurityPolicy  bool
	ToURLFragment     *string
}

// LinkSummary is one link parsed from a generation's document.
type LinkSummary struct {
	ID               int64
	GenerationID     int64
	LinkToURL        string
	LinkToFragment   *string
	RelNofollow      bool
	RelMe            bool
	RelTag           bool
	Location         Location
	ContainsHeadline bool
	DestinationType  *DestinationType
	Locality         Locality
	HTMLTagName      *string
	Text             *string
}

// Flags returns the link's boolean columns as one bit set, lowest bit
// first: rel_nofollow, rel_me, rel_tag, contains_headline, then the
// location signature in seed 002's column order (in_header ...
// in_paragraph). Both homes store link rows with their flags so (the
// bit order is stored: never change it).
func (l *LinkSummary) Flags() uint32 {
	var b uint32
	for bit, f := range l.flags() {
		if *f {
			b |= 1 << bit
		}
	}
	return b
}

// SetFlags sets the link's boolean columns from a bit set made by Flags.
func (l *LinkSummary) SetFlags(b uint32) {
	for bit, f := range l.flags() {
		*f = b&(1<<bit) != 0
	}
}

func (l *LinkSummary) flags() [19]*bool {
	p := &l.Location
	return [19]*bool{&l.RelNofollow, &l.RelMe, &l.RelTag, &l.ContainsHeadline, &p.InHeader, &p.InFooter, &p.InAside,
		&p.InNav, &p.InForm, &p.InMain, &p.InArticle, &p.InSection, &p.InTable, &p.InFigure, &p.InAddress, &p.InCode,
		&p.InHeadline, &p.InList, &p.InParagraph}
}

// Location is a link's location signature: the HTML sectioning and
// grouping elements it appears inside.
type Location struct {
	InHeader, InFooter, InAside, InNav, InForm, InMain, InArticle,
	InSection, InTable, InFigure, InAddress, InCode, InHeadline, InList,
	InParagraph bool
}

// DestinationType says what a link points at (link_summary.destination_type).
// Never renumber: the values are stored.
type DestinationType int

// The link destination types.
const (
	DestPage       DestinationType = 1 // a document to read (<a>, <area>)
	DestAlternate  DestinationType = 2 // <link rel=alternate>: a translation or another format
	DestFeed       DestinationType = 3 // <link rel=alternate type=rss/atom>
	DestCanonical  DestinationType = 4 // <link rel=canonical>
	DestEmbed      DestinationType = 5 // <iframe>, <frame>: embedded document
	DestStylesheet DestinationType = 6 // <link rel=stylesheet>
	DestOther      DestinationType = 7 // any other <link rel>
	// DestNavigation is a <link> to a page the document names for moving
	// through its site: rel next, prev, index, contents, search, ...
	DestNavigation DestinationType = 8
)

// Locality says how far a link reaches (link_summary.link_locality).
// Never renumber: the values are stored.
type Locality int

// The link localities.
const (
	LocalitySameDocument Locality = 1 // only a fragment of the same URL
	LocalitySameHost     Locality = 2 // same scheme-less host name
	LocalitySameSite     Locality = 3 // same registrable domain (eTLD+1)
	LocalityExternal     Locality = 4 // anywhere else
)

// DocumentDescription is a generation's document metadata.
type DocumentDescription struct {
	GenerationID    int64
	TimeCreated     *int64
	TimeUpdated     *int64
	PrimaryLanguage *string
	Title           *string
	PrimaryHeadline *string
	Description     *string
	Indexiness      int
}

// TextPile is a document's text split by kind, stored once per digest.
type TextPile struct {
	ID             int64
	Digest         []byte // blake2b-512 over the fields, see TextPile.ComputeDigest
	Text           string
	SecondaryText  string
	BigHeadlines   string
	SmallHeadlines string
	CodeText       string
	QuoteText      string
}

// Token is a row of the token table.
type Token struct {
	ID   int64
	Text string
}

// TokenStatistics says how often a token occurs in a text pile.
type TokenStatistics struct {
	TokenID     int64
	TextPileID  int64
	Occurrences int
}

// FullTextEntry is a row of the FTS5 full_text_entity_index.
type FullTextEntry struct {
	TextPileID     int64
	Title          string
	Description    *string
	Text           string
	SecondaryText  string
	BigHeadlines   string
	SmallHeadlines string
	CodeText       string
	QuoteText      string
}
