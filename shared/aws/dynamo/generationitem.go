package dynamo

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
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

	// key
	gaURL = "url"
	gaSK  = "sk"

	// head
	gaOpenID   = "open_id"   // N: the open generation's id; absent when none is open
	gaOpenSK   = "open_sk"   // S: the open generation's sort key
	gaGenCount = "gen_count" // N: how many generations the URL has had

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
	gaLinks        = "link_summary"  // B: gzip of the JSON link rows, see encodeLinks
	gaLinkCount    = "link_count"    // N: rows stored in link_summary
	gaLinksDropped = "links_dropped" // N: rows left out to keep the item small; absent when none

	// search
	gaSearchText      = "search_text"      // S: the start of the text pile's text
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

// genItem is a decoded generation item: the fields the store reads back.
type genItem struct {
	URL, SK         string
	ID              int64
	UUID            string
	Fragment        *string
	FirstSeen       int64
	LastSeen        int64
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
		LastSeen: g.LastSeen, ConfirmedEnd: g.ConfirmedEnd, MarkedDuplicate: g.MarkedDuplicate, TextPileID: g.TextPileID}
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
	return map[string]types.AttributeValue{gaURL: gS(u), gaSK: gS(sk)}
}

// newGenItem builds the item of a new generation, and reports how many
// links it left out.
func newGenItem(u string, id int64, n *crawl.NewGeneration, orig *genItem) (map[string]types.AttributeValue, int, error) {
	g := n.Generation
	it := map[string]types.AttributeValue{
		gaURL: gS(u), gaSK: gS(genSK(g.FirstSeen, id)),
		gaGenID: gN(id), gaGenUUID: gS(g.UUID),
		gaFirstSeen: gN(g.FirstSeen), gaLastSeen: gN(g.LastSeen),
		gaFirstSeenKey:    gS(firstSeenKey(g.FirstSeen, id)),
		gaMarkedDuplicate: gBool(n.DuplicateOf != 0),
		gaContentKey:      gS(n.ContentKey),
		gaNoIndex:         gBool(n.NoIndex),
		gaOpenDups:        gN(0),
	}
	gPutS(it, gaFragment, g.URLFragment)
	if n.BodyKey != "" {
		it[gaBodyKey] = gS(n.BodyKey)
	}
	if p := n.TextPile; p != nil {
		digest := hex.EncodeToString(p.Digest)
		it[gaTextPileID] = gN(TextPileID(p.Digest))
		it[gaTextPileDigest] = gS(digest)
		if n.DuplicateOf == 0 && !n.NoIndex && !p.Empty() {
			// Empty piles are never compared (design.md), and would all
			// share one hot index key.
			it[gaOriginalDigest] = gS(digest)
		}
		if t := clipText(p.Text, maxSearchText); t != "" {
			it[gaSearchText] = gS(t)
		}
		if h := clipText(strings.TrimSpace(p.BigHeadlines+"\n"+p.SmallHeadlines), maxSearchHeadlines); h != "" {
			it[gaSearchHeadlines] = gS(h)
		}
	}
	if orig != nil {
		it[gaDupOf] = gN(orig.ID)
		it[gaDupOfURL] = gS(orig.URL)
		it[gaDupOfSK] = gS(orig.SK)
		it[gaDupHistory] = encodeHistory([]dupStatus{{Of: orig.ID, OfURL: orig.URL, Start: g.FirstSeen}})
	}
	if f := n.File; f != nil {
		m := map[string]types.AttributeValue{}
		gPutN(m, gaFileSize, f.FileSize)
		gPutS(m, gaMIMEType, f.MIMEType)
		gPutS(m, gaCanonicalURL, f.CanonicalURL)
		it[gaFile] = &types.AttributeValueMemberM{Value: m}
	}
	if r := n.Redirect; r != nil {
		m := map[string]types.AttributeValue{gaToURL: gS(r.ToURL), gaInfoSource: gN(int64(r.InformationSource)),
			gaBySecurityPolicy: gBool(r.BySecurityPolicy)}
		gPutS(m, gaToURLFragment, r.ToURLFragment)
		it[gaRedirect] = &types.AttributeValueMemberM{Value: m}
	}
	if dd := n.Description; dd != nil {
		m := map[string]types.AttributeValue{gaIndexiness: gN(int64(dd.Indexiness))}
		gPutN(m, gaTimeCreated, dd.TimeCreated)
		gPutN(m, gaTimeUpdated, dd.TimeUpdated)
		gPutS(m, gaPrimaryLanguage, dd.PrimaryLanguage)
		gPutS(m, gaTitle, dd.Title)
		gPutS(m, gaPrimaryHeadline, dd.PrimaryHeadline)
		gPutS(m, gaDescriptionCol, dd.Description)
		it[gaDescription] = &types.AttributeValueMemberM{Value: m}
	}
	if len(n.Links) > 0 {
		blob, kept, err := encodeLinks(n.Links, maxLinkBytes)
		if err != nil {
			return nil, 0, err
		}
		it[gaLinks] = &types.AttributeValueMemberB{Value: blob}
		it[gaLinkCount] = gN(int64(kept))
		if dropped := len(n.Links) - kept; dropped > 0 {
			it[gaLinksDropped] = gN(int64(dropped))
			return it, dropped, nil
		}
	}
	return it, 0, nil
}

// decodeGenItem reads a generation item.
func decodeGenItem(it map[string]types.AttributeValue) (*genItem, error) {
	g := &genItem{
		URL: gGetS(it, gaURL), SK: gGetS(it, gaSK), UUID: gGetS(it, gaGenUUID), Fragment: gGetOptS(it, gaFragment),
		ConfirmedEnd: gGetOptN(it, gaConfirmedEnd), MarkedDuplicate: gGetBool(it, gaMarkedDuplicate),
		TextPileID: gGetOptN(it, gaTextPileID), Digest: gGetS(it, gaTextPileDigest), ContentKey: gGetS(it, gaContentKey),
		NoIndex: gGetBool(it, gaNoIndex), Original: it[gaOriginalDigest] != nil, DupOfURL: gGetS(it, gaDupOfURL), DupOfSK: gGetS(it, gaDupOfSK),
	}
	var err error
	num := func(name string) int64 {
		v := gGetOptN(it, name)
		if v == nil {
			if err == nil {
				err = fmt.Errorf("generation item %s %s has no %s", g.URL, g.SK, name)
			}
			return 0
		}
		return *v
	}
	g.ID, g.FirstSeen, g.LastSeen = num(gaGenID), num(gaFirstSeen), num(gaLastSeen)
	if err != nil {
		return nil, err
	}
	g.DupOf = gGetN(it, gaDupOf)
	g.OpenDups = gGetN(it, gaOpenDups)
	g.Links = int(gGetN(it, gaLinkCount) + gGetN(it, gaLinksDropped))
	if l, ok := it[gaDupHistory].(*types.AttributeValueMemberL); ok {
		for _, e := range l.Value {
			m, ok := e.(*types.AttributeValueMemberM)
			if !ok {
				return nil, fmt.Errorf("generation item %s %s: duplicate_summary entry is not a map", g.URL, g.SK)
			}
			g.History = append(g.History, dupStatus{Of: gGetN(m.Value, gaDupOfID), OfURL: gGetS(m.Value, gaDupOfURLCol),
				Start: gGetN(m.Value, gaDupStart), End: gGetOptN(m.Value, gaDupEnd)})
		}
	}
	if m, ok := it[gaFile].(*types.AttributeValueMemberM); ok {
		g.File = &crawl.FileSummary{GenerationID: g.ID, FileSize: gGetOptN(m.Value, gaFileSize),
			MIMEType: gGetOptS(m.Value, gaMIMEType), CanonicalURL: gGetOptS(m.Value, gaCanonicalURL)}
	}
	if m, ok := it[gaRedirect].(*types.AttributeValueMemberM); ok {
		g.Redirect = &crawl.RedirectSummary{GenerationID: g.ID, ToURL: gGetS(m.Value, gaToURL),
			InformationSource: crawl.InformationSource(gGetN(m.Value, gaInfoSource)),
			BySecurityPolicy:  gGetBool(m.Value, gaBySecurityPolicy), ToURLFragment: gGetOptS(m.Value, gaToURLFragment)}
	}
	if m, ok := it[gaDescription].(*types.AttributeValueMemberM); ok {
		g.Description = &crawl.DocumentDescription{GenerationID: g.ID, TimeCreated: gGetOptN(m.Value, gaTimeCreated),
			TimeUpdated: gGetOptN(m.Value, gaTimeUpdated), PrimaryLanguage: gGetOptS(m.Value, gaPrimaryLanguage),
			Title: gGetOptS(m.Value, gaTitle), PrimaryHeadline: gGetOptS(m.Value, gaPrimaryHeadline),
			Description: gGetOptS(m.Value, gaDescriptionCol), Indexiness: int(gGetN(m.Value, gaIndexiness))}
	}
	return g, nil
}

// encodeHistory encodes duplicate_summary entries.
func encodeHistory(h []dupStatus) types.AttributeValue {
	l := make([]types.AttributeValue, 0, len(h))
	for _, e := range h {
		m := map[string]types.AttributeValue{gaDupOfID: gN(e.Of), gaDupOfURLCol: gS(e.OfURL), gaDupStart: gN(e.Start)}
		gPutN(m, gaDupEnd, e.End)
		l = append(l, &types.AttributeValueMemberM{Value: m})
	}
	return &types.AttributeValueMemberL{Value: l}
}

// linkRow is one link_summary row as stored in the compressed
// link_summary attribute: short JSON names, flags as one bit set.
type linkRow struct {
	URL      string                 `json:"u"`
	Fragment *string                `json:"f,omitempty"`
	Flags    uint32                 `json:"b,omitempty"` // see linkFlags
	Dest     *crawl.DestinationType `json:"d,omitempty"`
	Locality crawl.Locality         `json:"l,omitempty"`
	Tag      *string                `json:"g,omitempty"`
	Text     *string                `json:"x,omitempty"`
}

// linkFlags lists a link row's flag bits, lowest first: rel_nofollow,
// rel_me, rel_tag, contains_headline, then the location signature in
// seed 002's column order (in_header ... in_paragraph).
func linkFlags(l *crawl.LinkSummary) []*bool {
	p := &l.Location
	return []*bool{&l.RelNofollow, &l.RelMe, &l.RelTag, &l.ContainsHeadline, &p.InHeader, &p.InFooter, &p.InAside,
		&p.InNav, &p.InForm, &p.InMain, &p.InArticle, &p.InSection, &p.InTable, &p.InFigure, &p.InAddress, &p.InCode,
		&p.InHeadline, &p.InList, &p.InParagraph}
}

// encodeLinks returns the gzip-compressed JSON of the first links whose
// encoding fits in max bytes, and how many that is.
func encodeLinks(links []crawl.LinkSummary, max int) ([]byte, int, error) {
	rows := make([]linkRow, len(links))
	for i := range links {
		l := links[i]
		var flags uint32
		for bit, f := range linkFlags(&l) {
			if *f {
				flags |= 1 << bit
			}
		}
		rows[i] = linkRow{URL: l.LinkToURL, Fragment: l.LinkToFragment, Flags: flags, Dest: l.DestinationType,
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
		for bit, f := range linkFlags(&l) {
			*f = r.Flags&(1<<bit) != 0
		}
		out[i] = l
	}
	return out, nil
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

// Attribute value helpers.

func gS(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func gN(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func gBool(b bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: b} }

func gPutS(m map[string]types.AttributeValue, name string, v *string) {
	if v != nil {
		m[name] = gS(*v)
	}
}

func gPutN(m map[string]types.AttributeValue, name string, v *int64) {
	if v != nil {
		m[name] = gN(*v)
	}
}

func gGetS(m map[string]types.AttributeValue, name string) string {
	if v, ok := m[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func gGetOptS(m map[string]types.AttributeValue, name string) *string {
	if v, ok := m[name].(*types.AttributeValueMemberS); ok {
		s := v.Value
		return &s
	}
	return nil
}

func gGetOptN(m map[string]types.AttributeValue, name string) *int64 {
	if v, ok := m[name].(*types.AttributeValueMemberN); ok {
		if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil {
			return &n
		}
	}
	return nil
}

func gGetN(m map[string]types.AttributeValue, name string) int64 {
	if v := gGetOptN(m, name); v != nil {
		return *v
	}
	return 0
}

func gGetBool(m map[string]types.AttributeValue, name string) bool {
	v, ok := m[name].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}

// sumExpr builds an expression's placeholders: every attribute name goes
// through ExpressionAttributeNames (DynamoDB reserves words such as URL).
type sumExpr struct {
	names  map[string]string
	byName map[string]string
	values map[string]types.AttributeValue
}

func newSumExpr() *sumExpr {
	return &sumExpr{names: map[string]string{}, byName: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// n returns the placeholder of an attribute name; a dotted path gets one
// per element.
func (e *sumExpr) n(path string) string {
	parts := strings.Split(path, ".")
	for i, p := range parts {
		ph, ok := e.byName[p]
		if !ok {
			ph = "#n" + strconv.Itoa(len(e.byName))
			e.byName[p], e.names[ph] = ph, p
		}
		parts[i] = ph
	}
	return strings.Join(parts, ".")
}

// v returns the placeholder of a value.
func (e *sumExpr) v(av types.AttributeValue) string {
	ph := ":v" + strconv.Itoa(len(e.values))
	e.values[ph] = av
	return ph
}

// Names and Values return the maps for the request (nil when empty, as
// DynamoDB requires).
func (e *sumExpr) Names() map[string]string {
	if len(e.names) == 0 {
		return nil
	}
	return e.names
}

func (e *sumExpr) Values() map[string]types.AttributeValue {
	if len(e.values) == 0 {
		return nil
	}
	return e.values
}
