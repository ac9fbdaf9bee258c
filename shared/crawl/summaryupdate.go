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

// SummaryOf is what every crawl's summary holds, whatever it does to the
// URL's generations: its crawl_summary columns and, when a response
// came, its http_summary. Its action is GenerationAttach, except for a
// 304 (ExitUnchanged), whose summary is complete as it is:
// GenerationExtendOpen. The summarize stage decides the rest of the
// others'; a store that settles a 304 when it records it (the fetch
// stage's Store) builds the 304's summary with this too.
func SummaryOf(cr Crawl) SummaryUpdate {
	l := cr.Log
	u := SummaryUpdate{
		URL: l.URL, SeenAt: l.TimeStarted,
		Crawl: CrawlSummary{
			WasRobotsTxtApproved: l.ExitCode != ExitRobotsDisallowed, CrawlType: l.CrawlType,
			CrawlUUID: l.CrawlUUID, AgentUUID: l.AgentUUID, TimeStarted: l.TimeStarted, ExitCode: l.ExitCode,
		},
	}
	if n := len(cr.Requests); n > 0 {
		last := cr.Requests[n-1]
		u.Crawl.RequestDurationMS = last.DurationMS
		u.Crawl.WasRobotsTxtApproved = last.RobotsTxtApproved
		if last.HTTPStatusCode != nil {
			u.HTTP = &HTTPSummary{StatusCode: *last.HTTPStatusCode, ETag: last.HTTPETag}
		}
	}
	if l.ExitCode == ExitUnchanged {
		// A 304 extends the generation the store finds open for it
		// (GenerationExtendOpen): nothing to read first.
		u.Action = GenerationExtendOpen
	}
	return u
}
