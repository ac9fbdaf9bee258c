package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// Status returns what the crawl knows of a normalized URL, or
// crawl.ErrNotFound, as the SQLite store's Status does. It reads the
// candidate (twice: GetCandidate and CrawlCount), the crawl log item of
// the candidate's last crawl (for its message), the URL's latest
// generation (a Query) and its head (the number of generations).
//
// The message is that of the crawl the candidate was last released as:
// while a recrawl is queued, or once the crawl log item has expired,
// there is none (the SQLite store keeps every crawl's log).
func (d *DB) Status(ctx context.Context, u string) (crawl.URLStatus, error) {
	read, err := d.getCandidate(ctx, u)
	if err != nil {
		return crawl.URLStatus{}, fmt.Errorf("status of %s: %w", u, err)
	}
	c := read.c
	s := crawl.NewURLStatus(c)
	s.Crawls = read.crawls
	if c.CrawlUUID != "" {
		cr, err := d.GetCrawl(ctx, c.CrawlUUID)
		switch {
		case err == nil:
			s.Message = cr.Log.Message
			if n := len(cr.Requests); n > 0 {
				s.HTTPStatus = cr.Requests[n-1].HTTPStatusCode
			}
		case !errors.Is(err, crawl.ErrNotFound):
			return s, fmt.Errorf("status of %s: %w", u, err)
		}
	}
	g, err := d.latestGeneration(ctx, u)
	if err != nil {
		return s, fmt.Errorf("status of %s: %w", u, err)
	}
	if g != nil {
		head, err := d.getGenTableItem(ctx, u, skHead)
		if err != nil {
			return s, fmt.Errorf("status of %s: %w", u, err)
		}
		count, err := fxReadN(head, gaGenCount)
		if err != nil {
			return s, fmt.Errorf("status of %s: head item: %w", u, err)
		}
		if err := g.withHead(head); err != nil {
			return s, fmt.Errorf("status of %s: %w", u, err)
		}
		if g.ConfirmedEnd == nil {
			g.withUnchanged(read.unchanged)
		}
		v := &crawl.GenerationView{UUID: g.UUID, FirstSeen: g.FirstSeen, LastSeen: g.seen(), ConfirmedEnd: g.ConfirmedEnd,
			MarkedDuplicate: g.MarkedDuplicate, DuplicateOf: g.shownDuplicateOf(), Generations: int(count), Links: g.Links}
		if dd := g.Description; dd != nil {
			v.Title, v.Headline, v.Description, v.Language = dd.Title, dd.PrimaryHeadline, dd.Description, dd.PrimaryLanguage
		}
		if f := g.File; f != nil {
			v.MIMEType, v.FileSize = f.MIMEType, f.FileSize
		}
		if r := g.Redirect; r != nil {
			to := r.ToURL
			v.RedirectTo = &to
		}
		s.Generation = v
		if g.MarkedDuplicate && g.ConfirmedEnd == nil && c.LastCrawlExitCode != nil && c.LastCrawlExitCode.Contentful() {
			s.Status = crawl.StatusDuplicate
			// Exact when its text is its original's (not a near or
			// canonical duplicate).
			orig, err := d.getGen(ctx, g.DupOfURL, g.DupOfSK)
			if err != nil {
				return s, fmt.Errorf("status of %s: %w", u, err)
			}
			s.ExactDuplicate = orig != nil && orig.Digest == g.Digest
		}
	}
	s.State = crawl.SeedState(c, s.Status, time.Now().Unix())
	return s.WithTimes(), nil
}

// shownDuplicateOf is the URL Status shows as what the generation
// duplicates: that of its open duplicate status, else of the one that
// ended last (what it last duplicated: Status shows marked_duplicate
// false beside it); "" when it never was a duplicate. The SQLite
// store's Status picks the same.
func (g *genItem) shownDuplicateOf() string {
	best := -1
	for i, h := range g.History {
		switch {
		case h.End == nil:
			return h.OfURL
		case best < 0 || *h.End >= *g.History[best].End:
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return g.History[best].OfURL
}

// latestGeneration returns the URL's latest generation (by first_seen,
// then id), or nil.
func (d *DB) latestGeneration(ctx context.Context, u string) (*genItem, error) {
	if !keyable(u) {
		return nil, nil
	}
	e := &fxExpr{}
	out, err := d.api.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.t.Generations),
		KeyConditionExpression:    aws.String(e.name(gaURL) + " = " + e.value(fxS(u)) + " AND begins_with(" + e.name(gaSK) + ", " + e.value(fxS(skGenPrefix)) + ")"),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(1),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("latest generation: %w", err)
	}
	if len(out.Items) == 0 {
		return nil, nil
	}
	return decodeGenItem(out.Items[0])
}

// The search fields and their BM25 weights (the SQLite store's: title
// 10, description 4, text 1, big and small headlines 5 and 3).
const (
	fieldTitle = iota
	fieldDescription
	fieldText
	fieldHeadlines
	nFields
)

var fieldWeights = [nFields]float64{10, 4, 1, 4}

// snippetTokens is how many tokens a snippet shows (FTS5 snippet's 16).
const snippetTokens = 16

// Search finds the open, non-duplicate, indexable generations whose
// title, description, headlines or text contain any word of the query
// (case and accents ignored, as FTS5's unicode61 tokenizer does), best
// first, ranked as the SQLite store ranks (crawl/search.go): BM25 with
// its field weights, the title bonus and the proximity bonus; Rank is
// the score, larger better.
//
// DynamoDB has no full-text index: Search Scans the whole generations
// table (head and crawl summary items included), filtering on the
// server and ranking here. That is fine for a CLI query over a modest
// crawl, and wrong for anything serving users: a Scan is billed by the
// bytes read before the filter, one read request unit per 8 KB
// (eventually consistent), so a table of 1 GB costs about 130,000
// read units, about $0.016 at on-demand prices, and a few seconds per
// GB. Only the first 8 KiB of a page's text and 1 KiB of its headlines
// are searchable; a multi-word phrase is matched word by word.
func (d *DB) Search(ctx context.Context, query string, limit int) ([]crawl.SearchHit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, crawl.E("search", crawl.KindInvalid, fmt.Errorf("empty query"))
	}
	// The query's words, common ones left out when others remain, each
	// with its forms: itself and, for a plural, its singular
	// (crawl/search.go). Every form is a BM25 term, as every phrase of
	// an FTS5 query is.
	var all, kept [][]string
	seen := map[string]bool{}
	searchTokens(query, func(_, _ int, t string) {
		if seen[t] {
			return
		}
		seen[t] = true
		w := append([]string{t}, crawl.Singulars(t)...)
		all = append(all, w)
		if !crawl.StopWord(t) {
			kept = append(kept, w)
		}
	})
	if len(kept) == 0 {
		kept = all
	}
	kept = kept[:min(len(kept), crawl.MaxQueryTerms)]
	if len(kept) == 0 || limit == 0 {
		return nil, nil
	}
	c := &searchCorpus{seen: map[string]bool{}}
	for _, w := range kept {
		var forms []int
		for _, f := range w {
			if !c.seen[f] {
				c.seen[f] = true
				c.terms = append(c.terms, f)
			}
			forms = append(forms, slices.Index(c.terms, f))
		}
		c.words = append(c.words, forms)
		c.titlePlurals = append(c.titlePlurals, crawl.Plurals(w[0]))
	}
	c.changelogPenalty = crawl.ChangelogPenalty(query)
	c.df = make([]int, len(c.terms))
	if err := d.scanSearchable(ctx, c.add); err != nil {
		return nil, fmt.Errorf("search %q: %w", query, err)
	}
	return c.ranked(limit), nil
}

// searchMatch is a generation holding a query term: its hit, each
// term's count per field, its length in words, how many pairs of
// neighbouring query words stand close together in it, how many query
// words its title holds, and what it loses as a source listing or a
// changelog (crawl/search.go).
type searchMatch struct {
	hit     crawl.SearchHit
	tf      [][nFields]int // per term
	len     int
	near    int
	inTitle int
	penalty float64
}

// searchCorpus counts the query's terms over the searchable generations,
// for BM25: the matches, and each term's document frequency over all.
type searchCorpus struct {
	terms    []string // every form of every query word
	words    [][]int  // the query's words: the indexes of their forms in terms
	seen     map[string]bool
	matches  []searchMatch
	docs     int
	totalLen int
	df       []int
	// titlePlurals are each word's plurals, which count for the title
	// bonus only (crawl/search.go), not as BM25 terms.
	titlePlurals [][]string
	// changelogPenalty is what a changelog loses in this search
	// (crawl.ChangelogPenalty).
	changelogPenalty float64
}

// add counts one searchable generation's fields; listing says whether
// it is a source listing (crawl.SourceListing).
func (c *searchCorpus) add(url, title string, fields [nFields]string, listing bool) {
	tf := make([][nFields]int, len(c.terms))
	pos := make([][nFields][]int, len(c.terms)) // token positions of each term, per field
	n := 0
	inTitle := make([]bool, len(c.words)) // per word: a plural of it in the title
	for fi, text := range fields {
		i := 0
		searchTokens(text, func(_, _ int, t string) {
			n++
			if fi == fieldTitle {
				for wi, plurals := range c.titlePlurals {
					if slices.Contains(plurals, t) {
						inTitle[wi] = true
					}
				}
			}
			for ti, term := range c.terms {
				if t == term {
					tf[ti][fi]++
					pos[ti][fi] = append(pos[ti][fi], i)
				}
			}
			i++
		})
	}
	c.docs++
	c.totalLen += n
	any := false
	for ti := range c.terms {
		if tf[ti] != [nFields]int{} {
			c.df[ti]++
			any = true
		}
	}
	if any {
		near := 0
		for i := 1; i < len(c.words); i++ {
			if c.near(pos, c.words[i-1], c.words[i]) {
				near++
			}
		}
		words := 0
		for wi, forms := range c.words {
			if slices.ContainsFunc(forms, func(ti int) bool { return tf[ti][fieldTitle] > 0 }) || inTitle[wi] {
				words++
			}
		}
		penalty := 0.0
		if listing {
			penalty += crawl.SearchListingPenalty
		}
		if crawl.ChangelogTitle(title) {
			penalty += c.changelogPenalty
		}
		c.matches = append(c.matches, searchMatch{hit: crawl.SearchHit{URL: url, Title: title,
			Snippet: snippet(fields[fieldText], c.seen)}, tf: tf, len: n, near: near, inTitle: words, penalty: penalty})
	}
}

// near reports whether a form of word a and a form of word b stand at
// most crawl.SearchProximityWindow tokens apart (tokens between them, in
// either order) in one field, as FTS5's NEAR.
func (c *searchCorpus) near(pos [][nFields][]int, a, b []int) bool {
	for fi := range nFields {
		for _, x := range a {
			for _, y := range b {
				if closeTogether(pos[x][fi], pos[y][fi], crawl.SearchProximityWindow+1) {
					return true
				}
			}
		}
	}
	return false
}

// closeTogether reports whether two ascending position lists hold
// different positions at most d apart.
func closeTogether(p, q []int, d int) bool {
	for i, j := 0, 0; i < len(p) && j < len(q); {
		if diff := p[i] - q[j]; diff != 0 && diff <= d && diff >= -d {
			return true
		}
		if p[i] < q[j] {
			i++
		} else {
			j++
		}
	}
	return false
}

// ranked returns the best limit matches (all, when limit < 0) by BM25 as
// FTS5 computes it (per term, the weighted hits across the fields
// against the whole row's length) plus the title and proximity bonuses,
// less the penalties (crawl/search.go); Rank is the score, larger
// better.
func (c *searchCorpus) ranked(limit int) []crawl.SearchHit {
	const k1, b = 1.2, 0.75
	avg := float64(c.totalLen) / float64(max(c.docs, 1))
	idf := make([]float64, len(c.terms))
	for i, n := range c.df {
		idf[i] = math.Log((float64(c.docs) - float64(n) + 0.5) / (float64(n) + 0.5))
		if idf[i] <= 0 {
			idf[i] = 1e-6
		}
	}
	matches := c.matches
	for i := range matches {
		m := &matches[i]
		score := 0.0
		for ti := range c.terms {
			w := 0.0
			for fi, n := range m.tf[ti] {
				w += fieldWeights[fi] * float64(n)
			}
			score += idf[ti] * w * (k1 + 1) / (w + k1*(1-b+b*float64(m.len)/avg))
		}
		m.hit.Rank = score + crawl.SearchTitleBonus*float64(m.inTitle)/float64(len(c.words)) +
			crawl.SearchProximityBonus*float64(m.near)/float64(max(1, len(c.words)-1)) - m.penalty
	}
	sort.Slice(matches, func(i, j int) bool {
		if matches[i].hit.Rank != matches[j].hit.Rank {
			return matches[i].hit.Rank > matches[j].hit.Rank
		}
		return matches[i].hit.URL < matches[j].hit.URL
	})
	if limit > 0 && len(matches) > limit {
		matches = matches[:limit]
	}
	hits := make([]crawl.SearchHit, len(matches))
	for i, m := range matches {
		hits[i] = m.hit
	}
	return hits
}

// scanSearchable scans the open, non-duplicate, indexable generations
// with a text pile, filtered on the server, and hands each one's URL,
// title and searchable fields to f, and whether it is a source listing.
// That is known only from the pile: a page whose search text is kept in
// its item (an exact duplicate's, or one an older version wrote) is
// taken for prose.
func (d *DB) scanSearchable(ctx context.Context, f func(url, title string, fields [nFields]string, listing bool)) error {
	e := &fxExpr{}
	n := func(s string) string { return e.name(s) }
	// Open, indexable generations with a text pile, and the side items
	// (sideItem) that hold their search text; joined here by key, in
	// whatever order the Scan returns them. A side item whose generation
	// is not searchable (closed, a duplicate, noindex) is held until the
	// Scan ends, compressed: search on DynamoDB is for modest crawls.
	in := &dynamodb.ScanInput{
		TableName: aws.String(d.t.Generations),
		FilterExpression: aws.String("(" + openGenerations(e, false) + " AND " + n(gaNoIndex) + " = " +
			e.value(fxBool(false)) + " AND attribute_exists(" + n(gaTextPileDigest) + ")) OR (begins_with(" + n(gaSK) +
			", " + e.value(fxS(skLinksPrefix)) + ") AND (attribute_exists(" + n(gaSearchTextGz) + ") OR attribute_exists(" +
			n(gaSearchHeadlines) + ") OR attribute_exists(" + n(gaTextPileKey) + ")))"),
		ProjectionExpression: aws.String(strings.Join([]string{n(gaURL), n(gaSK), n(gaDescription + "." + gaTitle),
			n(gaDescription + "." + gaDescriptionCol), n(gaSearchText), n(gaSearchTextGz), n(gaSearchHeadlines),
			n(gaTextPileKey)}, ", ")),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	}
	type gen struct{ url, title, desc string }
	type side struct {
		gz    []byte
		heads string
		pile  string // text_pile_key, when the text is read from the pile
	}
	gens, sides := map[string]gen{}, map[string]side{} // waiting for each other, by url and generation sort key
	// Pages whose text is read from their piles (searchFromPile), read a
	// few hundred at a time, the records of one file together.
	var fromPiles []gen
	var pileKeys []string
	emit := func(g gen, text string, gz []byte, heads string, listing bool) error {
		var fields [nFields]string
		fields[fieldTitle], fields[fieldDescription], fields[fieldText], fields[fieldHeadlines] = g.title, g.desc, text, heads
		if len(gz) > 0 {
			t, err := gunzipString(gz, 4*maxSearchText)
			if err != nil {
				return fmt.Errorf("search text of %s: %w", g.url, err)
			}
			fields[fieldText] = t
		}
		f(g.url, g.title, fields, listing)
		return nil
	}
	readPiles := func() error {
		piles, err := d.searchPiles(ctx, pileKeys)
		if err != nil {
			return err
		}
		for i, g := range fromPiles {
			p := piles[i]
			listing := crawl.SourceListing(len(p.Text), len(p.CodeText))
			if err := emit(g, searchText(p.Text), nil, searchHeadlines(p.BigHeadlines, p.SmallHeadlines), listing); err != nil {
				return err
			}
		}
		fromPiles, pileKeys = fromPiles[:0], pileKeys[:0]
		return nil
	}
	join := func(g gen, sd side) error {
		if sd.gz == nil && sd.heads == "" && sd.pile != "" {
			fromPiles, pileKeys = append(fromPiles, g), append(pileKeys, sd.pile)
			if len(pileKeys) == pilesAtOnce {
				return readPiles()
			}
			return nil
		}
		return emit(g, "", sd.gz, sd.heads, false)
	}
	err := d.scanAll(ctx, in, func(it map[string]types.AttributeValue) error {
		r := fxReader{m: it}
		url, sk := r.str(gaURL), r.str(gaSK)
		var gz []byte
		if b, ok := it[gaSearchTextGz].(*types.AttributeValueMemberB); ok {
			gz = b.Value
		}
		if genSK, ok := strings.CutPrefix(sk, skLinksPrefix); ok {
			if r.err != nil {
				return fmt.Errorf("side item %s %s: %w", url, sk, r.err)
			}
			key := url + "\x00" + genSK
			sd := side{gz: gz, heads: r.str(gaSearchHeadlines), pile: r.str(gaTextPileKey)}
			if g, ok := gens[key]; ok {
				delete(gens, key)
				return join(g, sd)
			}
			sides[key] = sd
			return nil
		}
		desc := fxReader{m: r.mapAttr(gaDescription)}
		g := gen{url: url, title: desc.str(gaTitle), desc: desc.str(gaDescriptionCol)}
		r.nested(gaDescription, desc)
		if r.err != nil {
			return fmt.Errorf("generation item %s: %w", url, r.err)
		}
		if gz != nil || it[gaSearchText] != nil || it[gaSearchHeadlines] != nil {
			// Written before the search text moved to the side item.
			return emit(g, r.str(gaSearchText), gz, r.str(gaSearchHeadlines), false)
		}
		key := url + "\x00" + sk
		if sd, ok := sides[key]; ok {
			delete(sides, key)
			return join(g, sd)
		}
		gens[key] = g
		return nil
	})
	if err != nil {
		return err
	}
	if err := readPiles(); err != nil {
		return err
	}
	for _, g := range gens { // no search text: a page of title and description only
		if err := emit(g, "", nil, "", false); err != nil {
			return err
		}
	}
	return nil
}

// pilesAtOnce is how many text piles Search reads in one go: enough
// that a summarizer batch's file is read once, not so many that their
// texts crowd memory.
const pilesAtOnce = 512

// searchPile is what Search reads of a text pile's blob.
type searchPile struct {
	Text, BigHeadlines, SmallHeadlines string
	CodeText                           string // its length tells a source listing
}

// searchPiles reads the text piles under keys, in order: the records
// of one WARC file with one ranged read when the blob store reads ranges
// (warc.ReadRefs), any other key with a Get. A pile that cannot be read
// fails the search, naming it: a search that quietly ranked a page
// without its text would mislead.
func (d *DB) searchPiles(ctx context.Context, keys []string) ([]searchPile, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	if d.blobs == nil {
		return nil, errors.New("search: the text piles are in the blob store, and the store has none (WithBlobs)")
	}
	blobs := make([][]byte, len(keys))
	ranger, ranges := d.blobs.(warc.Ranger)
	var refs []warc.Ref
	var at []int
	for i, k := range keys {
		if ref, ok := warc.ParseRef(k); ok && ranges {
			refs, at = append(refs, ref), append(at, i)
			continue
		}
		b, err := d.blobs.Get(ctx, k)
		if err != nil {
			return nil, fmt.Errorf("search: read the text pile %s: %w", k, err)
		}
		blobs[i] = b
	}
	payloads, errs := warc.ReadRefs(ctx, ranger, refs)
	for j, i := range at {
		if errs != nil && errs[j] != nil {
			return nil, fmt.Errorf("search: read the text pile %s: %w", keys[i], errs[j])
		}
		blobs[i] = payloads[j]
	}
	piles := make([]searchPile, len(keys))
	for i, b := range blobs {
		if err := json.Unmarshal(b, &piles[i]); err != nil {
			return nil, fmt.Errorf("search: decode the text pile %s: %w", keys[i], err)
		}
	}
	return piles, nil
}

// snippet returns up to snippetTokens tokens of text around the most
// query terms, the matches in [brackets], with "…" where text is left
// out (as FTS5's snippet(…, '[', ']', '…', 16)).
func snippet(text string, terms map[string]bool) string {
	type tok struct {
		start, end int
		hit        bool
		term       string
	}
	var toks []tok
	searchTokens(text, func(start, end int, t string) {
		toks = append(toks, tok{start, end, terms[t], t})
	})
	if len(toks) == 0 {
		return ""
	}
	// The window with the most distinct terms, then the most hits.
	bestStart, bestScore := 0, -1
	for i, t := range toks {
		if !t.hit {
			continue
		}
		distinct, hits, last := map[string]bool{}, 0, i
		for j := i; j < len(toks) && j < i+snippetTokens; j++ {
			if toks[j].hit {
				distinct[toks[j].term] = true
				hits++
				last = j
			}
		}
		if score := len(distinct)*1000 + hits; score > bestScore {
			// Centre the hits in the window.
			bestScore, bestStart = score, i-(snippetTokens-(last-i+1))/2
		}
	}
	start := max(0, min(bestStart, len(toks)-snippetTokens))
	end := min(len(toks), start+snippetTokens)
	var sb strings.Builder
	if start > 0 {
		sb.WriteString("…")
	}
	pos := toks[start].start
	for _, t := range toks[start:end] {
		sb.WriteString(text[pos:t.start])
		if t.hit {
			sb.WriteString("[" + text[t.start:t.end] + "]")
		} else {
			sb.WriteString(text[t.start:t.end])
		}
		pos = t.end
	}
	if end < len(toks) {
		sb.WriteString("…")
	}
	return sb.String()
}

// searchTokens calls f with each token of s and its byte range: runs of
// letters and digits, lowercased and without accents.
func searchTokens(s string, f func(start, end int, token string)) {
	start := -1
	ascii := true
	var fold transform.Transformer // removes diacritics, as FTS5 unicode61's remove_diacritics; not safe to share
	emit := func(end int) {
		t := s[start:end]
		if !ascii {
			if fold == nil {
				fold = transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
			}
			if folded, _, err := transform.String(fold, t); err == nil {
				t = folded
			}
		}
		t = strings.ToLower(t)
		f(start, end, t)
		start, ascii = -1, true
	}
	for i, r := range s {
		if crawl.WordRune(r, start >= 0) {
			if start < 0 {
				start = i
			}
			if r >= utf8.RuneSelf {
				ascii = false
			}
			continue
		}
		if start >= 0 {
			emit(i)
		}
	}
	if start >= 0 {
		emit(len(s))
	}
}
