package crawl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// EnqueueVersion is the version of the enqueue event schema that this
// code writes. Events without "v" are read as version 1.
const EnqueueVersion = 1

// EnqueueType says how an enqueued URL is treated (seed 004 enqueue-type).
type EnqueueType string

// The enqueue types.
const (
	// EnqueueNone applies every check: dedupe, URL limits, expiry.
	EnqueueNone EnqueueType = "none"
	// EnqueueForced skips dedupe and URL limits: crawl again now.
	EnqueueForced EnqueueType = "forced"
	// EnqueueReenqueued skips dedupe, limits and expiry: crawl again now.
	EnqueueReenqueued EnqueueType = "reenqueued"
	// EnqueueExport fetches the URL and returns it without changing any
	// crawl state; the embedded pipeline does not support it yet.
	EnqueueExport EnqueueType = "export"
	// EnqueueStatus asks for the URL's current status; nothing is crawled.
	EnqueueStatus EnqueueType = "status"
)

// EnqueueEvent asks the crawler to consider a URL: what users send to the
// enqueue queue, and what the parser sends for every link it finds.
type EnqueueEvent struct {
	Version int    `json:"v,omitempty"`
	URL     string `json:"url,omitempty"`
	// URLs, given instead of URL, makes one event for each of them, the
	// other fields shared (Each): up to MaxEventURLs in one message. The
	// parser sends a page's links this way on AWS, where SQS bills by the
	// message, and a user may too.
	URLs        []string       `json:"urls,omitempty"`
	Site        string         `json:"site,omitempty"`
	Priority    int            `json:"priority,omitempty"`
	Hops        int            `json:"hops,omitempty"`
	MaxDepth    *int           `json:"max_depth,omitempty"`
	EnqueueType EnqueueType    `json:"enqueue_type,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`

	// Set by the crawler itself for discovered links and redirects.
	Parent        string   `json:"parent,omitempty"`
	NRedirs       int      `json:"n_redirs,omitempty"`
	OrigURL       string   `json:"orig_url,omitempty"`
	RedirectChain []string `json:"redirect_chain,omitempty"`
	Seed          bool     `json:"seed,omitempty"`
	// Overflow marks a link past its page's MaxURLsFromPage: recorded as
	// a candidate with the outcome too-many-urls, not crawled.
	Overflow bool `json:"overflow,omitempty"`
	// LastMod and ChangeFreq are a sitemap's hints for the URL
	// (<lastmod> as Unix seconds, <changefreq>): a known URL modified
	// since its last crawl is due now; a new one's first recrawl follows
	// the change frequency until its own changes are observed.
	LastMod    int64  `json:"lastmod,omitempty"`
	ChangeFreq string `json:"changefreq,omitempty"`
	// RequestedAt is when the crawl was asked for, in Unix seconds. A
	// forced or reenqueued event is met by any crawl of its URL that
	// started after that second (MetBy), so that a redelivered event,
	// or one sent again by a retrying sender, does not crawl the URL a
	// second time. Left out, the AWS scheduler takes the time SQS took
	// the message (its SentTimestamp, the same on every delivery). The
	// fetcher sets it on the event it sends for a forced crawl's
	// redirect: when that crawl started.
	RequestedAt int64 `json:"requested_at,omitempty"`
}

// MetBy reports whether a crawl that started at lastCrawl (Unix
// seconds; nil: never crawled) has done what a forced or reenqueued
// event asks: it started after the second the event was asked for. A
// crawl in that same second may have started before it, so it does not
// count: redelivered, such an event crawls the URL again, the safe way.
func (ev EnqueueEvent) MetBy(lastCrawl *int64) bool {
	return ev.RequestedAt > 0 && lastCrawl != nil && *lastCrawl > ev.RequestedAt
}

// ParseEnqueueEvent reads an enqueue message body: a JSON object of the
// schema above, or a bare URL (plain text or a JSON string). It returns
// an error of KindInvalid saying what is wrong.
func ParseEnqueueEvent(body []byte) (EnqueueEvent, error) {
	const op = "parse enqueue event"
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return EnqueueEvent{}, E(op, KindInvalid, fmt.Errorf("empty message"))
	}
	// SQS carries only Unicode text; a body of other bytes would be read
	// one way here and re-encoded another (each bad byte as U+FFFD).
	if !utf8.Valid(b) {
		return EnqueueEvent{}, E(op, KindInvalid, fmt.Errorf("message is not UTF-8 text"))
	}
	var ev EnqueueEvent
	switch b[0] {
	case '{':
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			return EnqueueEvent{}, E(op, KindInvalid, fmt.Errorf("not a valid enqueue event: %w", err))
		}
		if _, err := dec.Token(); err != io.EOF {
			return EnqueueEvent{}, E(op, KindInvalid, fmt.Errorf("not a valid enqueue event: data after the JSON object"))
		}
	case '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return EnqueueEvent{}, E(op, KindInvalid, fmt.Errorf("not a valid JSON string: %w", err))
		}
		ev.URL = s
	default:
		s := string(b)
		if strings.ContainsAny(s, " \t\r\n") {
			return EnqueueEvent{}, E(op, KindInvalid, fmt.Errorf("plain-text message must be a single URL, got %q", Truncate(s, 80)))
		}
		ev.URL = s
	}
	if err := ev.Validate(); err != nil {
		return EnqueueEvent{}, E(op, KindInvalid, err)
	}
	if ev.Version == 0 {
		ev.Version = EnqueueVersion
	}
	if ev.EnqueueType == "" {
		ev.EnqueueType = EnqueueNone
	}
	return ev, nil
}

// Validate checks the event's fields (not whether the URL can be crawled:
// that is the scheduler's call, and a recorded outcome).
func (ev EnqueueEvent) Validate() error {
	if ev.Version < 0 {
		return fmt.Errorf(`"v" must be >= 1 (or left out), got %d`, ev.Version)
	}
	if ev.Version > EnqueueVersion {
		return fmt.Errorf("schema version %d is newer than this crawler understands (%d)", ev.Version, EnqueueVersion)
	}
	switch {
	case len(ev.URLs) > 0 && ev.URL != "":
		return fmt.Errorf(`give "url" or "urls", not both`)
	case len(ev.URLs) > MaxEventURLs:
		return fmt.Errorf(`"urls" has %d URLs, more than the %d one event may carry`, len(ev.URLs), MaxEventURLs)
	case len(ev.URLs) > 0:
		for i, u := range ev.URLs {
			if strings.TrimSpace(u) == "" {
				return fmt.Errorf(`"urls"[%d] is empty`, i)
			}
			if len(u) > MaxURLLength {
				return fmt.Errorf(`"urls"[%d] is %d bytes long, more than the %d a URL may have`, i, len(u), MaxURLLength)
			}
		}
	case strings.TrimSpace(ev.URL) == "":
		return fmt.Errorf(`"url" (or "urls") is required`)
	case len(ev.URL) > MaxURLLength:
		return fmt.Errorf(`"url" is %d bytes long, more than the %d a URL may have`, len(ev.URL), MaxURLLength)
	}
	if len(ev.Site) > MaxURLLength {
		return fmt.Errorf(`"site" is %d bytes long, more than the %d it may have`, len(ev.Site), MaxURLLength)
	}
	if ev.Hops < 0 || ev.Hops > MaxHops {
		return fmt.Errorf(`"hops" must be from 0 to %d, got %d`, MaxHops, ev.Hops)
	}
	if ev.MaxDepth != nil && (*ev.MaxDepth < 0 || *ev.MaxDepth > MaxHops) {
		return fmt.Errorf(`"max_depth" must be from 0 to %d, got %d`, MaxHops, *ev.MaxDepth)
	}
	if ev.Priority < -MaxPriority || ev.Priority > MaxPriority {
		return fmt.Errorf(`"priority" must be from %d to %d, got %d`, -MaxPriority, MaxPriority, ev.Priority)
	}
	if ev.LastMod < 0 {
		return fmt.Errorf(`"lastmod" must be Unix seconds, got %d`, ev.LastMod)
	}
	if ev.RequestedAt < 0 {
		return fmt.Errorf(`"requested_at" must be Unix seconds, got %d`, ev.RequestedAt)
	}
	if ev.ChangeFreq != "" && ChangeFreqPrior(ev.ChangeFreq) == 0 {
		return fmt.Errorf(`"changefreq" must be one of always, hourly, daily, weekly, monthly, yearly, never; got %q`, Truncate(ev.ChangeFreq, 64))
	}
	switch ev.EnqueueType {
	case "", EnqueueNone, EnqueueForced, EnqueueReenqueued, EnqueueExport, EnqueueStatus:
	default:
		return fmt.Errorf(`"enqueue_type" must be one of none, forced, reenqueued, export, status; got %q`, ev.EnqueueType)
	}
	return nil
}

// MaxEventURLs is the most URLs one enqueue event may carry in "urls".
const MaxEventURLs = 1000

// Each returns the events ev stands for: itself, or, when it carries
// URLs, one event per URL with the other fields shared.
func (ev EnqueueEvent) Each() []EnqueueEvent {
	if len(ev.URLs) == 0 {
		return []EnqueueEvent{ev}
	}
	out := make([]EnqueueEvent, len(ev.URLs))
	for i, u := range ev.URLs {
		e := ev
		e.URL, e.URLs = u, nil
		out[i] = e
	}
	return out
}

// Truncate shortens s to at most n bytes, cut at a character's start and
// marked, for messages and logs.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut at a character's start: at most three bytes back, so that a
	// run of bytes that are no UTF-8 is cut where n says.
	for back := 0; back < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); back++ {
		n--
	}
	return s[:n] + "…"
}
