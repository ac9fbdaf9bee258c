package dynamo

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/itemsize"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// sumBlobs is an in-memory blob store that counts puts per key.
type sumBlobs struct {
	mu   sync.Mutex
	data map[string][]byte
	puts map[string]int
	gets int
}

func newSumBlobs() *sumBlobs { return &sumBlobs{data: map[string][]byte{}, puts: map[string]int{}} }

func (b *sumBlobs) Put(_ context.Context, key string, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.data[key] = append([]byte(nil), data...)
	b.puts[key]++
	return nil
}

func (b *sumBlobs) Get(_ context.Context, key string) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gets++
	d, ok := b.data[key]
	if !ok {
		return nil, fmt.Errorf("get blob %s: %w", key, crawl.ErrNotFound)
	}
	return d, nil
}

func (b *sumBlobs) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	d, err := b.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if off+n > int64(len(d)) {
		return nil, fmt.Errorf("range %d+%d of %s past its %d bytes", off, n, key, len(d))
	}
	return d[off : off+n], nil
}

// putCounts returns a copy of the puts per key.
func (b *sumBlobs) putCounts() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for k, n := range b.puts {
		out[k] = n
	}
	return out
}

// sumHeadBlobs is a blob store that answers Exists (as s3blob.Store
// does with HEAD), so ApplySummary never reads a pile back.
type sumHeadBlobs struct {
	*sumBlobs
	heads int
}

func (b *sumHeadBlobs) Exists(_ context.Context, key string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.heads++
	_, ok := b.data[key]
	return ok, nil
}

// sumDB returns a store over fresh tables with an in-memory blob store.
func sumDB(t *testing.T) (*DB, *sumBlobs) {
	t.Helper()
	b := newSumBlobs()
	return testDB(t, WithBlobs(b)), b
}

func sumPtr[T any](v T) *T { return &v }

func sumApply(t *testing.T, db *DB, s crawl.SummaryUpdate) bool {
	t.Helper()
	fresh, err := db.ApplySummary(context.Background(), s)
	if err != nil {
		t.Fatalf("apply summary of %s: %v", s.Crawl.CrawlUUID, err)
	}
	return fresh
}

func sumOpen(t *testing.T, db *DB, u string) crawl.OpenGeneration {
	t.Helper()
	o, err := db.OpenGeneration(context.Background(), u)
	if err != nil {
		t.Fatalf("open generation of %s: %v", u, err)
	}
	return o
}

// sumGens returns the generation items of u, oldest first.
func sumGens(t *testing.T, db *DB, u string) []*genItem {
	t.Helper()
	out, err := db.api.Query(context.Background(), &dynamodb.QueryInput{
		TableName:                 aws.String(db.t.Generations),
		KeyConditionExpression:    aws.String("#u = :u AND begins_with(#sk, :g)"),
		ExpressionAttributeNames:  map[string]string{"#u": gaURL, "#sk": gaSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":u": fxS(u), ":g": fxS(skGenPrefix)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		t.Fatalf("generations of %s: %v", u, err)
	}
	var gs []*genItem
	for _, it := range out.Items {
		g, err := decodeGenItem(it)
		if err != nil {
			t.Fatal(err)
		}
		gs = append(gs, g)
	}
	return gs
}

// sumGenByID returns u's generation id.
func sumGenByID(t *testing.T, db *DB, u string, id int64) *genItem {
	t.Helper()
	for _, g := range sumGens(t, db, u) {
		if g.ID == id {
			return g
		}
	}
	t.Fatalf("%s has no generation %d", u, id)
	return nil
}

// sumItems returns every item of the generations table, by url and sk.
func sumItems(t *testing.T, db *DB) map[string]map[string]types.AttributeValue {
	t.Helper()
	out := map[string]map[string]types.AttributeValue{}
	in := &dynamodb.ScanInput{TableName: aws.String(db.t.Generations), ConsistentRead: aws.Bool(true)}
	for {
		page, err := db.api.Scan(context.Background(), in)
		if err != nil {
			t.Fatalf("scan generations: %v", err)
		}
		for _, it := range page.Items {
			out[attrS(t, it, gaURL)+" "+attrS(t, it, gaSK)] = it
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// sumKinds counts the generations table's items by kind (head, gen, crawl).
func sumKinds(t *testing.T, db *DB) map[string]int {
	t.Helper()
	n := map[string]int{}
	for k := range sumItems(t, db) {
		sk := k[strings.LastIndex(k, " ")+1:]
		n[strings.SplitN(sk, "#", 2)[0]]++
	}
	return n
}

// sumCrawl reads a crawl summary item.
func sumCrawl(t *testing.T, db *DB, u, crawlUUID string) map[string]types.AttributeValue {
	t.Helper()
	it, err := db.getGenTableItem(context.Background(), u, crawlSK(crawlUUID))
	if err != nil || it == nil {
		t.Fatalf("crawl summary %s of %s: %v (item %v)", crawlUUID, u, err, it)
	}
	return it
}

func TestGenerationID(t *testing.T) {
	tests := []struct {
		uuid string
		want int64
	}{
		{"00000000-0000-4000-8000-000000000001", 0x4000},
		{"ffffffff-ffff-4fff-bfff-ffffffffffff", 0x7fffffffffff4fff},
		{"12345678-9abc-4def-8123-456789abcdef", 0x123456789abc4def},
	}
	for _, tt := range tests {
		got, err := GenerationID(tt.uuid)
		if err != nil || got != tt.want {
			t.Errorf("GenerationID(%s) = %#x, %v; want %#x", tt.uuid, got, err, tt.want)
		}
	}
	for _, bad := range []string{"gen-1", "", "00000000-0000-0000-0000-000000000000"} {
		if _, err := GenerationID(bad); crawl.KindOf(err) != crawl.KindInvalid {
			t.Errorf("GenerationID(%q) = %v, want a KindInvalid error", bad, err)
		}
	}
}

// TestGenerationItems: what the contract cannot see of the generations
// a URL's crawls make: the closed generation's item, the crawl summary
// items (none points at a generation for a failed crawl of a URL without
// one), and the head's generation count.
func TestGenerationItems(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const u = "http://example.com/"
	alpha, beta := contract.TextPile("alpha"), contract.TextPile("beta")
	failed := func(s crawl.SummaryUpdate) crawl.SummaryUpdate {
		s.Crawl.ExitCode, s.HTTP = crawl.ExitTimeout, nil
		return s
	}
	sumApply(t, db, failed(contract.SummaryUpdate(u, "c0", 50, crawl.GenerationAttach, 0, nil)))
	if n := sumKinds(t, db); !reflect.DeepEqual(n, map[string]int{"crawl": 1}) {
		t.Errorf("items by kind after a failed first crawl: %v, want its crawl summary only", n)
	}
	sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, alpha, "A")))
	g1 := sumOpen(t, db, u).Generation.ID
	sumApply(t, db, contract.SummaryUpdate(u, "c2", 200, crawl.GenerationExtend, g1, nil))
	sumApply(t, db, contract.SummaryUpdate(u, "c3", 300, crawl.GenerationReplace, g1, contract.TextGen(u, 300, beta, "B")))
	g2 := sumOpen(t, db, u).Generation.ID
	sumApply(t, db, failed(contract.SummaryUpdate(u, "c4", 400, crawl.GenerationAttach, g2, nil)))

	old := sumGenByID(t, db, u, g1).generation()
	want := crawl.EntityGeneration{ID: g1, UUID: old.UUID, URL: u, FirstSeen: 100, LastSeen: 200,
		ConfirmedEnd: sumPtr(int64(300)), TextPileID: sumPtr(TextPileID(alpha.Digest))}
	if !reflect.DeepEqual(old, want) {
		t.Errorf("closed generation:\n got %+v\nwant %+v", old, want)
	}
	// Each generation's search text is in its side item (sideItem).
	// No crawl summary item for c1, which opened the URL's first
	// generation (finishReplace).
	if n := sumKinds(t, db); !reflect.DeepEqual(n, map[string]int{"head": 1, "gen": 2, "links": 2, "crawl": 4}) {
		t.Errorf("items by kind: %v", n)
	}
	c3 := sumCrawl(t, db, u, "c3")
	wantC3 := map[string]types.AttributeValue{
		gaURL: fxS(u), gaSK: fxS("crawl#c3"), gaWasRobotsApproved: fxBool(true), gaCrawlType: fxN(int64(crawl.CrawlFirst)),
		gaCrawlUUID: fxS("c3"), gaAgentUUID: fxS(contract.AgentUUID), gaTimeStarted: fxN(300), gaExitCode: fxN(int64(crawl.ExitComplete)),
		gaGenID: fxN(g2), gaRequestDuration: fxN(12),
		gaHTTP: &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{gaStatusCode: fxN(200), gaETag: fxS(`"e"`)}},
	}
	if !reflect.DeepEqual(c3, wantC3) {
		t.Errorf("crawl summary item:\n got %v\nwant %v", c3, wantC3)
	}
	for crawlUUID, gen := range map[string]int64{"c0": 0, "c2": g1, "c4": g2} {
		it := sumCrawl(t, db, u, crawlUUID)
		if attrN(t, it, gaGenID) != gen || (gen == 0) != (it[gaGenID] == nil) {
			t.Errorf("crawl summary %s points at generation %v, want %d", crawlUUID, it[gaGenID], gen)
		}
	}
	if c4 := sumCrawl(t, db, u, "c4"); c4[gaHTTP] != nil || attrN(t, c4, gaExitCode) != int64(crawl.ExitTimeout) {
		t.Errorf("failed crawl's summary: %v, want no http_summary and exit code timeout", c4)
	}
	head, _ := db.getGenTableItem(ctx, u, skHead)
	if attrN(t, head, gaGenCount) != 2 {
		t.Errorf("head: %v, want gen_count 2", head)
	}
}

func TestApplySummaryAttachments(t *testing.T) {
	ctx := context.Background()
	blobs := &sumHeadBlobs{sumBlobs: newSumBlobs()}
	db := testDB(t, WithBlobs(blobs))
	const u = "http://example.com/doc"
	p := &crawl.TextPile{Text: "lamps and lighthouses", BigHeadlines: "Lamps", SmallHeadlines: "Oil", CodeText: "x := 1"}
	p.Digest = p.ComputeDigest()
	ng := contract.TextGen(u, 100, p, "Lamps")
	ng.Generation.URLFragment = sumPtr("frag")
	ng.BodyKey, ng.NoIndex = "raw/aa/bb", true
	ng.Tokens = map[string]int{"lamps": 1, "and": 1, "lighthouses": 1}
	ng.File = &crawl.FileSummary{FileSize: sumPtr(int64(1234)), MIMEType: sumPtr("text/html"), CanonicalURL: sumPtr("http://example.com/canon")}
	ng.Redirect = &crawl.RedirectSummary{ToURL: "http://example.com/next", InformationSource: crawl.SourceHTMLMeta,
		BySecurityPolicy: true, ToURLFragment: sumPtr("x")}
	ng.Description = &crawl.DocumentDescription{TimeCreated: sumPtr(int64(1)), TimeUpdated: sumPtr(int64(2)), PrimaryLanguage: sumPtr("en"),
		Title: sumPtr("Lamps"), PrimaryHeadline: sumPtr("All about lamps"), Description: sumPtr("A page"), Indexiness: 0}
	page, ext := crawl.DestPage, crawl.DestCanonical
	ng.Links = []crawl.LinkSummary{
		{LinkToURL: "http://example.com/a", RelNofollow: true, Location: crawl.Location{InNav: true, InList: true},
			DestinationType: &page, Locality: crawl.LocalitySameHost, HTMLTagName: sumPtr("a"), Text: sumPtr("A")},
		{LinkToURL: "http://example.org/", LinkToFragment: sumPtr("top"), Location: crawl.Location{InMain: true}, ContainsHeadline: true,
			Locality: crawl.LocalityExternal},
		{LinkToURL: "http://example.com/c", RelMe: true, RelTag: true, DestinationType: &ext, Locality: crawl.LocalitySameSite,
			Location: crawl.Location{InHeader: true, InFooter: true, InAside: true, InForm: true, InArticle: true, InSection: true,
				InTable: true, InFigure: true, InAddress: true, InCode: true, InHeadline: true, InParagraph: true}},
	}
	sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, ng))
	o := sumOpen(t, db, u)
	gid, _ := GenerationID(ng.Generation.UUID)
	wantOpen := crawl.OpenGeneration{Generation: crawl.EntityGeneration{ID: gid, UUID: ng.Generation.UUID, URL: u,
		URLFragment: sumPtr("frag"), FirstSeen: 100, LastSeen: 100, TextPileID: sumPtr(TextPileID(p.Digest))}, ContentKey: ng.ContentKey, NoIndex: ng.NoIndex}
	if !reflect.DeepEqual(o, wantOpen) {
		t.Errorf("OpenGeneration:\n got %+v\nwant %+v", o, wantOpen)
	}

	g := sumGenByID(t, db, u, gid)
	wantItem := &genItem{URL: u, SK: genSK(100, gid), ID: gid, UUID: ng.Generation.UUID, Fragment: sumPtr("frag"), FirstSeen: 100,
		LastSeen: 100, TextPileID: sumPtr(TextPileID(p.Digest)), Digest: hex.EncodeToString(p.Digest), ContentKey: ng.ContentKey,
		NoIndex: true, File: &crawl.FileSummary{GenerationID: gid, FileSize: sumPtr(int64(1234)), MIMEType: sumPtr("text/html"),
			CanonicalURL: sumPtr("http://example.com/canon")},
		Redirect: &crawl.RedirectSummary{GenerationID: gid, ToURL: "http://example.com/next", InformationSource: crawl.SourceHTMLMeta,
			BySecurityPolicy: true, ToURLFragment: sumPtr("x")},
		Description: &crawl.DocumentDescription{GenerationID: gid, TimeCreated: sumPtr(int64(1)), TimeUpdated: sumPtr(int64(2)),
			PrimaryLanguage: sumPtr("en"), Title: sumPtr("Lamps"), PrimaryHeadline: sumPtr("All about lamps"), Description: sumPtr("A page")},
		Links: 3,
	}
	if !reflect.DeepEqual(g, wantItem) {
		t.Errorf("generation item:\n got %+v\nwant %+v", g, wantItem)
	}

	raw := sumItems(t, db)[u+" "+genSK(100, gid)]
	t.Run("noindex: no original", func(t *testing.T) {
		if raw[gaOriginalDigest] != nil {
			t.Errorf("a noindex generation is listed as an original: %v", raw[gaOriginalDigest])
		}
	})
	t.Run("generation_content", func(t *testing.T) {
		// The body's key is written once, with the search text (sideItem).
		side := sumItems(t, db)[u+" "+skLinksPrefix+genSK(100, gid)]
		if attrS(t, side, gaBodyKey) != "raw/aa/bb" || !attrBool(t, raw, gaNoIndex) || raw[gaBodyKey] != nil {
			t.Errorf("body_key %q (side item), %v (generation item), noindex %v", attrS(t, side, gaBodyKey), raw[gaBodyKey], attrBool(t, raw, gaNoIndex))
		}
	})
	t.Run("search fields", func(t *testing.T) {
		// The search text and headlines are read from the pile, whose
		// key the side item holds (searchFromPile).
		side := sumItems(t, db)[u+" "+skLinksPrefix+genSK(100, gid)]
		if side[gaSearchTextGz] != nil || side[gaSearchHeadlines] != nil {
			t.Errorf("the side item holds the search text again: %v", side)
		}
		piles, err := db.searchPiles(context.Background(), []string{attrS(t, side, gaTextPileKey)})
		if err != nil || len(piles) != 1 || piles[0].Text != "lamps and lighthouses" || piles[0].BigHeadlines+"\n"+piles[0].SmallHeadlines != "Lamps\nOil" {
			t.Errorf("the pile read for search: %+v, %v", piles, err)
		}
		for _, a := range []string{gaLinks, gaSearchTextGz, gaSearchHeadlines, gaTextPileKey} {
			if raw[a] != nil {
				t.Errorf("the generation item holds %s; it belongs in its side item", a)
			}
		}
	})
	t.Run("links round-trip", func(t *testing.T) {
		b, ok := sumItems(t, db)[u+" "+skLinksPrefix+genSK(100, gid)][gaLinks].(*types.AttributeValueMemberB)
		if !ok {
			t.Fatalf("link_summary is %T", raw[gaLinks])
		}
		checkLinks(t, b.Value, gid, ng.Links)
		if attrN(t, raw, gaLinkCount) != 3 || raw[gaLinksDropped] != nil {
			t.Errorf("link_count %v links_dropped %v", raw[gaLinkCount], raw[gaLinksDropped])
		}
	})
	t.Run("text pile in the blob store", func(t *testing.T) {
		data, err := blobs.Get(ctx, TextPileKey(p.Digest))
		if err != nil {
			t.Fatal(err)
		}
		var got TextPileBlob
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		want := TextPileBlob{TextPile: *p, Tokens: ng.Tokens}
		want.ID = TextPileID(p.Digest)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("pile blob:\n got %+v\nwant %+v", got, want)
		}
		if blobs.heads != 1 {
			t.Errorf("%d HEAD requests, want 1", blobs.heads)
		}
	})
}

func TestApplySummaryWithoutBlobStore(t *testing.T) {
	db := testDB(t)
	const u = "http://example.com/"
	_, err := db.ApplySummary(context.Background(), contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("x"), "X")))
	if err == nil || !strings.Contains(err.Error(), "blob store") {
		t.Fatalf("ApplySummary without a blob store = %v, want an error saying so", err)
	}
	if n := sumKinds(t, db); len(n) != 0 {
		t.Errorf("items written: %v", n)
	}
}

func TestApplySummaryManyLinks(t *testing.T) {
	db, _ := sumDB(t)
	const u = "http://example.com/links"
	// Random URLs compress badly: 20,000 of them are well over the cap.
	rng := rand.New(rand.NewSource(1))
	links := make([]crawl.LinkSummary, 20000)
	for i := range links {
		links[i] = crawl.LinkSummary{LinkToURL: fmt.Sprintf("http://example.com/%016x/%016x", rng.Uint64(), rng.Uint64()),
			Locality: crawl.LocalitySameHost, Text: sumPtr(fmt.Sprintf("%x", rng.Uint64()))}
	}
	ng := contract.TextGen(u, 100, contract.TextPile("links"), "Links")
	ng.Links = links
	sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, ng))
	gid, _ := GenerationID(ng.Generation.UUID)
	raw := sumItems(t, db)[u+" "+genSK(100, gid)]
	b := sumItems(t, db)[u+" "+skLinksPrefix+genSK(100, gid)][gaLinks].(*types.AttributeValueMemberB).Value
	kept, dropped := attrN(t, raw, gaLinkCount), attrN(t, raw, gaLinksDropped)
	if len(b) > maxLinkBytes || kept+dropped != int64(len(links)) || dropped == 0 || kept < 1000 {
		t.Fatalf("link_summary of %d bytes, link_count %d, links_dropped %d", len(b), kept, dropped)
	}
	got, err := decodeLinks(b, gid)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != kept || got[0].LinkToURL != links[0].LinkToURL || got[kept-1].LinkToURL != links[kept-1].LinkToURL {
		t.Errorf("decoded %d links, want the first %d", len(got), kept)
	}
	if g := sumGenByID(t, db, u, gid); g.Links != len(links) {
		t.Errorf("links counted %d, want %d (stored and dropped)", g.Links, len(links))
	}
}

func TestEncodeLinksKeepsPrefix(t *testing.T) {
	links := make([]crawl.LinkSummary, 200)
	for i := range links {
		links[i] = crawl.LinkSummary{LinkToURL: fmt.Sprintf("http://example.com/%d-%x", i, i*7919), Locality: crawl.LocalitySameHost}
	}
	all, n, err := encodeLinks(links, 1<<20)
	if err != nil || n != len(links) {
		t.Fatalf("encodeLinks = %d links, %v", n, err)
	}
	for _, max := range []int{len(all) - 1, len(all) / 2, 200, 10} {
		b, n, err := encodeLinks(links, max)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > max && n > 0 || n >= len(links) {
			t.Errorf("max %d: %d bytes, %d links", max, len(b), n)
		}
		if n < len(links) {
			// One more link would not have fitted.
			bigger, _, _ := encodeLinks(links[:n+1], 1<<20)
			if len(bigger) <= max {
				t.Errorf("max %d: kept %d links, but %d fit in %d bytes", max, n, n+1, len(bigger))
			}
		}
		got, err := decodeLinks(b, 1)
		if err != nil || len(got) != n {
			t.Errorf("max %d: decoded %d links (%v), want %d", max, len(got), err, n)
		}
	}
}

func TestApplySummaryTextPileOncePerDigest(t *testing.T) {
	db, blobs := sumDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	same, other := contract.TextPile("the same words"), contract.TextPile("other words")
	tokens := map[string]int{"the": 1, "same": 1, "words": 1}

	g := contract.TextGen(a, 100, same, "A")
	g.Tokens = tokens
	sumApply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, g))
	g1 := sumOpen(t, db, a).Generation.ID
	// Another URL with the same text: a duplicate sharing the pile.
	g = contract.DupGen(b, 110, same, "B", g1)
	g.Tokens = tokens
	sumApply(t, db, contract.SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, g))
	gb := sumOpen(t, db, b).Generation.ID
	// a changes, then changes back: its third generation shares the first's pile.
	sumApply(t, db, contract.SummaryUpdate(a, "c3", 200, crawl.GenerationReplace, g1, contract.TextGen(a, 200, other, "A2")))
	g2 := sumOpen(t, db, a).Generation.ID
	g = contract.TextGen(a, 300, same, "A3")
	g.Tokens = tokens
	sumApply(t, db, contract.SummaryUpdate(a, "c4", 300, crawl.GenerationReplace, g2, g))
	g3 := sumOpen(t, db, a).Generation.ID

	if got, want := blobs.putCounts(), map[string]int{TextPileKey(same.Digest): 1, TextPileKey(other.Digest): 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("blob puts %v, want %v", got, want)
	}
	r1, r3, rb := sumGenByID(t, db, a, g1), sumGenByID(t, db, a, g3), sumGenByID(t, db, b, gb)
	want := TextPileID(same.Digest)
	for _, r := range []*genItem{r1, r3, rb} {
		if r.TextPileID == nil || *r.TextPileID != want {
			t.Errorf("generation %d: text pile id %v, want %d", r.ID, r.TextPileID, want)
		}
	}
	// When a's first generation (the original) closed at 200, b's copy
	// took over as the original: its duplicate status ended then.
	wantHist := []dupStatus{{Of: g1, OfURL: a, Start: 110, End: sumPtr(int64(200))}}
	if rb.MarkedDuplicate || rb.DupOf != 0 || !rb.Original || !reflect.DeepEqual(rb.History, wantHist) {
		t.Errorf("the copy after its original closed: duplicate %v dup_of %d original %v history %+v; want an original with history %+v",
			rb.MarkedDuplicate, rb.DupOf, rb.Original, rb.History, wantHist)
	}
	if r1.OpenDups != 0 {
		t.Errorf("the closed original still counts %d open duplicates", r1.OpenDups)
	}
}

func TestApplySummaryEndsDuplicateStatus(t *testing.T) {
	db, _ := sumDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	same := contract.TextPile("copied")
	sumApply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	sumApply(t, db, contract.SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, contract.DupGen(b, 110, same, "B", ga)))
	gb := sumOpen(t, db, b).Generation.ID
	if orig := sumGenByID(t, db, a, ga); orig.OpenDups != 1 {
		t.Errorf("original counts %d open duplicates, want 1", orig.OpenDups)
	}
	sumApply(t, db, contract.SummaryUpdate(b, "c3", 250, crawl.GenerationReplace, gb, contract.TextGen(b, 250, contract.TextPile("own text"), "B2")))
	old := sumGenByID(t, db, b, gb)
	want := []dupStatus{{Of: ga, OfURL: a, Start: 110, End: sumPtr(int64(250))}}
	if !reflect.DeepEqual(old.History, want) || old.DupOf != 0 || old.DupOfURL != "" || !old.MarkedDuplicate {
		t.Errorf("closed duplicate: history %+v dup_of %d %q marked %v; want history %+v, no dup_of, still marked",
			old.History, old.DupOf, old.DupOfURL, old.MarkedDuplicate, want)
	}
	if orig := sumGenByID(t, db, a, ga); orig.OpenDups != 0 {
		t.Errorf("original counts %d open duplicates, want 0", orig.OpenDups)
	}
}

// TestApplySummaryIndexBehind: when the duplicates GSI does not list
// what the original counts, closing it is a conflict (after a few
// re-reads), not a hand-over that forgets a copy.
func TestApplySummaryIndexBehind(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	same := contract.TextPile("shared")
	sumApply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation
	sumApply(t, db, contract.SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, contract.DupGen(b, 110, same, "B", ga.ID)))
	// Pretend a second duplicate is not in the index yet.
	if _, err := db.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(db.t.Generations),
		Key: genKey(a, genSK(100, ga.ID)), UpdateExpression: aws.String("SET #d = :n"),
		ExpressionAttributeNames: map[string]string{"#d": gaOpenDups}, ExpressionAttributeValues: map[string]types.AttributeValue{":n": fxN(2)}}); err != nil {
		t.Fatal(err)
	}
	before := sumItems(t, db)
	_, err := db.ApplySummary(ctx, contract.SummaryUpdate(a, "c3", 200, crawl.GenerationReplace, ga.ID, contract.TextGen(a, 200, contract.TextPile("new"), "A2")))
	if !errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("ApplySummary = %v, want ErrConflict", err)
	}
	// Nothing changed but a side item written before the transaction,
	// under a generation id nothing names.
	got := sumItems(t, db)
	for k, it := range got {
		if before[k] != nil {
			continue
		}
		sk := attrS(t, it, gaSK)
		gen, isSide := strings.CutPrefix(sk, skLinksPrefix)
		if !isSide || got[attrS(t, it, gaURL)+" "+gen] != nil {
			t.Errorf("new item %s after a conflict", k)
		}
		delete(got, k)
	}
	if !reflect.DeepEqual(got, before) {
		t.Error("items changed")
	}
}

// TestFindOriginalSkipsEmptyText: a generation with an empty text is no
// original (empty texts are not compared). The SQLite store leaves this
// to the summarizer, which never asks about an empty text.
func TestFindOriginalSkipsEmptyText(t *testing.T) {
	db, _ := sumDB(t)
	empty := contract.TextPile("")
	sumApply(t, db, contract.SummaryUpdate("http://example.com/empty", "c1", 95, crawl.GenerationReplace, 0, contract.TextGen("http://example.com/empty", 95, empty, "E")))
	if got, err := db.FindOriginal(context.Background(), empty.Digest, "http://example.com/new"); err != nil || got != 0 {
		t.Errorf("FindOriginal(empty text) = %d, %v; want none", got, err)
	}
}

// TestDuplicatesPromotedItems: the items of a hand-over (the contract
// checks what Status, FindOriginal and Search show of it): with an
// original and three copies, the earliest a noindex page, when the
// original changes the earliest indexable copy becomes the original,
// counting the others, which are re-pointed to it, their history kept.
func TestDuplicatesPromotedItems(t *testing.T) {
	db, _ := sumDB(t)
	const a, n, b, c = "http://example.com/a", "http://example.com/n", "http://example.com/b", "http://example.com/c"
	same := contract.TextPile("beacon keepers handbook")
	sumApply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	g := contract.DupGen(n, 105, same, "N", ga)
	g.NoIndex = true
	sumApply(t, db, contract.SummaryUpdate(n, "c2", 105, crawl.GenerationReplace, 0, g))
	for i, u := range []string{b, c} {
		sumApply(t, db, contract.SummaryUpdate(u, fmt.Sprintf("c%d", 3+i), int64(110+i), crawl.GenerationReplace, 0, contract.DupGen(u, int64(110+i), same, u, ga)))
	}
	sumApply(t, db, contract.SummaryUpdate(a, "c9", 200, crawl.GenerationReplace, ga, contract.TextGen(a, 200, contract.TextPile("moved on"), "A2")))

	gn, gb, gc := sumGens(t, db, n)[0], sumGens(t, db, b)[0], sumGens(t, db, c)[0]
	if gb.MarkedDuplicate || !gb.Original || gb.OpenDups != 2 {
		t.Errorf("heir b: duplicate %v original %v open_dups %d; want an original counting 2 copies", gb.MarkedDuplicate, gb.Original, gb.OpenDups)
	}
	if want := []dupStatus{{Of: ga, OfURL: a, Start: 110, End: sumPtr(int64(200))}}; !reflect.DeepEqual(gb.History, want) {
		t.Errorf("heir's history %+v, want %+v", gb.History, want)
	}
	for _, tt := range []struct {
		g     *genItem
		start int64
	}{{gn, 105}, {gc, 111}} {
		want := []dupStatus{{Of: ga, OfURL: a, Start: tt.start, End: sumPtr(int64(200))}, {Of: gb.ID, OfURL: b, Start: 200}}
		if !tt.g.MarkedDuplicate || tt.g.Original || tt.g.DupOf != gb.ID || tt.g.DupOfURL != b || !reflect.DeepEqual(tt.g.History, want) {
			t.Errorf("%s: duplicate %v original %v dup_of %d %s history %+v; want re-pointed to b with history %+v",
				tt.g.URL, tt.g.MarkedDuplicate, tt.g.Original, tt.g.DupOf, tt.g.DupOfURL, tt.g.History, want)
		}
	}
	if old := sumGenByID(t, db, a, ga); old.OpenDups != 0 || old.Original {
		t.Errorf("closed original: open_dups %d original %v", old.OpenDups, old.Original)
	}

	// The heir changes too: c (indexable) takes over, n follows.
	sumApply(t, db, contract.SummaryUpdate(b, "c10", 300, crawl.GenerationReplace, gb.ID, contract.TextGen(b, 300, contract.TextPile("b moved on"), "B2")))
	gn, gc = sumGens(t, db, n)[0], sumGens(t, db, c)[0]
	if !gc.Original || gc.OpenDups != 1 || gn.DupOf != gc.ID || len(gn.History) != 3 {
		t.Errorf("after the heir closed: c original %v open_dups %d; n dup_of %d (want %d) history %+v",
			gc.Original, gc.OpenDups, gn.DupOf, gc.ID, gn.History)
	}
}

// TestPromotionWithoutIndexableCopy: copies that are all noindex become
// originals of their own, none listed as one (noindex).
func TestPromotionWithoutIndexableCopy(t *testing.T) {
	db, _ := sumDB(t)
	const a, n = "http://example.com/a", "http://example.com/n"
	same := contract.TextPile("members only")
	sumApply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	g := contract.DupGen(n, 110, same, "N", ga)
	g.NoIndex = true
	sumApply(t, db, contract.SummaryUpdate(n, "c2", 110, crawl.GenerationReplace, 0, g))
	sumApply(t, db, contract.SummaryUpdate(a, "c3", 200, crawl.GenerationReplace, ga, contract.TextGen(a, 200, contract.TextPile("public"), "A2")))
	gn := sumGens(t, db, n)[0]
	if gn.MarkedDuplicate || gn.Original || gn.DupOf != 0 || len(gn.History) != 1 || gn.History[0].End == nil {
		t.Errorf("noindex copy: %+v; want unmarked, not an original, its status ended", gn)
	}
}

// failingTx is an API whose TransactWriteItems fails after the first ok
// calls: a process that dies in the middle of a hand-over.
type failingTx struct {
	API
	ok int
}

func (f *failingTx) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if f.ok == 0 {
		return nil, errors.New("injected: the process died")
	}
	f.ok--
	return f.API.TransactWriteItems(ctx, in, opts...)
}

// TestPromotionOverflow: an original with more copies than one
// transaction can hand over; the rest is handed over in follow-up
// transactions, resumed by the redelivered crawl when cut short.
func TestPromotionOverflow(t *testing.T) {
	ctx := context.Background()
	db, blobs := sumDB(t)
	const a = "http://example.com/a"
	same := contract.TextPile("terms of service")
	sumApply(t, db, contract.SummaryUpdate(a, "c0", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	const copies = 2*maxTxItems + 10
	urls := make([]string, copies)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://example.com/copy/%03d", i)
		g := contract.DupGen(urls[i], int64(1000+i), same, "copy", ga)
		g.NoIndex = i == 0 // never the heir
		sumApply(t, db, contract.SummaryUpdate(urls[i], fmt.Sprintf("d%d", i), int64(1000+i), crawl.GenerationReplace, 0, g))
	}
	if g := sumGenByID(t, db, a, ga); g.OpenDups != copies {
		t.Fatalf("original counts %d copies, want %d", g.OpenDups, copies)
	}

	// The first transaction commits, the process dies before the next.
	closing := contract.SummaryUpdate(a, "c1", 5000, crawl.GenerationReplace, ga, contract.TextGen(a, 5000, contract.TextPile("new terms"), "A2"))
	dying := New(&failingTx{API: db.api, ok: 1}, db.t, WithBlobs(blobs))
	if _, err := dying.ApplySummary(ctx, closing); err == nil {
		t.Fatal("ApplySummary with a dying process succeeded")
	}
	if m := sumCrawl(t, db, a, "c1")[gaPendingRehome]; m == nil {
		t.Fatal("no hand-over marker left after the main transaction")
	}
	// The redelivery finishes the hand-over.
	fresh, err := db.ApplySummary(ctx, closing)
	if err != nil || fresh {
		t.Fatalf("redelivered ApplySummary = %v, %v; want false, nil", fresh, err)
	}
	if m := sumCrawl(t, db, a, "c1")[gaPendingRehome]; m != nil {
		t.Errorf("hand-over marker left: %v", m)
	}
	heir := sumGens(t, db, urls[1])[0]
	if !heir.Original || heir.MarkedDuplicate || heir.OpenDups != copies-1 {
		t.Errorf("heir: original %v duplicate %v open_dups %d; want an original counting %d", heir.Original, heir.MarkedDuplicate,
			heir.OpenDups, copies-1)
	}
	for i, u := range urls {
		if i == 1 {
			continue
		}
		g := sumGens(t, db, u)[0]
		if g.DupOf != heir.ID || !g.MarkedDuplicate || len(g.History) != 2 || g.History[1].Start != 5000 {
			t.Fatalf("copy %s: dup_of %d history %+v; want re-pointed to the heir %d at 5000", u, g.DupOf, g.History, heir.ID)
		}
	}
	if old := sumGenByID(t, db, a, ga); old.OpenDups != 0 || old.ConfirmedEnd == nil {
		t.Errorf("closed original: open_dups %d confirmed_end %v", old.OpenDups, old.ConfirmedEnd)
	}
	// Every copy is listed under the heir, none under the closed original.
	var under []string
	if err := db.queryGenIndex(ctx, IndexDuplicates, gaDupOf, fxN(heir.ID), 0, func(it map[string]types.AttributeValue) bool {
		under = append(under, attrS(t, it, gaURL))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(under)
	if len(under) != copies-1 {
		t.Errorf("%d copies listed under the heir, want %d", len(under), copies-1)
	}
}

// attrS, attrN and attrBool read an attribute of a raw item through the
// store's one reader, failing the test on a malformed value.
func attrS(t testing.TB, m map[string]types.AttributeValue, k string) string {
	t.Helper()
	r := fxReader{m: m}
	v := r.str(k)
	if r.err != nil {
		t.Fatal(r.err)
	}
	return v
}

func attrN(t testing.TB, m map[string]types.AttributeValue, k string) int64 {
	t.Helper()
	r := fxReader{m: m}
	v := r.int(k)
	if r.err != nil {
		t.Fatal(r.err)
	}
	return v
}

func attrBool(t testing.TB, m map[string]types.AttributeValue, k string) bool {
	t.Helper()
	r := fxReader{m: m}
	v := r.bool(k)
	if r.err != nil {
		t.Fatal(r.err)
	}
	return v
}

// meteredSumDB is a summary store on fresh tables whose client counts
// its requests and capacity.
func meteredSumDB(t *testing.T) (*DB, *awsmeter.Meter) {
	t.Helper()
	meter := awsmeter.New()
	api := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: testClient(t).Options().BaseEndpoint,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), APIOptions: []func(*middleware.Stack) error{meter.AddTo}})
	return New(api, testTables(t, api), WithBlobs(newSumBlobs())), meter
}

// TestExtendWritesTheHead: the recrawl of an unchanged page moves its
// generation's last_seen on the URL's small head item, not on the
// generation item (DynamoDB bills an update by the whole item: here 500
// links). Readers see the moved last_seen; when the generation closes,
// it is folded into the item.
func TestExtendWritesTheHead(t *testing.T) {
	ctx := context.Background()
	db, meter := meteredSumDB(t)
	const u = "http://example.com/links"
	g := contract.TextGen(u, 100, contract.TextPile("a page of many links"), "Links")
	for i := range 500 {
		g.Links = append(g.Links, crawl.LinkSummary{LinkToURL: fmt.Sprintf("http://example.com/page/%d/with/a/long/path", i)})
	}
	meter.Take()
	if _, err := db.ApplySummary(ctx, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, g)); err != nil {
		t.Fatal(err)
	}
	// The first summary: the links in an item of their own, outside the
	// transaction and the originals index, so billed once.
	fresh := meter.Take()
	links := fresh["DynamoDB.PutItem"].WCU
	if tx := fresh["DynamoDB.TransactWriteItems"].WCU; links == 0 || tx > 12 {
		t.Errorf("a new generation with 500 links: %.1f write units for the links, %.1f in the transaction; want the links once, apart", links, tx)
	}
	open, err := db.OpenGeneration(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	id := open.Generation.ID
	meter.Take()
	if _, err := db.ApplySummary(ctx, contract.SummaryUpdate(u, "c2", 200, crawl.GenerationExtend, id, nil)); err != nil {
		t.Fatal(err)
	}
	if wcu := meter.Take().Total().WCU; wcu > 6 {
		t.Errorf("the extend used %.1f write units, want a few (the head and the crawl summary)", wcu)
	}
	// A late crawl does not move it back.
	if _, err := db.ApplySummary(ctx, contract.SummaryUpdate(u, "c3", 150, crawl.GenerationExtend, id, nil)); err != nil {
		t.Fatal(err)
	}
	if got, err := db.OpenGeneration(ctx, u); err != nil || got.Generation.LastSeen != 200 {
		t.Errorf("open generation last seen %d (%v), want 200", got.Generation.LastSeen, err)
	}
	sk, _ := fxReadS(readRawItem(t, db, db.t.Generations, genKey(u, skHead)), gaOpenSK)
	item := readRawItem(t, db, db.t.Generations, genKey(u, sk))
	if stored, _ := fxReadN(item, gaLastSeen); stored != 100 {
		t.Errorf("the generation item's last_seen = %d, want it untouched (100)", stored)
	}
	putNewCandidate(t, db, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlRecrawl, DiscoveredAt: 90})
	if st, err := db.Status(ctx, u); err != nil || st.Generation == nil || st.Generation.LastSeen != 200 {
		t.Errorf("status: %+v, %v; want last seen 200", st.Generation, err)
	}
	// New content at 300 closes it: its item takes last_seen 200.
	if _, err := db.ApplySummary(ctx, contract.SummaryUpdate(u, "c4", 300, crawl.GenerationReplace, id,
		contract.TextGen(u, 300, contract.TextPile("other words"), "Other"))); err != nil {
		t.Fatal(err)
	}
	item = readRawItem(t, db, db.t.Generations, genKey(u, sk))
	stored, _ := fxReadN(item, gaLastSeen)
	end, _ := fxReadN(item, gaConfirmedEnd)
	if stored != 200 || end != 300 {
		t.Errorf("closed generation: last_seen %d, confirmed_end %d; want 200 and 300", stored, end)
	}
	if head := readRawItem(t, db, db.t.Generations, genKey(u, skHead)); head[gaOpenLastSeen] != nil {
		t.Errorf("the head still holds open_last_seen %v for the new generation", head[gaOpenLastSeen])
	}
}

// TestFirstGenerationNoSummaryItem: a crawl that opens a URL's first
// generation puts no crawl summary item, and its redelivery changes
// nothing: while the generation is open (the head names the crawl), and
// after a later crawl replaced it, when the redelivery is planned as a
// late attach (the generation's UUID is the crawl's). A late crawl that
// opened nothing is attached with its summary item, as before.
func TestFirstGenerationNoSummaryItem(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const u = "http://example.com/first"
	first := contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("first words"), "F"))
	if !sumApply(t, db, first) {
		t.Fatal("the first delivery was not fresh")
	}
	if it, err := db.getGenTableItem(ctx, u, crawlSK("c1")); err != nil || it != nil {
		t.Errorf("a first generation's crawl put a summary item %v (%v)", it, err)
	}
	g1 := sumOpen(t, db, u).Generation.ID
	held := sumItems(t, db)
	if sumApply(t, db, first) {
		t.Error("the redelivery while the generation is open was fresh")
	}
	if !reflect.DeepEqual(sumItems(t, db), held) {
		t.Error("a redelivery of the first crawl changed the items")
	}

	sumApply(t, db, contract.SummaryUpdate(u, "c2", 300, crawl.GenerationReplace, g1, contract.TextGen(u, 300, contract.TextPile("other words"), "O")))
	g2 := sumOpen(t, db, u).Generation.ID
	held = sumItems(t, db)
	late := contract.SummaryUpdate(u, "c1", 100, crawl.GenerationAttach, g2, nil)
	if sumApply(t, db, late) {
		t.Error("the redelivery after a replace was fresh")
	}
	if !reflect.DeepEqual(sumItems(t, db), held) {
		t.Error("a redelivery of the first crawl after a replace changed the items")
	}

	// A crawl of the same second replaced it: the redelivery is planned
	// as a replace of that one, with the first crawl's own generation.
	const v = "http://example.com/same-second"
	firstV := contract.SummaryUpdate(v, "v1", 100, crawl.GenerationReplace, 0, contract.TextGen(v, 100, contract.TextPile("first words"), "F"))
	sumApply(t, db, firstV)
	sumApply(t, db, contract.SummaryUpdate(v, "v2", 100, crawl.GenerationReplace, sumOpen(t, db, v).Generation.ID, contract.TextGen(v, 100, contract.TextPile("other words"), "O")))
	held = sumItems(t, db)
	again := contract.SummaryUpdate(v, "v1", 100, crawl.GenerationReplace, sumOpen(t, db, v).Generation.ID, contract.TextGen(v, 100, contract.TextPile("first words"), "F"))
	if fresh, err := db.ApplySummary(ctx, again); err != nil || fresh {
		t.Errorf("the first crawl redelivered after a replace in the same second: %v, %v; want false, nil", fresh, err)
	}
	if !reflect.DeepEqual(sumItems(t, db), held) {
		t.Error("a redelivery of the first crawl after a replace in the same second changed the items")
	}

	other := contract.SummaryUpdate(u, "c3", 250, crawl.GenerationAttach, g2, nil)
	if !sumApply(t, db, other) {
		t.Error("a late crawl was not summarized")
	}
	if got := attrN(t, sumCrawl(t, db, u, "c3"), gaGenID); got != g2 {
		t.Errorf("the late crawl's summary names generation %d, want %d", got, g2)
	}
}

// TestNotModifiedOneWrite: a 304 costs no write of its own. RecordCrawl
// notes it on the candidate (unchanged_at) in the write it makes anyway,
// which readers fold into the open generation's last_seen, and its
// summary then finds it there with one eventually consistent read. A
// 304 recorded by an earlier version is written on the head as before:
// one conditional write. Neither puts a crawl summary item. A generation
// closed by new content keeps the last 304 as its last_seen, and the one
// opened is not extended by it.
func TestNotModifiedOneWrite(t *testing.T) {
	ctx := context.Background()
	db, meter := meteredSumDB(t)
	const u = "http://example.com/same"
	notModified := func(crawlUUID string, at int64) crawl.SummaryUpdate {
		su := contract.SummaryUpdate(u, crawlUUID, at, crawl.GenerationExtendOpen, 0, nil)
		su.Crawl.ExitCode, su.HTTP = crawl.ExitUnchanged, &crawl.HTTPSummary{StatusCode: 304}
		return su
	}
	if err := db.PutCandidate(ctx, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlFirst,
		LastContentfulCrawlTime: sumPtr(int64(100))}); err != nil {
		t.Fatal(err)
	}
	record := func(crawlUUID string, at int64) {
		t.Helper()
		c, err := db.GetCandidate(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		c.State, c.CrawlUUID, c.QueuedAt = crawl.StateQueued, crawlUUID, at-1
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatal(err)
		}
		if c, err = db.GetCandidate(ctx, u); err != nil {
			t.Fatal(err)
		}
		cr := contract.UnchangedCrawl(u, crawlUUID, at)
		next := contract.CrawledAs(c, cr)
		meter.Take()
		if fresh, err := db.RecordCrawl(ctx, cr, &next); err != nil || !fresh {
			t.Fatalf("record %s: %v, %v", crawlUUID, fresh, err)
		}
		if used := meter.Take(); used["DynamoDB.UpdateItem"].Calls != 1 || used["DynamoDB.PutItem"].Calls != 1 || len(used.Keys()) != 2 {
			t.Errorf("recording a 304 made %v, want the candidate's UpdateItem and the log's PutItem", used)
		}
	}
	headSeen := func() types.AttributeValue {
		return readRawItem(t, db, db.t.Generations, genKey(u, skHead))[gaOpenLastSeen]
	}
	sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("same words"), "T")))
	first := sumOpen(t, db, u).Generation

	record("n1", 200)
	if got := sumOpen(t, db, u).Generation.LastSeen; got != 200 {
		t.Errorf("recorded: last seen %d, want 200", got)
	}
	meter.Take()
	sumApply(t, db, notModified("n1", 200))
	used := meter.Take()
	if keys := used.Keys(); len(keys) != 1 || keys[0] != "DynamoDB.GetItem" || used[keys[0]].Calls != 1 {
		t.Errorf("the summary of a recorded 304 made %v, want one GetItem", used)
	}
	if tot := used.Total(); tot.RCU > 0.5 || tot.WCU != 0 {
		t.Errorf("the summary of a recorded 304 used %.1f read and %.1f write units, want half a read unit and none", tot.RCU, tot.WCU)
	}
	if v := headSeen(); v != nil {
		t.Errorf("the summary of a recorded 304 wrote open_last_seen %v on the head", v)
	}

	// A 304 recorded by an earlier version: one write of the head.
	meter.Take()
	sumApply(t, db, notModified("n2", 300))
	used = meter.Take()
	if used["DynamoDB.UpdateItem"].Calls != 1 || used.Total().WCU > 1 {
		t.Errorf("the summary of a 304 not noted on the candidate made %v, want one UpdateItem", used)
	}
	if it, err := db.getGenTableItem(ctx, u, crawlSK("n2")); err != nil || it != nil {
		t.Errorf("a 304 put a crawl summary item %v (%v)", it, err)
	}
	if got := sumOpen(t, db, u).Generation.LastSeen; got != 300 {
		t.Errorf("last seen %d, want 300", got)
	}

	record("n3", 350)
	st, err := db.Status(ctx, u)
	if err != nil || st.Generation == nil || st.Generation.LastSeen != 350 {
		t.Errorf("status after a recorded 304: %+v, %v; want last seen 350", st.Generation, err)
	}
	sumApply(t, db, contract.SummaryUpdate(u, "c2", 400, crawl.GenerationReplace, first.ID, contract.TextGen(u, 400, contract.TextPile("other words"), "O")))
	if got := sumOpen(t, db, u).Generation; got.FirstSeen != 400 || got.LastSeen != 400 {
		t.Errorf("the new generation: first and last seen %d, %d; want 400, 400", got.FirstSeen, got.LastSeen)
	}
	closed := readRawItem(t, db, db.t.Generations, genKey(u, genSK(first.FirstSeen, first.ID)))
	if seen, _ := fxReadN(closed, gaLastSeen); seen != 350 {
		t.Errorf("the closed generation's last_seen = %d, want the last 304's 350", seen)
	}
	sumApply(t, db, notModified("n5", 380)) // started before the new content was seen
	if head := headSeen(); head != nil {
		t.Errorf("a 304 older than the open generation wrote open_last_seen %v", head)
	}
}

// TestSearchReadsOlderItems: generations written before the search text
// moved to the side item (gzipped or, older still, plain, on the
// generation item) are still searched by their text.
func TestSearchReadsOlderItems(t *testing.T) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprint("plain ", plain), func(t *testing.T) {
			ctx := context.Background()
			db, _ := sumDB(t)
			const u = "http://example.com/old"
			sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0,
				contract.TextGen(u, 100, contract.TextPile("an albatross over the harbour"), "Old")))
			gid := sumOpen(t, db, u).Generation.ID
			gz, err := gzipString("an albatross over the harbour")
			if err != nil {
				t.Fatal(err)
			}
			var text types.AttributeValue = &types.AttributeValueMemberB{Value: gz}
			if plain {
				text = fxS("an albatross over the harbour")
			}
			attr := map[bool]string{false: gaSearchTextGz, true: gaSearchText}[plain]
			if _, err := db.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(db.t.Generations),
				Key: genKey(u, genSK(100, gid)), UpdateExpression: aws.String("SET #t = :t"),
				ExpressionAttributeNames: map[string]string{"#t": attr}, ExpressionAttributeValues: map[string]types.AttributeValue{":t": text}}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(db.t.Generations),
				Key: genKey(u, skLinksPrefix+genSK(100, gid))}); err != nil {
				t.Fatal(err)
			}
			hits, err := db.Search(ctx, "albatross", 10)
			if err != nil || len(hits) != 1 || hits[0].URL != u {
				t.Errorf("Search(albatross) = %v, %v; want %s", hits, err, u)
			}
		})
	}
}

// TestDuplicateOfAKnownOriginalReadsItBack: a duplicate whose original
// comes with its URL and first_seen (a canonical, a near copy) is checked
// against the original's own item, read consistently, not the originals
// index, which may not list a generation that opened a moment ago. The
// digest given here matches nothing in the index: only the direct read
// can accept it.
func TestDuplicateOfAKnownOriginalReadsItBack(t *testing.T) {
	db, _ := sumDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	sumApply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, contract.TextPile("canonical text"), "A")))
	ga := sumOpen(t, db, a).Generation
	g := contract.DupGen(b, 110, contract.TextPile("a print version"), "B", ga.ID)
	g.Original = crawl.Original{ID: ga.ID, Digest: []byte("not indexed"), URL: a, FirstSeen: ga.FirstSeen}
	sumApply(t, db, contract.SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, g))
	if got := sumOpen(t, db, b).Generation; !got.MarkedDuplicate {
		t.Errorf("b is not marked a duplicate of a")
	}
	// Without the key, the index is asked, by that digest, and says no.
	g = contract.DupGen(b, 120, contract.TextPile("another version"), "B", ga.ID)
	g.Original = crawl.Original{ID: ga.ID, Digest: []byte("not indexed")}
	_, err := db.ApplySummary(context.Background(), contract.SummaryUpdate(b, "c3", 120, crawl.GenerationReplace, sumOpen(t, db, b).Generation.ID, g))
	if !errors.Is(err, crawl.ErrConflict) {
		t.Errorf("ApplySummary without the original's key = %v, want ErrConflict", err)
	}
}

// TestApplySummaryPacksLinks: into a store that packs records (the
// summarizer's warc.Packer), a new generation's text pile and its
// link_summary go to one WARC file in one write, the item naming both;
// the links are not written to DynamoDB, the search text still is (in
// the side item).
func TestApplySummaryPacksLinks(t *testing.T) {
	ctx := context.Background()
	blobs := newSumBlobs()
	packer := warc.NewPacker(blobs, warc.PackConfig{Prefix: "piles/"})
	db := testDB(t, WithBlobs(packer))
	const u = "http://example.com/doc"
	p := &crawl.TextPile{Text: "lamps and lighthouses", BigHeadlines: "Lamps"}
	p.Digest = p.ComputeDigest()
	ng := contract.TextGen(u, 100, p, "Lamps")
	page := crawl.DestPage
	ng.Links = []crawl.LinkSummary{
		{LinkToURL: "http://example.com/a", DestinationType: &page, Locality: crawl.LocalitySameHost, Text: sumPtr("A")},
		{LinkToURL: "http://example.org/", Locality: crawl.LocalityExternal, Location: crawl.Location{InNav: true}},
	}
	sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, ng))
	gid, _ := GenerationID(ng.Generation.UUID)
	items := sumItems(t, db)
	raw := items[u+" "+genSK(100, gid)]
	// The generation item names neither (its side item does), and is
	// one write unit: the content key is not its digest again either.
	if raw[gaTextPileKey] != nil || raw[gaLinksKey] != nil || raw[gaContentKey] != nil || itemsize.Of(raw) > 1024 {
		t.Errorf("generation item: text_pile_key %v, link_summary_key %v, content_key %v, %d bytes; want none of the three, at most 1 KiB",
			raw[gaTextPileKey], raw[gaLinksKey], raw[gaContentKey], itemsize.Of(raw))
	}
	if g := sumOpen(t, db, u); g.ContentKey != ng.ContentKey {
		t.Errorf("content key read back %q, want %q", g.ContentKey, ng.ContentKey)
	}
	keys := items[u+" "+skLinksPrefix+genSK(100, gid)]
	pileRef, ok1 := warc.ParseRef(attrS(t, keys, gaTextPileKey))
	linksRef, ok2 := warc.ParseRef(attrS(t, keys, gaLinksKey))
	if !ok1 || !ok2 || pileRef.Object != linksRef.Object {
		t.Fatalf("text_pile_key %q, link_summary_key %q: want records of one WARC file", attrS(t, keys, gaTextPileKey), attrS(t, keys, gaLinksKey))
	}
	if n := len(blobs.putCounts()); n != 1 {
		t.Errorf("%d objects written, want 1", n)
	}
	gz, err := packer.Get(ctx, attrS(t, keys, gaLinksKey))
	if err != nil {
		t.Fatal(err)
	}
	checkLinks(t, gz, gid, ng.Links)
	if attrN(t, raw, gaLinkCount) != 2 {
		t.Errorf("link_count %v, want 2", raw[gaLinkCount])
	}
	side := items[u+" "+skLinksPrefix+genSK(100, gid)]
	if side[gaLinks] != nil || raw[gaLinks] != nil {
		t.Errorf("link_summary written to DynamoDB too")
	}
	if side[gaSearchTextGz] != nil || itemsize.Of(side) > 1024 {
		t.Errorf("the side item holds the search text (%d bytes); Search reads it from the pile: %v", itemsize.Of(side), side)
	}
	// Search reads the text from the pile's record: through the packer
	// (record by record), and through a store of ranged reads, as the
	// CLI's, with one read for the file's records.
	for name, b := range map[string]Blobs{"the packer": packer, "ranged reads": blobs} {
		reader := New(db.api, db.t, WithBlobs(b))
		hits, err := reader.Search(ctx, "lighthouses", 10)
		if err != nil || len(hits) != 1 || hits[0].URL != u {
			t.Errorf("Search through %s = %+v, %v; want the page", name, hits, err)
		}
		if hits, err := reader.Search(ctx, "lamps", 10); err != nil || len(hits) != 1 {
			t.Errorf("Search through %s for a headline = %+v, %v; want the page", name, hits, err)
		}
	}
}

// TestSearchNamesAMissingPile: a page whose text pile is gone fails the
// search with the pile's key, rather than ranking the page without its
// text.
func TestSearchNamesAMissingPile(t *testing.T) {
	ctx := context.Background()
	blobs := newSumBlobs()
	db := testDB(t, WithBlobs(warc.NewPacker(blobs, warc.PackConfig{Prefix: "piles/"})))
	const u = "http://example.com/gone"
	sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0,
		contract.TextGen(u, 100, contract.TextPile("a pile that goes missing"), "Gone")))
	blobs.mu.Lock()
	clear(blobs.data)
	blobs.mu.Unlock()
	if _, err := db.Search(ctx, "missing", 10); err == nil || !strings.Contains(err.Error(), "text pile piles/") {
		t.Errorf("Search with the pile gone: %v; want an error naming the pile", err)
	}
}

// checkLinks decodes a link_summary blob and compares it with the
// links summarized, numbered from 1 in their order, of generation gid.
func checkLinks(t *testing.T, blob []byte, gid int64, links []crawl.LinkSummary) {
	t.Helper()
	got, err := decodeLinks(blob, gid)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]crawl.LinkSummary(nil), links...)
	for i := range want {
		want[i].ID, want[i].GenerationID = int64(i+1), gid
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links:\n got %+v\nwant %+v", got, want)
	}
}

// failingPut is an API whose PutItem of a crawl summary item fails: a
// process that dies between the head's write and the crawl summary's.
type failingPut struct{ API }

func (f failingPut) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if sk, _ := fxReadS(in.Item, gaSK); strings.HasPrefix(sk, "crawl#") {
		return nil, errors.New("injected: the process died")
	}
	return f.API.PutItem(ctx, in, opts...)
}

// TestExtendKilledBetweenWrites: an extend is two ordered writes (the
// head, then the crawl summary). A process that dies between them
// leaves the head moved on and no crawl summary; the redelivered crawl
// then ends in the state one delivery gives: the generation seen at the
// crawl, the crawl summarized once, the revisit observed once.
func TestExtendKilledBetweenWrites(t *testing.T) {
	ctx := context.Background()
	db, blobs := sumDB(t)
	const killed, whole = "http://example.com/killed", "http://example.com/whole"
	for _, u := range []string{killed, whole} {
		sumApply(t, db, contract.SummaryUpdate(u, "c1"+u, 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("same words"), "T")))
		putNewCandidate(t, db, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlRecrawl,
			DiscoveredAt: 90, MRate: 0.5, MRateCounter: 4})
	}
	extend := func(u string) crawl.SummaryUpdate {
		return contract.SummaryUpdate(u, "c2"+u, 200, crawl.GenerationExtend, sumOpen(t, db, u).Generation.ID, nil)
	}
	dying := New(failingPut{db.api}, db.t, WithBlobs(blobs))
	if _, err := dying.ApplySummary(ctx, extend(killed)); err == nil {
		t.Fatal("ApplySummary with a dying process succeeded")
	}
	if got := sumOpen(t, db, killed).Generation.LastSeen; got != 200 {
		t.Fatalf("after the head's write: last seen %d, want 200", got)
	}
	if it, err := db.getGenTableItem(ctx, killed, crawlSK("c2"+killed)); err != nil || it != nil {
		t.Fatalf("crawl summary after a death before its write: %v, %v", it, err)
	}
	for _, u := range []string{killed, killed, whole} {
		sumApply(t, db, extend(u)) // the redelivery, once more, and the crawl delivered once
	}
	k, w := mustGetCandidate(t, db, killed), mustGetCandidate(t, db, whole)
	if k.MRate != w.MRate || k.MRateCounter != w.MRateCounter || k.MRateCounter != 5 {
		t.Errorf("observations: killed %v/%d, whole %v/%d; want one each", k.MRate, k.MRateCounter, w.MRate, w.MRateCounter)
	}
	ko, wo := sumOpen(t, db, killed).Generation, sumOpen(t, db, whole).Generation
	if ko.LastSeen != 200 || wo.LastSeen != 200 {
		t.Errorf("last seen: killed %d, whole %d; want 200", ko.LastSeen, wo.LastSeen)
	}
	kc, wc := sumCrawl(t, db, killed, "c2"+killed), sumCrawl(t, db, whole, "c2"+whole)
	if attrN(t, kc, gaGenID) != ko.ID || attrN(t, wc, gaGenID) != wo.ID {
		t.Errorf("crawl summaries name generations %d and %d, want %d and %d", attrN(t, kc, gaGenID), attrN(t, wc, gaGenID), ko.ID, wo.ID)
	}
}

// TestExtendAfterReplace: an extend planned against a generation that
// another crawl's summary has closed since is a conflict, planned again;
// it writes nothing.
func TestExtendAfterReplace(t *testing.T) {
	db, _ := sumDB(t)
	const u = "http://example.com/p"
	sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("first"), "T")))
	first := sumOpen(t, db, u).Generation.ID
	sumApply(t, db, contract.SummaryUpdate(u, "c2", 300, crawl.GenerationReplace, first, contract.TextGen(u, 300, contract.TextPile("second"), "T")))
	for _, action := range []crawl.GenerationAction{crawl.GenerationExtend, crawl.GenerationAttach} {
		_, err := db.ApplySummary(context.Background(), contract.SummaryUpdate(u, "c3", 200, action, first, nil))
		if !errors.Is(err, crawl.ErrConflict) {
			t.Errorf("action %d against the closed generation: %v, want a conflict", action, err)
		}
	}
	if it, err := db.getGenTableItem(context.Background(), u, crawlSK("c3")); err != nil || it != nil {
		t.Errorf("crawl summary of a conflicting crawl: %v, %v", it, err)
	}
	if got := sumOpen(t, db, u).Generation; got.LastSeen != 300 {
		t.Errorf("the open generation's last seen %d, want 300", got.LastSeen)
	}
}

// TestExtendHeadRefused: the head's write of an extend, when the head
// changed after it was read: seen later already (nothing to write, no
// error), or naming another generation (a conflict).
func TestExtendHeadRefused(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const u = "http://example.com/p"
	sumApply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("first"), "T")))
	id := sumOpen(t, db, u).Generation.ID
	if err := db.extendHead(ctx, u, id, 300); err != nil {
		t.Fatal(err)
	}
	if err := db.extendHead(ctx, u, id, 200); err != nil {
		t.Errorf("a late extend: %v, want nothing written and no error", err)
	}
	if got := sumOpen(t, db, u).Generation.LastSeen; got != 300 {
		t.Errorf("last seen %d after a late extend, want 300", got)
	}
	if err := db.extendHead(ctx, u, id+1, 400); !errors.Is(err, crawl.ErrConflict) {
		t.Errorf("extend of a generation the head does not name: %v, want a conflict", err)
	}
}

// TestReplaceKilledBeforeSummaryItem: a summary that opens a generation
// in place of another commits its transaction, then puts the crawl's
// summary item. A process that dies in between leaves the head naming
// the new generation and this crawl; the redelivery (planned again, as
// an extend of that generation, or as before) puts the summary item and
// observes the revisit once, as one delivery does. (A URL's first
// generation puts no summary item: TestFirstGenerationNoSummaryItem.)
func TestReplaceKilledBeforeSummaryItem(t *testing.T) {
	ctx := context.Background()
	db, blobs := sumDB(t)
	dying := New(failingPut{db.api}, db.t, WithBlobs(blobs))
	for _, replan := range []bool{false, true} {
		name := fmt.Sprintf("replanned %v", replan)
		killed, whole := "http://example.com/killed/"+name, "http://example.com/whole/"+name
		update := map[string]crawl.SummaryUpdate{}
		for _, u := range []string{killed, whole} {
			sumApply(t, db, contract.SummaryUpdate(u, "c1"+u, 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("old words"), "T")))
			open := sumOpen(t, db, u).Generation.ID
			putNewCandidate(t, db, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlRecrawl,
				DiscoveredAt: 90, MRate: 0.5, MRateCounter: 4})
			update[u] = contract.SummaryUpdate(u, "c2"+u, 200, crawl.GenerationReplace, open, contract.TextGen(u, 200, contract.TextPile("new words "+u), "T"))
		}
		if _, err := dying.ApplySummary(ctx, update[killed]); err == nil {
			t.Fatalf("%s: ApplySummary with a dying process succeeded", name)
		}
		if it, err := db.getGenTableItem(ctx, killed, crawlSK("c2"+killed)); err != nil || it != nil {
			t.Fatalf("%s: crawl summary after a death before its write: %v, %v", name, it, err)
		}
		newID := sumOpen(t, db, killed).Generation.ID
		again := update[killed]
		if replan {
			again = contract.SummaryUpdate(killed, "c2"+killed, 200, crawl.GenerationExtend, newID, nil)
		}
		if !sumApply(t, db, again) {
			t.Errorf("%s: the redelivery did not finish the summary", name)
		}
		if sumApply(t, db, again) || !sumApply(t, db, update[whole]) {
			t.Errorf("%s: a second redelivery summarized again, or the whole delivery did not", name)
		}
		k, w := mustGetCandidate(t, db, killed), mustGetCandidate(t, db, whole)
		if k.MRate != w.MRate || k.MRateCounter != w.MRateCounter {
			t.Errorf("%s: observations: killed %v/%d, whole %v/%d", name, k.MRate, k.MRateCounter, w.MRate, w.MRateCounter)
		}
		if want := int64(5); k.MRateCounter != want {
			t.Errorf("%s: MRate counter %d, want %d", name, k.MRateCounter, want)
		}
		if got := attrN(t, sumCrawl(t, db, killed, "c2"+killed), gaGenID); got != newID {
			t.Errorf("%s: the crawl summary names generation %d, want %d", name, got, newID)
		}
		kh := readRawItem(t, db, db.t.Generations, genKey(killed, skHead))
		wh := readRawItem(t, db, db.t.Generations, genKey(whole, skHead))
		if attrN(t, kh, gaGenCount) != attrN(t, wh, gaGenCount) || kh[gaOpenLastSeen] != nil {
			t.Errorf("%s: heads differ: killed %v, whole %v", name, kh, wh)
		}
	}
}
