package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
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
	c, err := d.GetCandidate(ctx, u)
	if err != nil {
		return crawl.URLStatus{}, fmt.Errorf("status of %s: %w", u, err)
	}
	s := crawl.URLStatus{
		URL: c.URL, Frontier: c.State, ExitCode: c.LastCrawlExitCode, LastCrawl: c.LastCrawlTime,
		LastContentful: c.LastContentfulCrawlTime, ETag: c.LastContentfulETag, Hops: c.Hops,
		NRedirs: c.NRedirs, OrigURL: c.OrigURL, Parent: c.Parent, Site: c.SiteID, Status: crawl.StatusNone,
	}
	if c.LastCrawlExitCode != nil {
		s.ExitName = c.LastCrawlExitCode.String()
		s.Status = c.LastCrawlExitCode.Status()
	}
	if s.Crawls, err = d.CrawlCount(ctx, u); err != nil {
		return s, fmt.Errorf("status of %s: %w", u, err)
	}
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
// ended first (the SQLite store's index order); "" when it never was a
// duplicate.
func (g *genItem) shownDuplicateOf() string {
	best := -1
	for i, h := range g.History {
		switch {
		case h.End == nil:
			return h.OfURL
		case best < 0 || *h.End < *g.History[best].End:
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
	if u == "" {
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
// title, description, headlines or text contain every word of the query
// (case and accents ignored, as FTS5's unicode61 tokenizer does), best
// first, ranked by BM25 with the SQLite store's field weights; Rank is
// negative, lower is better, as FTS5's bm25().
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
	// The query's words, common ones left out when others remain
	// (crawl/search.go).
	var all, terms []string
	seen := map[string]bool{}
	searchTokens(query, func(_, _ int, t string) {
		if !seen[t] {
			seen[t] = true
			all = append(all, t)
			if !crawl.StopWord(t) {
				terms = append(terms, t)
			}
		}
	})
	if len(terms) == 0 {
		terms = all
	}
	terms = terms[:min(len(terms), crawl.MaxQueryTerms)]
	clear(seen)
	for _, t := range terms {
		seen[t] = true
	}
	if len(terms) == 0 || limit == 0 {
		return nil, nil
	}
	c := &searchCorpus{terms: terms, seen: seen, df: make([]int, len(terms))}
	if err := d.scanSearchable(ctx, c.add); err != nil {
		return nil, fmt.Errorf("search %q: %w", query, err)
	}
	return c.ranked(limit), nil
}

// searchMatch is a generation holding a query term: its hit, each
// term's count per field, and its length in words.
type searchMatch struct {
	hit crawl.SearchHit
	tf  [][nFields]int // per term
	len int
}

// searchCorpus counts the query's terms over the searchable generations,
// for BM25: the matches, and each term's document frequency over all.
type searchCorpus struct {
	terms    []string
	seen     map[string]bool
	matches  []searchMatch
	docs     int
	totalLen int
	df       []int
}

// add counts one searchable generation's fields.
func (c *searchCorpus) add(url, title string, fields [nFields]string) {
	tf := make([][nFields]int, len(c.terms))
	n := 0
	for fi, text := range fields {
		searchTokens(text, func(_, _ int, t string) {
			n++
			for ti, term := range c.terms {
				if t == term {
					tf[ti][fi]++
				}
			}
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
		c.matches = append(c.matches, searchMatch{hit: crawl.SearchHit{URL: url, Title: title,
			Snippet: snippet(fields[fieldText], c.seen)}, tf: tf, len: n})
	}
}

// ranked returns the best limit matches (all, when limit < 0) by BM25 as
// FTS5 computes it (per term, the weighted hits across the fields
// against the whole row's length) plus the title bonus
// (crawl.SearchTitleBonus); Rank is the score, larger better.
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
		score, inTitle := 0.0, 0
		for ti := range c.terms {
			w := 0.0
			for fi, n := range m.tf[ti] {
				w += fieldWeights[fi] * float64(n)
			}
			score += idf[ti] * w * (k1 + 1) / (w + k1*(1-b+b*float64(m.len)/avg))
			if m.tf[ti][fieldTitle] > 0 {
				inTitle++
			}
		}
		m.hit.Rank = score + crawl.SearchTitleBonus*float64(inTitle)/float64(len(c.terms))
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
// title and searchable fields to f.
func (d *DB) scanSearchable(ctx context.Context, f func(url, title string, fields [nFields]string)) error {
	e := &fxExpr{}
	n := func(s string) string { return e.name(s) }
	in := &dynamodb.ScanInput{
		TableName: aws.String(d.t.Generations),
		FilterExpression: aws.String(openGenerations(e, false) + " AND " + n(gaNoIndex) + " = " +
			e.value(fxBool(false)) + " AND attribute_exists(" + n(gaTextPileDigest) + ")"),
		ProjectionExpression: aws.String(strings.Join([]string{n(gaURL), n(gaDescription + "." + gaTitle),
			n(gaDescription + "." + gaDescriptionCol), n(gaSearchText), n(gaSearchTextGz), n(gaSearchHeadlines)}, ", ")),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	}
	return d.scanAll(ctx, in, func(it map[string]types.AttributeValue) error {
		var fields [nFields]string
		r := fxReader{m: it}
		desc := fxReader{m: r.mapAttr(gaDescription)}
		title := desc.str(gaTitle)
		fields[fieldTitle], fields[fieldDescription] = title, desc.str(gaDescriptionCol)
		fields[fieldText], fields[fieldHeadlines] = r.str(gaSearchText), r.str(gaSearchHeadlines)
		url := r.str(gaURL)
		if gz, ok := it[gaSearchTextGz].(*types.AttributeValueMemberB); ok {
			text, err := gunzipString(gz.Value, 4*maxSearchText)
			if err != nil {
				return fmt.Errorf("generation item %s: %w", url, err)
			}
			fields[fieldText] = text
		}
		r.nested(gaDescription, desc)
		if r.err != nil {
			return fmt.Errorf("generation item %s: %w", url, r.err)
		}
		f(url, title, fields)
		return nil
	})
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
		if unicode.IsLetter(r) || unicode.IsNumber(r) || (start >= 0 && unicode.Is(unicode.Mn, r)) {
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
