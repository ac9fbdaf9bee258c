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
	// GenerationExtendOpen: a 304, whose server says the content is the
	// one last fetched, whatever generation that opened. The store
	// extends the generation open when it applies the update, so the
	// summarizer reads nothing first: last_seen moves on to SeenAt
	// unless the generation was first seen after SeenAt (a late crawl)
	// or already seen at or after it (a redelivery), and with no open
	// generation nothing changes. OpenID is not used. A store that
	// keeps crawl_summary rows for such crawls records the crawl as
	// ExitDuplicate when the open generation is marked duplicate.
	GenerationExtendOpen
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
	// SimHash is the text pile's SimHash (TextPile.SimHash), 0 when it
	// has none: what a later near-duplicate is found by.
	SimHash uint64
	// DuplicateOf is the generation this one duplicates (0: none): the
	// same text pile, a text within NearDistance of its SimHash, or the
	// page its canonical link names (seed 000's canonical_url_id).
	DuplicateOf int64
	// Original is DuplicateOf's generation as it was found: its text
	// pile digest, which differs from TextPile's for a near or canonical
	// duplicate (nil: the same as TextPile's), and, when known, its URL
	// and first_seen, by which a store can read it back directly rather
	// than through an index that may lag.
	Original Original
}

// Exact reports whether the generation duplicates its original's text
// exactly (and so shares its text pile).
func (n *NewGeneration) Exact() bool {
	return n.DuplicateOf != 0 && (n.Original.Digest == nil || n.TextPile != nil && string(n.Original.Digest) == string(n.TextPile.Digest))
}

// Original is a generation that a new one may duplicate: its id and
// its text pile's digest; its URL and first_seen when the finder knows
// them ("" and 0 otherwise).
type Original struct {
	ID        int64
	Digest    []byte
	URL       string
	FirstSeen int64
}

// OpenGeneration is a URL's open generation and what identifies its content.
type OpenGeneration struct {
	Generation EntityGeneration
	ContentKey string
	NoIndex    bool
}
