// Package parse is the parse stage: it reads a fetched HTML body, keeps
// what it says (title, headline, description, language, dates, text by
// kind, every link with where it sits) as a document for the summarize
// stage, and enqueues the links to follow. It reads a plain text body as
// a document of words (ExtractPlain), and sitemaps, XML or text, as
// lists of URLs to enqueue.
package parse

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/sitemap"
	"github.com/serverless-crawler/crawler/shared/web/textenc"
)

// Blobs is where bodies are read and documents kept.
type Blobs interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Put(ctx context.Context, key string, data []byte) error
}

// Store is what the parse stage writes back to the crawler database.
type Store interface {
	SetCanonicalURL(ctx context.Context, crawlUUID, canonical string) error
}

// Sender sends messages to one queue.
type Sender interface {
	Send(ctx context.Context, bodies ...[]byte) error
}

// DocumentSender is a summarize Sender that also takes a parsed document
// as it is: the embedded home's, which hands it to the summarizer in the
// same process and so spares encoding and decoding it. If SendDocument
// fails, the task is sent encoded, as to any Sender.
type DocumentSender interface {
	Sender
	SendDocument(ctx context.Context, t crawl.SummarizeTask, doc *crawl.Document) error
}

// EventSender is an enqueue Sender that also takes enqueue events as they
// are: the embedded home's, which admits them in the same process and so
// spares encoding and decoding a page's links. It queues, encoded, the
// events it could not admit, as Send would have.
type EventSender interface {
	Sender
	SendEvents(ctx context.Context, evs ...crawl.EnqueueEvent) error
}

// Config is the parse stage's settings.
type Config struct {
	// MaxURLsFromPage caps the links enqueued from one page (0: no cap).
	MaxURLsFromPage int
	// FollowNofollow, if true, follows links marked rel="nofollow"
	// (they are recorded either way).
	FollowNofollow bool
	// LinksPerMessage, above 1, packs up to that many of a page's links
	// into one enqueue event ("urls", at most crawl.MaxEventURLs and
	// maxLinksMessage bytes): on AWS, where SQS bills by the message and
	// Lambda by the batch, a page's hundred links cost one message, not a
	// hundred. The embedded home packs them too: a page's links are then
	// admitted in one database write.
	LinksPerMessage int
	// MaxBytesInParse bounds the bodies being parsed and summarized at
	// once, in bytes (0: no bound). Reading a page costs several times
	// its size (its text, links and, up to MaxTreeSize, its tree), so
	// parsers wait for room instead of expanding many large bodies at
	// once; a body larger than the bound is parsed alone.
	MaxBytesInParse int64
}

// maxLinksMessage bounds a packed enqueue event's size, within SQS's
// 256 KiB message limit.
const maxLinksMessage = 192 << 10

// Parser is the parse stage.
type Parser struct {
	blobs              Blobs
	store              Store
	enqueue, summarize Sender
	cfg                Config
	log                *slog.Logger
	room               *crawl.Room // see Config.MaxBytesInParse; nil: none
}

// New returns a parse stage.
func New(blobs Blobs, store Store, enqueue, summarize Sender, cfg Config, log *slog.Logger) *Parser {
	return &Parser{blobs: blobs, store: store, enqueue: enqueue, summarize: summarize, cfg: cfg, log: log,
		room: crawl.NewRoom(cfg.MaxBytesInParse)}
}

// Handle parses the body of one crawl. Handling a task twice stores the
// same document and sends the same links (which the scheduler dedupes).
func (p *Parser) Handle(ctx context.Context, t crawl.ParseTask) error {
	if t.URL == "" || t.CrawlUUID == "" || t.BodyKey == "" {
		return crawl.E("parse", crawl.KindInvalid, fmt.Errorf("parse task needs url, crawl_uuid and body_key"))
	}
	body, err := p.blobs.Get(ctx, t.BodyKey)
	if err != nil {
		return fmt.Errorf("parse %s: %w", t.URL, err)
	}
	release, err := p.room.Reserve(ctx, len(body))
	if err != nil {
		return fmt.Errorf("parse %s: wait for room: %w", t.URL, err)
	}
	defer release()
	plain := textenc.IsPlainText(t.MIMEType)
	if !plain && !textenc.IsHTML(t.MIMEType) {
		return p.handleSitemap(ctx, t, body)
	}
	text, _, err := textenc.DecodeAs(body, t.ContentType, t.MIMEType)
	if err != nil {
		return crawl.E("parse "+t.URL, crawl.KindInvalid, err)
	}
	var doc crawl.Document
	if plain && t.Sitemap {
		// A sitemap in the protocol's text format; a text that is not
		// one list of URLs is read as the document it is.
		if kind, entries := sitemap.ParseText(text); kind != sitemap.NotSitemap {
			return p.enqueueSitemap(ctx, t, kind, entries)
		}
	}
	if plain {
		doc = ExtractPlain(t.URL, text, t.ContentLanguage)
	} else {
		doc = Extract(t.URL, text, t.ContentLanguage)
	}
	for _, w := range doc.Warnings {
		// Not a warning: the page was read, and nothing is for the user
		// to do (--log-level info shows it).
		p.log.InfoContext(ctx, "page read partly", "url", t.URL, "how", w)
	}
	doc.NoFollow = doc.NoFollow || t.NoFollow
	doc.NoIndex = doc.NoIndex || t.NoIndex
	if doc.NoIndex {
		doc.Indexiness = 0
	}
	if doc.CanonicalURL != nil {
		if err := p.store.SetCanonicalURL(ctx, t.CrawlUUID, *doc.CanonicalURL); err != nil {
			return fmt.Errorf("set canonical URL of %s: %w", t.URL, err)
		}
	}
	if err := p.enqueueLinks(ctx, t, doc); err != nil {
		return err
	}
	if ds, ok := p.summarize.(DocumentSender); ok {
		err := ds.SendDocument(ctx, crawl.SummarizeTask{URL: t.URL, CrawlUUID: t.CrawlUUID, Crawl: t.Crawl}, &doc)
		if err == nil || ctx.Err() != nil {
			return err
		}
		p.log.DebugContext(ctx, "summarizing in process failed; sending the task", "url", t.URL, "err", err)
	}
	return p.sendSummarize(ctx, t, doc)
}

// sendSummarize sends the summarize task of a parsed page, its document
// inline or, past crawl.MaxInlineDocument, in the blob store.
func (p *Parser) sendSummarize(ctx context.Context, t crawl.ParseTask, doc crawl.Document) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode document of %s: %w", t.URL, err)
	}
	st := crawl.SummarizeTask{URL: t.URL, CrawlUUID: t.CrawlUUID, Document: b, Crawl: t.Crawl}
	if len(b) > crawl.PlainInlineDocument {
		gz, err := gzipBytes(b)
		if err != nil {
			return fmt.Errorf("compress document of %s: %w", t.URL, err)
		}
		st.Document = nil
		if base64.StdEncoding.EncodedLen(len(gz)) <= crawl.MaxInlineDocument {
			st.DocumentGz = gz
		} else {
			st.DocumentKey = crawl.DocumentKey(t.CrawlUUID)
			if err := p.blobs.Put(ctx, st.DocumentKey, b); err != nil {
				return fmt.Errorf("store document of %s: %w", t.URL, err)
			}
		}
	}
	msg, _ := json.Marshal(st)
	if err := p.summarize.Send(ctx, msg); err != nil {
		return fmt.Errorf("send summarize task for %s: %w", t.URL, err)
	}
	return nil
}

// Follows reports whether a link of this destination type is a crawl
// target: pages, frames, alternates, feeds, canonicals and navigation
// links (rel next, index, ...) are; style sheets and other <link>s
// (icons, preloads, manifests) are recorded but not fetched.
func Follows(d crawl.DestinationType) bool {
	switch d {
	case crawl.DestPage, crawl.DestEmbed, crawl.DestAlternate, crawl.DestFeed, crawl.DestCanonical, crawl.DestNavigation:
		return true
	}
	return false
}

func (p *Parser) enqueueLinks(ctx context.Context, t crawl.ParseTask, doc crawl.Document) error {
	if doc.NoFollow {
		return nil
	}
	seen := map[string]bool{t.URL: true}
	var evs []crawl.EnqueueEvent
	base := crawl.EnqueueEvent{Hops: t.Hops + 1, MaxDepth: t.MaxDepth, Parent: t.URL}
	var pack crawl.EnqueueEvent // links gathered for one packed event
	size := 0
	flush := func() {
		if len(pack.URLs) > 0 {
			evs = append(evs, pack)
		}
		pack, size = crawl.EnqueueEvent{}, 0
	}
	followed, most := 0, p.maxLinks(t)
	// add sends u as a link of the page, packed with the others when
	// LinksPerMessage allows, taking room bytes of the message; counted,
	// it is one of the links followed (MaxURLsFromPage).
	add := func(u string, room int, counted bool) {
		ev := base
		ev.URL = u
		if counted {
			// Past MaxURLsFromPage a link is recorded (too-many-urls), not crawled.
			ev.Overflow = most > 0 && followed >= most
			followed++
		}
		if p.cfg.LinksPerMessage > 1 {
			if len(pack.URLs) > 0 && (pack.Overflow != ev.Overflow || len(pack.URLs) >= min(p.cfg.LinksPerMessage, crawl.MaxEventURLs) ||
				size+room > maxLinksMessage-len(t.URL)-256) {
				flush()
			}
			if len(pack.URLs) == 0 {
				pack = base
				pack.Overflow = ev.Overflow
			}
			pack.URLs = append(pack.URLs, u)
			size += room
			return
		}
		evs = append(evs, ev)
	}
	for _, l := range doc.Links {
		if seen[l.URL] || !Follows(l.DestinationType) || l.RelNofollow && !p.cfg.FollowNofollow {
			continue
		}
		seen[l.URL] = true
		if len(l.URL) > crawl.MaxURLLength {
			// No event may carry it, and the scheduler would not keep it
			// (schedule.TooLong): it stays in the page's links.
			continue
		}
		// A normalized URL is percent-encoded: JSON escapes nothing in
		// it but a rare quote or backslash. One longer than the crawler
		// keeps is sent for the scheduler to record (schedule.TooLong)
		// and takes none of the page's MaxURLsFromPage: a page of long
		// junk links first does not crowd out its others.
		add(l.URL, len(l.URL)+8, len(l.URL) <= crawl.MaxKeptURLLength)
	}
	// Hrefs that are no URL, each once, recorded as invalid by the
	// scheduler: packed as the links are, so that a page of a hundred
	// thousand of them is a hundred messages, not a hundred thousand.
	// Their room is what JSON (and SQS, sqsq) makes of them, up to six
	// bytes a byte. One longer than a candidate's URL may be cannot be
	// recorded (it is the record's key) and is only counted here.
	long := 0
	for _, raw := range doc.InvalidLinks {
		switch {
		case seen[raw]:
		case len(raw) > crawl.MaxKeptURLLength:
			long++
		default:
			seen[raw] = true
			add(raw, encodedSize(raw)+8, false)
		}
	}
	if long > 0 {
		p.log.WarnContext(ctx, "hrefs that are no URL, too long to record", "url", t.URL, "count", long, "max_bytes", crawl.MaxKeptURLLength)
	}
	flush()
	if len(evs) == 0 {
		return nil
	}
	var err error
	if es, ok := p.enqueue.(EventSender); ok {
		err = es.SendEvents(ctx, evs...)
	} else {
		err = p.enqueue.Send(ctx, EncodeEvents(evs)...)
	}
	if err != nil {
		return fmt.Errorf("enqueue %d links of %s: %w", len(evs), t.URL, err)
	}
	return nil
}

// encodedSize is at least the bytes s takes as a JSON string in a queue
// message: json.Marshal's, and three more for each U+FFFE and U+FFFF,
// which an SQS queue sends escaped (sqsq).
func encodedSize(s string) int {
	b, _ := json.Marshal(s) // a string always encodes
	return len(b) + 3*(strings.Count(s, "\uFFFE")+strings.Count(s, "\uFFFF"))
}

// EncodeEvents encodes enqueue events as queue messages: JSON, not
// HTML-escaped (a query's & stays one byte, as the packing counts it).
func EncodeEvents(evs []crawl.EnqueueEvent) [][]byte {
	bodies := make([][]byte, len(evs))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i, ev := range evs {
		b.Reset()
		enc.Encode(ev) // an EnqueueEvent always encodes
		bodies[i] = bytes.Clone(bytes.TrimSpace(b.Bytes()))
	}
	return bodies
}

// maxLinks is how many links of a page are followed: its site's
// MaxURLsFromPage (seed 001, carried by the task) or the crawl's.
func (p *Parser) maxLinks(t crawl.ParseTask) int {
	if t.MaxLinks > 0 {
		return int(t.MaxLinks)
	}
	return p.cfg.MaxURLsFromPage
}

// gzipBytes returns b gzipped, at the default level.
func gzipBytes(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BodyKeys returns the body keys of the parse tasks among bodies (SQS
// message bodies), for a read-ahead of a batch's bodies; a body that is
// no parse task is left out, for its handler to refuse.
func BodyKeys(bodies [][]byte) []string {
	keys := make([]string, 0, len(bodies))
	for _, b := range bodies {
		var t crawl.ParseTask
		if json.Unmarshal(b, &t) == nil && t.BodyKey != "" {
			keys = append(keys, t.BodyKey)
		}
	}
	return keys
}
