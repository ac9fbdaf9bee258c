package crawl

// Document is what the parse stage reads out of a page: the summarizer
// turns it into a document_description, a text_pile and link_summary rows.
type Document struct {
	URL          string   `json:"url"`
	Title        *string  `json:"title,omitempty"`
	Headline     *string  `json:"headline,omitempty"`
	Description  *string  `json:"description,omitempty"`
	Language     *string  `json:"language,omitempty"`
	TimeCreated  *int64   `json:"time_created,omitempty"`
	TimeUpdated  *int64   `json:"time_updated,omitempty"`
	Indexiness   int      `json:"indexiness"`
	CanonicalURL *string  `json:"canonical_url,omitempty"`
	NoIndex      bool     `json:"noindex,omitempty"`
	NoFollow     bool     `json:"nofollow,omitempty"`
	Text         TextPile `json:"text"`
	Links        []Link   `json:"links,omitempty"`
	// InvalidLinks are hrefs that are not valid URLs, kept so that the
	// scheduler can record them (as invalid-url candidates).
	InvalidLinks []string `json:"invalid_links,omitempty"`
	// Warnings say what could not be read as it should (logged by the
	// parse stage).
	Warnings []string `json:"warnings,omitempty"`
}

// Link is one link found in a document, before it is tied to a generation.
type Link struct {
	URL              string          `json:"url"`
	Fragment         *string         `json:"fragment,omitempty"`
	RelNofollow      bool            `json:"rel_nofollow,omitempty"`
	RelMe            bool            `json:"rel_me,omitempty"`
	RelTag           bool            `json:"rel_tag,omitempty"`
	Location         Location        `json:"location"`
	ContainsHeadline bool            `json:"contains_headline,omitempty"`
	DestinationType  DestinationType `json:"destination_type"`
	Locality         Locality        `json:"locality"`
	TagName          string          `json:"tag"`
	Text             *string         `json:"text,omitempty"`
}
