// Package summarize is the summarize stage: it folds each crawl into the
// summary database of seed 002. A crawl whose content equals its URL's
// open entity generation moves that generation's last_seen on; different
// content closes it and opens a new one; a 304 moves last_seen on; a
// failed crawl closes nothing. Duplicates of another URL's open
// generation (the same text, nearly the same text, or the page named
// canonical) are marked as such.
package summarize

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Store is what the summarize stage needs of the metadata store.
type Store interface {
	GetCrawl(ctx context.Context, crawlUUID string) (crawl.Crawl, error)
	OpenGeneration(ctx context.Context, url string) (crawl.OpenGeneration, error)
	FindOriginal(ctx context.Context, digest []byte, url string) (int64, error)
	FindNearOriginal(ctx context.Context, simhash uint64, url string) (crawl.Original, error)
	ApplySummary(ctx context.Context, s crawl.SummaryUpdate) (bool, error)
}

// Blobs is where parsed documents are read.
type Blobs interface {
	Get(ctx context.Context, key string) ([]byte, error)
}

// Config is the summarize stage's settings.
type Config struct {
	// Tokens, if true, fills token and token_statistics (seed 002 calls
	// them experimental).
	Tokens bool
	// MaxDocumentBytes bounds the documents Handle decodes and
	// summarizes at once, counted as their JSON (0: no bound): the
	// summarizer function handles a batch of fifty at once, and a page's
	// document, decoded, costs a few times its JSON. A document larger
	// than the bound is summarized alone. Documents handed over as they
	// are (HandleDocument) were counted by the parser's bound.
	MaxDocumentBytes int64
}

// Summarizer is the summarize stage.
type Summarizer struct {
	store Store
	blobs Blobs
	cfg   Config
	log   *slog.Logger
	room  *crawl.Room // see Config.MaxDocumentBytes; nil: none

	// sameText serializes, within this process, the summaries of pages
	// that may duplicate each other: planned at once, two copies of one
	// text would each find no original and both become one. In the
	// embedded home every summary runs in this process, so of two
	// identical pages exactly one is the other's duplicate; across
	// Lambda instances the race remains (docs/aws.md). Keyed by what a
	// duplicate shares with its original (sameTextKeys): summaries of
	// unrelated texts never wait on each other (they may hold the lock
	// while the store waits for its batch, see warc.Packer).
	sameText keyedLocks
}

// batcher is a blob store that writes the records of the summaries
// working at once together (warc.Packer): it waits until each has
// either handed in its record or left. A summary waiting for another's
// lock steps out of the batch meanwhile, so that the others' records
// are not held back for it.
type batcher interface {
	Enter()
	Leave()
}

// New returns a summarize stage.
func New(store Store, blobs Blobs, cfg Config, log *slog.Logger) *Summarizer {
	s := &Summarizer{store: store, blobs: blobs, cfg: cfg, log: log, room: crawl.NewRoom(cfg.MaxDocumentBytes)}
	if b, ok := blobs.(batcher); ok {
		s.sameText.waiting = func() func() {
			b.Leave()
			return b.Enter
		}
	}
	return s
}

// Handle summarizes one crawl; a crawl already summarized is left alone.
func (s *Summarizer) Handle(ctx context.Context, t crawl.SummarizeTask) error {
	if t.CrawlUUID == "" {
		return crawl.E("summarize", crawl.KindInvalid, fmt.Errorf("summarize task needs crawl_uuid"))
	}
	cr, err := s.crawlOf(ctx, t)
	if err != nil {
		return err
	}
	var doc *crawl.Document
	if b := []byte(t.Document); len(b) > 0 || len(t.DocumentGz) > 0 || t.DocumentKey != "" {
		switch {
		case len(b) > 0:
		case len(t.DocumentGz) > 0:
			if b, err = gunzipDocument(t.DocumentGz); err != nil {
				return crawl.E("summarize "+t.URL, crawl.KindInvalid, err)
			}
		default:
			if b, err = s.blobs.Get(ctx, t.DocumentKey); err != nil {
				return fmt.Errorf("summarize %s: %w", t.URL, err)
			}
		}
		release, err := s.room.Reserve(ctx, len(b))
		if err != nil {
			return fmt.Errorf("summarize %s: wait for room: %w", t.URL, err)
		}
		defer release()
		doc = new(crawl.Document)
		if err := json.Unmarshal(b, doc); err != nil {
			return crawl.E("summarize "+t.URL, crawl.KindInvalid, fmt.Errorf("decode document: %w", err))
		}
	}
	return s.summarize(ctx, t, cr, doc)
}

// HandleDocument is Handle for a task whose document is given as it is,
// not encoded in the task: the parser hands it over this way when both
// stages run in one process.
func (s *Summarizer) HandleDocument(ctx context.Context, t crawl.SummarizeTask, doc *crawl.Document) error {
	if t.CrawlUUID == "" {
		return crawl.E("summarize", crawl.KindInvalid, fmt.Errorf("summarize task needs crawl_uuid"))
	}
	cr, err := s.crawlOf(ctx, t)
	if err != nil {
		return err
	}
	return s.summarize(ctx, t, cr, doc)
}

// crawlOf is the crawl a task summarizes: the one it carries (the fetch
// stage hands on the crawl as recorded), else the crawl log's.
func (s *Summarizer) crawlOf(ctx context.Context, t crawl.SummarizeTask) (crawl.Crawl, error) {
	if c := t.Crawl; c != nil {
		if c.Log.CrawlUUID != t.CrawlUUID || c.Log.URL != t.URL {
			return crawl.Crawl{}, crawl.E("summarize "+t.URL, crawl.KindInvalid,
				fmt.Errorf("the task's crawl is %s of %s, want %s of %s", c.Log.CrawlUUID, c.Log.URL, t.CrawlUUID, t.URL))
		}
		return *c, nil
	}
	cr, err := s.store.GetCrawl(ctx, t.CrawlUUID)
	if err != nil {
		return crawl.Crawl{}, fmt.Errorf("summarize %s: %w", t.URL, err)
	}
	return cr, nil
}

func (s *Summarizer) summarize(ctx context.Context, t crawl.SummarizeTask, cr crawl.Crawl, doc *crawl.Document) error {
	var simhash uint64
	if doc != nil && !doc.Text.Empty() {
		if len(doc.Text.Digest) == 0 {
			doc.Text.Digest = doc.Text.ComputeDigest()
		}
		simhash, _ = doc.Text.SimHash()
		unlock, err := s.sameText.lockAll(ctx, sameTextKeys(t.URL, doc.Text.Digest, simhash, canonicalOf(cr.File, doc)))
		if err != nil {
			return fmt.Errorf("summarize %s: wait for summaries of the same text: %w", t.URL, err)
		}
		defer unlock()
	}
	for attempt := 0; ; attempt++ {
		u, err := s.plan(ctx, cr, doc, simhash)
		if err != nil {
			return err
		}
		_, err = s.store.ApplySummary(ctx, u)
		if errors.Is(err, crawl.ErrConflict) && attempt < 4 {
			// Another crawl of the URL was summarized meanwhile, or an
			// index the plan read lagged: plan again, after a moment.
			wait := time.NewTimer(time.Duration(10<<attempt) * time.Millisecond)
			select {
			case <-wait.C:
			case <-ctx.Done():
				wait.Stop()
				return ctx.Err()
			}
			continue
		}
		return err
	}
}

// plan decides what the crawl changes.
func (s *Summarizer) plan(ctx context.Context, cr crawl.Crawl, doc *crawl.Document, simhash uint64) (crawl.SummaryUpdate, error) {
	l := cr.Log
	u := crawl.SummaryOf(cr)
	if u.Action == crawl.GenerationExtendOpen {
		return u, nil // a 304: nothing to read or decide
	}
	open, err := s.store.OpenGeneration(ctx, l.URL)
	switch {
	case errors.Is(err, crawl.ErrNotFound):
	case err != nil:
		return u, fmt.Errorf("summarize %s: %w", l.URL, err)
	default:
		u.OpenID = open.Generation.ID
	}

	if u.OpenID != 0 && l.TimeStarted < open.Generation.FirstSeen {
		// An older crawl arriving after a newer one opened the current
		// generation (queues may reorder): history is not rewritten; the
		// crawl is kept, attached to the open generation.
		return u, nil
	}
	switch code := l.ExitCode; {
	case code.Contentful() && cr.File != nil:
		if err := s.place(ctx, &u, open, s.fileGeneration(cr, doc, simhash)); err != nil {
			return u, err
		}
	case code == crawl.ExitRedirect && cr.Redirect != nil:
		ng := &crawl.NewGeneration{
			Generation: generationOf(l),
			ContentKey: "redirect:" + cr.Redirect.ToURL,
			Redirect: &crawl.RedirectSummary{ToURL: cr.Redirect.ToURL, InformationSource: cr.Redirect.InformationSource,
				BySecurityPolicy: cr.Redirect.BySecurityPolicy},
		}
		if err := s.place(ctx, &u, open, ng); err != nil {
			return u, err
		}
	case code == crawl.ExitHTTPClientError && u.OpenID != 0 && u.HTTP != nil && crawl.Gone(u.HTTP.StatusCode):
		// The page is gone: its content leaves search, as a redirect's
		// would. A URL that never had a generation opens none.
		ng := &crawl.NewGeneration{
			Generation: generationOf(l),
			ContentKey: goneContentKey,
		}
		if err := s.place(ctx, &u, open, ng); err != nil {
			return u, err
		}
	}
	return u, nil
}

// generationOf is the generation a crawl opens, before its content:
// named after the crawl (crawl.GenerationUUID, so that a redelivery
// plans the same one), first and last seen when the crawl started.
func generationOf(l crawl.CrawlLog) crawl.EntityGeneration {
	return crawl.EntityGeneration{UUID: crawl.GenerationUUID(l.CrawlUUID), URL: l.URL, FirstSeen: l.TimeStarted, LastSeen: l.TimeStarted}
}

// goneContentKey identifies the content of a gone page: a 404 or a 410
// closes the generation that was open (content, a redirect) and opens
// one without content, which later 404s and 410s extend. Any other
// failed crawl (a timeout, a 5xx, a 403) changes no generation: the
// page may be back at the next crawl.
const goneContentKey = "gone"

// place decides what a crawl that saw the content of ng does: the open
// generation's content moves its last_seen on; other content opens ng
// (closing the open one), marked duplicate when its text is another
// URL's open original, unless the open generation was seen after this
// crawl (a late delivery), which is then kept.
func (s *Summarizer) place(ctx context.Context, u *crawl.SummaryUpdate, open crawl.OpenGeneration, ng *crawl.NewGeneration) error {
	// The same content under another robots noindex (a meta tag or an
	// X-Robots-Tag added or taken away) is a new generation: whether the
	// page is searchable, and an original for its copies, is the open
	// generation's.
	if u.OpenID != 0 && open.ContentKey == ng.ContentKey && open.NoIndex == ng.NoIndex {
		u.Action = crawl.GenerationExtend
		if open.Generation.MarkedDuplicate {
			u.Crawl.ExitCode = crawl.ExitDuplicate
		}
		return nil
	}
	if ng.TextPile != nil && !ng.TextPile.Empty() {
		orig, err := s.original(ctx, u.URL, ng)
		if err != nil {
			return fmt.Errorf("summarize %s: %w", u.URL, err)
		}
		if orig.ID != 0 {
			ng.DuplicateOf, ng.Original = orig.ID, orig
			ng.Generation.MarkedDuplicate = true
			u.Crawl.ExitCode = crawl.ExitDuplicate
		}
	}
	if u.OpenID != 0 && u.SeenAt < open.Generation.LastSeen {
		return nil // the open generation was seen later than this crawl: keep it
	}
	u.Action, u.New = crawl.GenerationReplace, ng
	return nil
}

// original finds what a new generation of url duplicates, in this
// order: another URL's open original with the same text; the page its
// canonical link names (rel=canonical or an HTTP Link header), when that
// page's open generation is an original with text; an open original
// whose SimHash is within crawl.NearDistance of ng's. None: a zero
// Original. A canonical page not crawled yet is not waited for: the
// page stays an original until its content next changes (docs/design.md).
func (s *Summarizer) original(ctx context.Context, url string, ng *crawl.NewGeneration) (crawl.Original, error) {
	id, err := s.store.FindOriginal(ctx, ng.TextPile.Digest, url)
	if err != nil || id != 0 {
		return crawl.Original{ID: id, Digest: ng.TextPile.Digest}, err
	}
	// A canonical URL longer than any candidate's names no page crawled.
	if f := ng.File; f != nil && f.CanonicalURL != nil && *f.CanonicalURL != url && len(*f.CanonicalURL) <= crawl.MaxKeptURLLength {
		og, err := s.store.OpenGeneration(ctx, *f.CanonicalURL)
		switch {
		case errors.Is(err, crawl.ErrNotFound):
		case err != nil:
			return crawl.Original{}, fmt.Errorf("canonical %s: %w", *f.CanonicalURL, err)
		case !og.Generation.MarkedDuplicate && !og.NoIndex:
			if digest, ok := textDigest(og.ContentKey); ok {
				return crawl.Original{ID: og.Generation.ID, Digest: digest, URL: og.Generation.URL, FirstSeen: og.Generation.FirstSeen}, nil
			}
		}
	}
	if ng.SimHash == 0 {
		return crawl.Original{}, nil
	}
	return s.store.FindNearOriginal(ctx, ng.SimHash, url)
}

// emptyDigest is the digest of an empty text pile: such a generation is
// never an original (there is nothing to compare).
var emptyDigest = hex.EncodeToString(crawl.TextPile{}.ComputeDigest())

// textDigest returns the text pile digest a content key names, if it
// names a non-empty one ("text:<hex digest>").
func textDigest(contentKey string) ([]byte, bool) {
	h, ok := strings.CutPrefix(contentKey, "text:")
	if !ok || h == emptyDigest {
		return nil, false
	}
	d, err := hex.DecodeString(h)
	return d, err == nil && len(d) > 0
}

// fileGeneration builds the generation a contentful crawl would open.
// Its content is identified by the text pile's digest when the body was
// parsed, else by the body's hash.
func (s *Summarizer) fileGeneration(cr crawl.Crawl, doc *crawl.Document, simhash uint64) *crawl.NewGeneration {
	l, f := cr.Log, cr.File
	mt := f.MIMEType
	ng := &crawl.NewGeneration{
		Generation: generationOf(l),
		ContentKey: "body:" + f.ContentID(),
		BodyKey:    f.BodyKey,
		File:       &crawl.FileSummary{FileSize: f.FileSize, MIMEType: &mt, CanonicalURL: canonicalOf(f, doc)},
	}
	if doc == nil {
		return ng
	}
	pile := doc.Text
	if len(pile.Digest) == 0 {
		pile.Digest = pile.ComputeDigest()
	}
	ng.TextPile = &pile
	ng.ContentKey = "text:" + hex.EncodeToString(pile.Digest)
	ng.SimHash = simhash
	ng.NoIndex = doc.NoIndex
	ng.Description = &crawl.DocumentDescription{
		TimeCreated: doc.TimeCreated, TimeUpdated: doc.TimeUpdated, PrimaryLanguage: doc.Language,
		Title: doc.Title, PrimaryHeadline: doc.Headline, Description: doc.Description, Indexiness: doc.Indexiness,
	}
	// The tag names and destination types are a handful of values: each
	// is allocated once per page and shared by its links.
	tags := map[string]*string{}
	dests := map[crawl.DestinationType]*crawl.DestinationType{}
	if len(doc.Links) > 0 {
		ng.Links = make([]crawl.LinkSummary, 0, len(doc.Links))
	}
	for _, k := range doc.Links {
		tag, ok := tags[k.TagName]
		if !ok {
			tag = &k.TagName
			tags[k.TagName] = tag
		}
		dt, ok := dests[k.DestinationType]
		if !ok {
			dt = &k.DestinationType
			dests[k.DestinationType] = dt
		}
		ng.Links = append(ng.Links, crawl.LinkSummary{
			LinkToURL: k.URL, LinkToFragment: k.Fragment, RelNofollow: k.RelNofollow, RelMe: k.RelMe, RelTag: k.RelTag,
			Location: k.Location, ContainsHeadline: k.ContainsHeadline, DestinationType: dt, Locality: k.Locality,
			HTMLTagName: tag, Text: k.Text,
		})
	}
	if s.cfg.Tokens {
		ng.Tokens = Tokens(pile)
	}
	return ng
}

// canonicalOf is the canonical URL a page names: its HTML's <link
// rel=canonical> (doc, nil when not parsed), else the Link header the
// fetcher recorded on its file.
func canonicalOf(f *crawl.File, doc *crawl.Document) *string {
	if doc != nil && doc.CanonicalURL != nil {
		return doc.CanonicalURL
	}
	if f != nil {
		return f.CanonicalURL
	}
	return nil
}

// sameTextKeys are the locks a summary of url holds: its text's digest
// (exact copies), its SimHash's four bands (a near copy shares one), its
// own URL and the canonical URL it names (a page and its canonical).
func sameTextKeys(url string, digest []byte, simhash uint64, canonical *string) []string {
	keys := []string{"text " + string(digest), "url " + url}
	if simhash != 0 {
		for i, b := range crawl.SimHashBands(simhash) {
			keys = append(keys, fmt.Sprintf("band%d %04x", i, b))
		}
	}
	if canonical != nil {
		keys = append(keys, "url "+*canonical)
	}
	return keys
}

// lockAll locks every key, in sorted order (so that two callers sharing
// keys never wait on each other crosswise), and returns their unlock;
// if ctx ends first, it takes none and returns ctx's error (a Lambda
// batch whose summaries queue behind one another then hands the rest
// back before its timeout, sqsbatch).
func (k *keyedLocks) lockAll(ctx context.Context, keys []string) (func(), error) {
	keys = slices.Compact(slices.Sorted(slices.Values(keys)))
	unlocks := make([]func(), 0, len(keys))
	unlock := func() {
		for i := len(unlocks) - 1; i >= 0; i-- {
			unlocks[i]()
		}
	}
	for _, key := range keys {
		u, err := k.lock(ctx, key)
		if err != nil {
			unlock()
			return nil, err
		}
		unlocks = append(unlocks, u)
	}
	return unlock, nil
}

// keyedLocks is a mutex per key, made when a key is first locked and
// dropped when its last holder or waiter is done.
type keyedLocks struct {
	mu sync.Mutex
	m  map[string]*keyedLock
	// waiting, if set, is called before waiting for a lock another
	// holds; what it returns is called once the lock is taken.
	waiting func() (taken func())
}

type keyedLock struct {
	held  chan struct{} // holds a value while the lock is taken
	users int
}

// lock locks key and returns its unlock, or ctx's error if ctx ends
// before the lock is taken.
func (k *keyedLocks) lock(ctx context.Context, key string) (func(), error) {
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyedLock{}
	}
	l := k.m[key]
	if l == nil {
		l = &keyedLock{held: make(chan struct{}, 1)}
		k.m[key] = l
	}
	l.users++
	k.mu.Unlock()
	leave := func() {
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.m, key)
		}
		k.mu.Unlock()
	}
	select {
	case l.held <- struct{}{}:
	default:
		if k.waiting != nil {
			defer k.waiting()()
		}
		select {
		case l.held <- struct{}{}:
		case <-ctx.Done():
			leave()
			return nil, ctx.Err()
		}
	}
	return func() { <-l.held; leave() }, nil
}

// gunzipDocument reads a task's gzipped document, up to
// crawl.MaxDocumentBytes.
func gunzipDocument(gz []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("decompress document: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, crawl.MaxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("decompress document: %w", err)
	}
	if len(b) > crawl.MaxDocumentBytes {
		return nil, fmt.Errorf("decompress document: more than %d bytes", crawl.MaxDocumentBytes)
	}
	return b, nil
}
