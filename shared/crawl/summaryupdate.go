package crawl

// GenerationAction is what a crawl does to its URL's entity generations.
type GenerationAction int

// The generation actions (seed 002's entity generation rules).
const (
	// GenerationAttach: the crawl changes no generation (a failed crawl,
	// or one with nothing to compare); its crawl_summary points at the
	// open generation, if there is one.
	GenerationAttach GenerationAction = iota
	// GenerationExtend: the content is the open generation's: last_seen
	// moves on to SeenAt.
	GenerationExtend
	// GenerationReplace: the content differs: the open generation (if
	// any) is closed at SeenAt and a new one opens at SeenAt.
	GenerationReplace
)

// SummaryUpdate is everything one crawl changes in the summary database.
// The summarize stage decides it; the store applies it in one step, keyed
// by Crawl.CrawlUUID (applying it twice changes nothing) and conditional
// on OpenID still being the URL's open generation.
type SummaryUpdate struct {
	URL    string
	Crawl  CrawlSummary
	HTTP   *HTTPSummary
	Action GenerationAction
	// OpenID is the open generation the decision was made against (0: none).
	OpenID int64
	SeenAt int64
	New    *NewGeneration
}

// NewGeneration is a generation to open, with its attachments.
type NewGeneration struct {
	Generation  EntityGeneration
	ContentKey  string // what identifies its content: text pile digest, body hash or redirect target
	BodyKey     string
	NoIndex     bool
	TextPile    *TextPile // stored once per digest
	Tokens      map[string]int
	File        *FileSummary
	Redirect    *RedirectSummary
	Description *DocumentDescription
	Links       []LinkSummary
	// DuplicateOf is the generation this one exactly duplicates (0: none).
	DuplicateOf int64
}

// OpenGeneration is a URL's open generation and what identifies its content.
type OpenGeneration struct {
	Generation EntityGeneration
	ContentKey string
}
