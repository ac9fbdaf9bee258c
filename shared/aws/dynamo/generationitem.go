package dynamo

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// The generations table holds, under each URL (partition key url, sort
// key sk), three kinds of item:
//
//	sk "head"                          the URL's head: which generation is open
//	sk "gen#<first_seen>#<id>"         one entity generation with its summaries
//	sk "crawl#<crawl_uuid>"            one crawl_summary with its http_summary
//
// first_seen and id are zero-padded to 20 digits, so the generations of a
// URL sort as seed 002 orders them (first_seen, then id) and the latest is
// the last. Attribute names are seed 002's column names where there is
// one; the seed's one-row-per-generation tables (generation_content,
// file_summary, redirect_summary, document_description) are folded into
// the generation item, file_summary, redirect_summary and
// document_description as maps named after their tables.
const (
	skHead        = "head"
	skGenPrefix   = "gen#"
	skCrawlPrefix = "crawl#"
	// skLinksPrefix + a generation's sort key holds its link_summary
	// and its search text, apart from the generation item (sideItem).
	skLinksPrefix = "links#"

	// key
	gaURL = "url"
	gaSK  = "sk"

	// head
	gaOpenID   = "open_id"   // N: the open generation's id; absent when none is open
	gaOpenSK   = "open_sk"   // S: the open generation's sort key
	gaGenCount = "gen_count" // N: how many generations the URL has had
	// N: the open generation's last_seen when a crawl moved it on: kept
	// on the small head item so that the recrawl of an unchanged page
	// does not rewrite the generation item, which DynamoDB bills by its
	// whole size (link summaries, search text). Folded into the
	// generation's own last_seen when it closes; absent otherwise.
	gaOpenLastSeen = "open_last_seen"
	// S and N: the crawl that opened the open generation, and the
	// generation it closed (0 if none). The crawl's summary item is put
	// after the transaction that opens the generation; a redelivery that
	// finds its crawl here and no summary item finishes the summary
	// (finishReplace).
	gaOpenCrawl = "open_crawl"
	gaOpenPrev  = "open_prev"
	// N: when the head named a URL's first generation, which is written
	// after it (openFirst); a head whose generation is still missing
	// firstVoidAfter later is void (the crawl that named it died).
	gaOpenAt = "open_at"

	// entity_generation
	gaGenID           = "entity_generation_id"   // N
	gaGenUUID         = "entity_generation_uuid" // S
	gaFragment        = "url_fragment"           // S, optional
	gaFirstSeen       = "first_seen_unix_utc"    // N
	gaLastSeen        = "last_seen_unix_utc"     // N
	gaConfirmedEnd    = "confirmed_end_unix_utc" // N, absent while open
	gaMarkedDuplicate = "marked_duplicate"       // BOOL
	gaTextPileID      = "text_pile_id"           // N, optional
	gaTextPileDigest  = "text_pile_digest"       // S: hex blake2b-512, optional
	gaTextPileKey     = "text_pile_key"          // S: where the pile's blob is (TextPileKey, or a record in a WARC file); absent for an exact duplicate
	gaFirstSeenKey    = "first_seen_key"         // S: GSI sort key, "<first_seen>#<id>"

	// generation_content
	gaContentKey = "content_key" // S
	gaBodyKey    = "body_key"    // S, optional
	gaNoIndex    = "noindex"     // BOOL

	// duplicate bookkeeping
	gaOriginalDigest = "original_digest"   // S, sparse (GSI originals): open, not duplicate, indexable, text not empty
	gaDupOf          = "dup_of"            // N, sparse (GSI duplicates): the original, while the duplicate status is open
	gaDupOfURL       = "dup_of_url"        // S: the original's url (its key, with dup_of_sk)
	gaDupOfSK        = "dup_of_sk"         // S: the original's sort key
	gaOpenDups       = "open_dups"         // N: open duplicate statuses pointing at this generation
	gaDupHistory     = "duplicate_summary" // L of M: the generation's duplicate statuses, oldest first

	// duplicate_summary entries
	gaDupOfID     = "duplicate_of_entity_generation_id" // N
	gaDupOfURLCol = "duplicate_of_url"                  // S (not a seed column: the original's URL, for display)
	gaDupStart    = "duplicate_status_start_unix_utc"   // N
	gaDupEnd      = "duplicate_status_end_unix_utc"     // N, absent while the status is open

	// file_summary, redirect_summary, document_description: maps
	gaFile         = "file_summary"
	gaFileSize     = "file_size"
	gaMIMEType     = "mimetype"
	gaCanonicalURL = "canonical_url"

	gaRedirect         = "redirect_summary"
	gaToURL            = "to_url"
	gaInfoSource       = "information_source"
	gaBySecurityPolicy = "by_security_policy"
	gaToURLFragment    = "to_url_fragment"

	gaDescription     = "document_description"
	gaTimeCreated     = "time_created_unix_utc"
	gaTimeUpdated     = "time_updated_unix_utc"
	gaPrimaryLanguage = "primary_language"
	gaTitle           = "title"
	gaPrimaryHeadline = "primary_headline"
	gaDescriptionCol  = "description"
	gaIndexiness      = "indexiness"

	// link_summary, compressed
	gaLinks        = "link_summary"     // B: gzip of the JSON link rows, see encodeLinks
	gaLinksKey     = "link_summary_key" // S: where link_summary is kept instead, a record in a WARC file (keepBlobs)
	gaLinkCount    = "link_count"       // N: rows stored in link_summary
	gaLinksDropped = "links_dropped"    // N: rows left out to keep the item small; absent when none

	// search
	gaSearchText      = "search_text"      // S: the start of the text pile's text (items written before search_text_gz)
	gaSearchTextGz    = "search_text_gz"   // B: the same, gzipped: a third of the bytes the item is billed by
	gaSearchHeadlines = "search_headlines" // S: the start of its headlines

	// crawl_summary and http_summary
	gaWasRobotsApproved = "was_robotstxt_approved" // BOOL
	gaCrawlType         = "crawl_type"             // N
	gaCrawlUUID         = "crawl_uuid"             // S
	gaAgentUUID         = "agent_uuid"             // S
	gaTimeStarted       = "time_started_unix_utc"  // N
	gaExitCode          = "exit_code"              // N
	gaRequestDuration   = "request_duration_ms"    // N, optional
	gaHTTP              = "http_summary"           // M: status_code N, etag S (optional); absent without a response
	gaStatusCode        = "status_code"
	gaETag              = "etag"
	gaPendingRehome     = "pending_rehome" // M: a hand-over of duplicates still to finish, see rehomeMarker
)

// Sizes that keep a generation item under DynamoDB's 400 KB.
const (
	// maxLinkBytes caps the compressed link_summary attribute: the first
	// links that fit are kept, the number left out is links_dropped.
	maxLinkBytes = 300 << 10
	// maxSearchText and maxSearchHeadlines cap the text kept for Search.
	maxSearchText      = 8 << 10
	maxSearchHeadlines = 1 << 10
)

// GenerationID is the int64 id the domain gives the generation with the
// given UUID: the UUID's first 8 bytes read big-endian, with the top bit
// cleared so it is positive. DynamoDB has no sequences, and the id must
// be known before the item is written (duplicates refer to it). The
// summarizer's generation UUIDs are random (version 4), which leaves 59
// random bits: the chance that two of ten million generations share an
// id is about 1 in 10,000. A time-ordered UUID (version 7) must not be
// used: its first 6 bytes are a timestamp.
func GenerationID(genUUID string) (int64, error) {
	u, err := uuid.Parse(genUUID)
	if err != nil {
		return 0, crawl.E("generation id of "+genUUID, crawl.KindInvalid, err)
	}
	id := int64(binary.BigEndian.Uint64(u[:8]) &^ (1 << 63))
	if id == 0 {
		return 0, crawl.Errorf(crawl.KindInvalid, "generation id of %s: the UUID's first 8 bytes are zero", genUUID)
	}
	return id, nil
}

// TextPileID is the int64 id of the text pile with the given digest: its
// first 8 bytes read big-endian, top bit cleared (the piles themselves
// are in the blob store, under TextPileKey).
func TextPileID(digest []byte) int64 {
	var b [8]byte
	copy(b[:], digest)
	return int64(binary.BigEndian.Uint64(b[:]) &^ (1 << 63))
}

// genSK is the sort key of a generation item.
func genSK(firstSeen, id int64) string { return skGenPrefix + firstSeenKey(firstSeen, id) }

// firstSeenKey orders generations in the GSIs: first_seen, then id.
func firstSeenKey(firstSeen, id int64) string {
	return fmt.Sprintf("%020d#%020d", firstSeen, id)
}

// crawlSK is the sort key of a crawl summary item.
func crawlSK(crawlUUID string) string { return skCrawlPrefix + crawlUUID }

// textContentKey is the content key of a text whose pile has the given
// digest (hex), as the summarizer makes it.
func textContentKey(digest string) string { return "text:" + digest }

// genItem is a decoded generation item: the fields the store reads back.
type genItem struct {
	URL, SK         string
	ID              int64
	UUID            string
	Fragment        *string
	FirstSeen       int64
	LastSeen        int64 // as stored in the item; see seen
	HeadLastSeen    int64 // the head's open_last_seen, for the open generation; 0 when none
	UnchangedAt     int64 // the last 304 noted on the candidate that confirmed this open generation's content (withUnchanged); 0 when none
	ConfirmedEnd    *int64
	MarkedDuplicate bool
	TextPileID      *int64
	Digest          string // hex; "" without a text pile
	Original        bool   // open, not duplicate, indexable: listed by the originals GSI
	ContentKey      string
	NoIndex         bool
	DupOf           int64 // 0: no open duplicate status
	DupOfURL        string
	DupOfSK         string
	OpenDups        int64
	History         []dupStatus
	File            *crawl.FileSummary
	Redirect        *crawl.RedirectSummary
	Description     *crawl.DocumentDescription
	Links           int // link rows found: stored plus dropped
}

// dupStatus is one duplicate_summary row of a generation.
type dupStatus struct {
	Of    int64
	OfURL string
	Start int64
	End   *int64
}

// generation returns the seed 002 entity_generation row.
func (g *genItem) generation() crawl.EntityGeneration {
	return crawl.EntityGeneration{ID: g.ID, UUID: g.UUID, URL: g.URL, URLFragment: g.Fragment, FirstSeen: g.FirstSeen,
		LastSeen: g.seen(), ConfirmedEnd: g.ConfirmedEnd, MarkedDuplicate: g.MarkedDuplicate, TextPileID: g.TextPileID}
}

// seen is the generation's last_seen: its item's, or the head's when a
// crawl has moved it on since the item was written, or the last 304's
// the candidate keeps (withUnchanged).
func (g *genItem) seen() int64 { return max(g.LastSeen, g.HeadLastSeen, g.UnchangedAt) }

// withUnchanged notes on g, the URL's open generation, the 304s
// RecordCrawl noted on the candidate (DB.unchanged): one started at At
// extends g if Of, when the contentful crawl whose content it confirmed
// started, is within g (first seen at or before it, seen at or after
// it): that crawl's summary opened or extended g. A 304 confirming
// content whose summary is still to come extends nothing yet, and the
// generation that summary opens is extended once it is applied; a
// generation later content opened is not extended by an earlier 304.
func (g *genItem) withUnchanged(marks []unchangedMark) {
	if g == nil {
		return
	}
	seen := max(g.LastSeen, g.HeadLastSeen)
	for _, m := range marks {
		if g.FirstSeen <= m.Of && m.Of <= seen {
			g.UnchangedAt = max(g.UnchangedAt, m.At)
		}
	}
}

// withHead notes the head item's open_last_seen on g when the head names
// g as the URL's open generation.
func (g *genItem) withHead(head map[string]types.AttributeValue) error {
	if g == nil || head == nil {
		return nil
	}
	r := fxReader{m: head}
	if id, ls := r.int(gaOpenID), r.int(gaOpenLastSeen); r.err != nil {
		return fmt.Errorf("head item: %w", r.err)
	} else if id == g.ID {
		g.HeadLastSeen = ls
	}
	return nil
}

// key returns the item's primary key.
func (g *genItem) key() map[string]types.AttributeValue { return genKey(g.URL, g.SK) }

// openStatus returns the index of the generation's open duplicate
// status, or -1.
func (g *genItem) openStatus() int {
	for i := len(g.History) - 1; i >= 0; i-- {
		if g.History[i].End == nil {
			return i
		}
	}
	return -1
}

// historyEnded returns the duplicate statuses with the open one ended at at.
func (g *genItem) historyEnded(at int64) []dupStatus {
	h := append([]dupStatus(nil), g.History...)
	if i := g.openStatus(); i >= 0 {
		h[i].End = &at
	}
	return h
}

// genKey is the primary key of a generations table item.
func genKey(u, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{gaURL: fxS(u), gaSK: fxS(sk)}
}

// newGenItem builds the item of a new generation, and reports how many
// links it left out.
func newGenItem(u string, id int64, n *crawl.NewGeneration, orig *genItem) (map[string]types.AttributeValue, int, error) {
	g := n.Generation
	it := map[string]types.AttributeValue{
		gaURL: fxS(u), gaSK: fxS(genSK(g.FirstSeen, id)),
		gaGenID: fxN(id), gaGenUUID: fxS(g.UUID),
		gaFirstSeen: fxN(g.FirstSeen), gaLastSeen: fxN(g.LastSeen),
		gaFirstSeenKey:    fxS(firstSeenKey(g.FirstSeen, id)),
		gaMarkedDuplicate: fxBool(n.DuplicateOf != 0),
		gaNoIndex:         fxBool(n.NoIndex),
		gaOpenDups:        fxN(0),
	}
	fxPutOpt(it, gaFragment, fxOptS(g.URLFragment))
	if n.TextPile == nil || n.ContentKey != textContentKey(hex.EncodeToString(n.TextPile.Digest)) {
		// A text's content key is its pile's digest: not stored twice
		// (decodeGenItem makes it again), 140 bytes of every item.
		it[gaContentKey] = fxS(n.ContentKey)
	}
	if n.BodyKey != "" {
		it[gaBodyKey] = fxS(n.BodyKey)
	}
	if p := n.TextPile; p != nil {
		digest := hex.EncodeToString(p.Digest)
		it[gaTextPileID] = fxN(TextPileID(p.Digest))
		it[gaTextPileDigest] = fxS(digest)
		if n.DuplicateOf == 0 && !n.NoIndex && !p.Empty() {
			// Empty piles are never compared (design.md), and would all
			// share one hot index key.
			it[gaOriginalDigest] = fxS(digest)
		}
		if t := searchText(p.Text); t != "" {
			gz, err := gzipString(t)
			if err != nil {
				return nil, 0, err
			}
			it[gaSearchTextGz] = &types.AttributeValueMemberB{Value: gz}
		}
		if h := searchHeadlines(p.BigHeadlines, p.SmallHeadlines); h != "" {
			it[gaSearchHeadlines] = fxS(h)
		}
	}
	if orig != nil {
		it[gaDupOf] = fxN(orig.ID)
		it[gaDupOfURL] = fxS(orig.URL)
		it[gaDupOfSK] = fxS(orig.SK)
		it[gaDupHistory] = encodeHistory([]dupStatus{{Of: orig.ID, OfURL: orig.URL, Start: g.FirstSeen}})
	}
	if f := n.File; f != nil {
		m := map[string]types.AttributeValue{}
		fxPutOpt(m, gaFileSize, fxOptN(f.FileSize))
		fxPutOpt(m, gaMIMEType, fxOptS(f.MIMEType))
		fxPutOpt(m, gaCanonicalURL, fxOptS(f.CanonicalURL))
		it[gaFile] = &types.AttributeValueMemberM{Value: m}
	}
	if r := n.Redirect; r != nil {
		m := map[string]types.AttributeValue{gaToURL: fxS(r.ToURL), gaInfoSource: fxN(int64(r.InformationSource)),
			gaBySecurityPolicy: fxBool(r.BySecurityPolicy)}
		fxPutOpt(m, gaToURLFragment, fxOptS(r.ToURLFragment))
		it[gaRedirect] = &types.AttributeValueMemberM{Value: m}
	}
	if dd := n.Description; dd != nil {
		m := map[string]types.AttributeValue{gaIndexiness: fxN(int64(dd.Indexiness))}
		fxPutOpt(m, gaTimeCreated, fxOptN(dd.TimeCreated))
		fxPutOpt(m, gaTimeUpdated, fxOptN(dd.TimeUpdated))
		fxPutOpt(m, gaPrimaryLanguage, fxOptS(dd.PrimaryLanguage))
		fxPutOpt(m, gaTitle, fxOptS(dd.Title))
		fxPutOpt(m, gaPrimaryHeadline, fxOptS(dd.PrimaryHeadline))
		fxPutOpt(m, gaDescriptionCol, fxOptS(dd.Description))
		it[gaDescription] = &types.AttributeValueMemberM{Value: m}
	}
	if len(n.Links) > 0 {
		blob, kept, err := encodeLinks(n.Links, maxLinkBytes)
		if err != nil {
			return nil, 0, err
		}
		it[gaLinks] = &types.AttributeValueMemberB{Value: blob}
		it[gaLinkCount] = fxN(int64(kept))
		if dropped := len(n.Links) - kept; dropped > 0 {
			it[gaLinksDropped] = fxN(int64(dropped))
			return it, dropped, nil
		}
	}
	return it, 0, nil
}

// GenIndexAttributes are the attributes the originals and duplicates
// indexes project beside their keys (the table's keys, url and sk, and
// their own): what decodeGenItem needs of a generation found through
// them (its id, times, content, duplicate bookkeeping), without its
// search text, headlines, file, redirect or document summaries, which
// no reader of an index uses. template.yaml lists the same.
var GenIndexAttributes = []string{gaGenID, gaGenUUID, gaFragment, gaFirstSeen, gaLastSeen, gaConfirmedEnd,
	gaMarkedDuplicate, gaTextPileID, gaTextPileDigest, gaContentKey, gaNoIndex, gaOriginalDigest, gaDupOf,
	gaDupOfURL, gaDupOfSK, gaOpenDups, gaDupHistory}

// decodeGenItem reads a generation item. A malformed attribute (a
// wrong type, a number that does not parse), or a missing id or time, is
// an error: the item is never read with a field dropped or zeroed.
func decodeGenItem(it map[string]types.AttributeValue) (*genItem, error) {
	r := fxReader{m: it}
	g := &genItem{
		URL: r.str(gaURL), SK: r.str(gaSK), UUID: r.str(gaGenUUID), Fragment: r.optStr(gaFragment),
		ConfirmedEnd: r.optInt(gaConfirmedEnd), MarkedDuplicate: r.bool(gaMarkedDuplicate),
		TextPileID: r.optInt(gaTextPileID), Digest: r.str(gaTextPileDigest), ContentKey: r.str(gaContentKey),
		NoIndex: r.bool(gaNoIndex), Original: it[gaOriginalDigest] != nil, DupOfURL: r.str(gaDupOfURL), DupOfSK: r.str(gaDupOfSK),
		DupOf: r.int(gaDupOf), OpenDups: r.int(gaOpenDups), Links: int(r.int(gaLinkCount) + r.int(gaLinksDropped)),
	}
	if _, stored := it[gaContentKey]; !stored && g.Digest != "" {
		g.ContentKey = textContentKey(g.Digest) // newGenItem leaves it out
	}
	for _, a := range []struct {
		name string
		to   *int64
	}{{gaGenID, &g.ID}, {gaFirstSeen, &g.FirstSeen}, {gaLastSeen, &g.LastSeen}} {
		v := r.optInt(a.name)
		if v == nil && r.err == nil {
			r.err = fmt.Errorf("no %s", a.name)
		}
		if v != nil {
			*a.to = *v
		}
	}
	for _, m := range r.maps(gaDupHistory) {
		h := fxReader{m: m}
		g.History = append(g.History, dupStatus{Of: h.int(gaDupOfID), OfURL: h.str(gaDupOfURLCol), Start: h.int(gaDupStart), End: h.optInt(gaDupEnd)})
		r.nested(gaDupHistory, h)
	}
	if m := r.mapAttr(gaFile); m != nil {
		f := fxReader{m: m}
		g.File = &crawl.FileSummary{GenerationID: g.ID, FileSize: f.optInt(gaFileSize), MIMEType: f.optStr(gaMIMEType), CanonicalURL: f.optStr(gaCanonicalURL)}
		r.nested(gaFile, f)
	}
	if m := r.mapAttr(gaRedirect); m != nil {
		f := fxReader{m: m}
		g.Redirect = &crawl.RedirectSummary{GenerationID: g.ID, ToURL: f.str(gaToURL), InformationSource: crawl.InformationSource(f.int(gaInfoSource)),
			BySecurityPolicy: f.bool(gaBySecurityPolicy), ToURLFragment: f.optStr(gaToURLFragment)}
		r.nested(gaRedirect, f)
	}
	if m := r.mapAttr(gaDescription); m != nil {
		f := fxReader{m: m}
		g.Description = &crawl.DocumentDescription{GenerationID: g.ID, TimeCreated: f.optInt(gaTimeCreated),
			TimeUpdated: f.optInt(gaTimeUpdated), PrimaryLanguage: f.optStr(gaPrimaryLanguage), Title: f.optStr(gaTitle),
			PrimaryHeadline: f.optStr(gaPrimaryHeadline), Description: f.optStr(gaDescriptionCol), Indexiness: int(f.int(gaIndexiness))}
		r.nested(gaDescription, f)
	}
	if r.err != nil {
		return nil, fmt.Errorf("generation item %s %s: %w", g.URL, g.SK, r.err)
	}
	return g, nil
}

// encodeHistory encodes duplicate_summary entries.
func encodeHistory(h []dupStatus) types.AttributeValue {
	l := make([]types.AttributeValue, 0, len(h))
	for _, e := range h {
		m := map[string]types.AttributeValue{gaDupOfID: fxN(e.Of), gaDupOfURLCol: fxS(e.OfURL), gaDupStart: fxN(e.Start)}
		fxPutOpt(m, gaDupEnd, fxOptN(e.End))
		l = append(l, &types.AttributeValueMemberM{Value: m})
	}
	return &types.AttributeValueMemberL{Value: l}
}

// linkRow is one link_summary row as stored in the compressed
// link_summary attribute: short JSON names, flags as one bit set.
type linkRow struct {
	URL      string                 `json:"u"`
	Fragment *string                `json:"f,omitempty"`
	Flags    uint32                 `json:"b,omitempty"` // crawl.LinkSummary.Flags
	Dest     *crawl.DestinationType `json:"d,omitempty"`
	Locality crawl.Locality         `json:"l,omitempty"`
	Tag      *string                `json:"g,omitempty"`
	Text     *string                `json:"x,omitempty"`
}

// encodeLinks returns the gzip-compressed JSON of the first links whose
// encoding fits in max bytes, and how many that is.
func encodeLinks(links []crawl.LinkSummary, max int) ([]byte, int, error) {
	rows := make([]linkRow, len(links))
	for i := range links {
		l := &links[i]
		rows[i] = linkRow{URL: l.LinkToURL, Fragment: l.LinkToFragment, Flags: l.Flags(), Dest: l.DestinationType,
			Locality: l.Locality, Tag: l.HTMLTagName, Text: l.Text}
	}
	enc := func(n int) ([]byte, error) {
		js, err := json.Marshal(rows[:n])
		if err != nil {
			return nil, fmt.Errorf("encode links: %w", err)
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		if _, err := zw.Write(js); err != nil {
			return nil, fmt.Errorf("compress links: %w", err)
		}
		if err := zw.Close(); err != nil {
			return nil, fmt.Errorf("compress links: %w", err)
		}
		return b.Bytes(), nil
	}
	all, err := enc(len(rows))
	if err != nil || len(all) <= max {
		return all, len(rows), err
	}
	// Too big: the longest prefix that fits, by bisection.
	lo, hi, best := 0, len(rows), []byte(nil)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		b, err := enc(mid)
		if err != nil {
			return nil, 0, err
		}
		if len(b) <= max {
			lo, best = mid, b
		} else {
			hi = mid - 1
		}
	}
	if best == nil {
		if best, err = enc(0); err != nil {
			return nil, 0, err
		}
	}
	return best, lo, nil
}

// gzipString compresses s.
func gzipString(s string) ([]byte, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := io.WriteString(zw, s); err != nil {
		return nil, fmt.Errorf("compress text: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress text: %w", err)
	}
	return b.Bytes(), nil
}

// gunzipString reads what gzipString wrote, at most max bytes of it.
func gunzipString(b []byte, max int64) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return "", fmt.Errorf("decompress text: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, max))
	if err != nil {
		return "", fmt.Errorf("decompress text: %w", err)
	}
	return string(out), nil
}

// sideItem moves a new generation item's bulk, its search text and its
// link_summary (when keepBlobs did not keep that in a WARC file), to an
// item of its own (the generation's key with
// skLinksPrefix), which ApplySummary writes with a plain put before its
// transaction: they are most of a page's bytes, and DynamoDB bills a
// transaction's writes twice, and every later update of the generation
// (closing it, handing its duplicates on) by the whole item's size.
// Nothing on the crawl path reads it back; Search joins it to its
// generation (scanSearchable). It returns nil when there is nothing to
// move.
func sideItem(gen map[string]types.AttributeValue) map[string]types.AttributeValue {
	sk, _ := fxReadS(gen, gaSK) // newGenItem's own string
	side := map[string]types.AttributeValue{gaURL: gen[gaURL], gaSK: fxS(skLinksPrefix + sk), gaGenID: gen[gaGenID]}
	// The pile's key is what Search reads the text by when the item has
	// none (searchFromPile): it moves as the search text did.
	moved := false
	for _, a := range []string{gaLinks, gaSearchTextGz, gaSearchHeadlines, gaTextPileKey} {
		if v, ok := gen[a]; ok {
			side[a] = v
			delete(gen, a)
			moved = true
		}
	}
	if !moved {
		return nil
	}
	// Where the links and the body are kept: written once, read by
	// nothing on the crawl path, and on the documentation tree what took
	// the generation item past 1 KiB (two write units, four in the
	// transaction).
	for _, a := range []string{gaLinksKey, gaBodyKey} {
		if v, ok := gen[a]; ok {
			side[a] = v
			delete(gen, a)
		}
	}
	return side
}

// decodeLinks reads a link_summary attribute back; the rows are numbered
// from 1 in their order on the page.
func decodeLinks(blob []byte, genID int64) ([]crawl.LinkSummary, error) {
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, fmt.Errorf("decompress links: %w", err)
	}
	js, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("decompress links: %w", err)
	}
	var rows []linkRow
	if err := json.Unmarshal(js, &rows); err != nil {
		return nil, fmt.Errorf("decode links: %w", err)
	}
	out := make([]crawl.LinkSummary, len(rows))
	for i, r := range rows {
		l := crawl.LinkSummary{ID: int64(i + 1), GenerationID: genID, LinkToURL: r.URL, LinkToFragment: r.Fragment,
			DestinationType: r.Dest, Locality: r.Locality, HTMLTagName: r.Tag, Text: r.Text}
		l.SetFlags(r.Flags)
		out[i] = l
	}
	return out, nil
}

// searchText is what Search ranks of a pile's text: its start.
func searchText(text string) string { return clipText(text, maxSearchText) }

// searchHeadlines is what Search ranks of a pile's headlines.
func searchHeadlines(big, small string) string {
	return clipText(strings.TrimSpace(big+"\n"+small), maxSearchHeadlines)
}

// clipText returns at most max bytes of s, cut at a word boundary when there
// is one in the last quarter, and never inside a UTF-8 sequence.
func clipText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexAny(s[:cut], " \t\n"); sp > max*3/4 {
		cut = sp
	}
	return s[:cut]
}
