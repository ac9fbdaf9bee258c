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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/summarize"
)

var _ summarize.Store = (*DB)(nil)

const sumAgentUUID = "7c1b0a52-5d4e-4f0a-8a35-2f6d2b9c1e01"

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

func sumPile(text string) *crawl.TextPile {
	p := crawl.TextPile{Text: text}
	p.Digest = p.ComputeDigest()
	return &p
}

// sumGen is a generation of u whose content is the text pile p, first
// seen at at.
func sumGen(u string, at int64, p *crawl.TextPile, title string) *crawl.NewGeneration {
	return &crawl.NewGeneration{
		Generation:  crawl.EntityGeneration{UUID: uuid.NewString(), URL: u, FirstSeen: at, LastSeen: at},
		ContentKey:  "text:" + hex.EncodeToString(p.Digest),
		TextPile:    p,
		Description: &crawl.DocumentDescription{Title: sumPtr(title), Indexiness: 50},
	}
}

// sumDupGen is sumGen marked as a duplicate of generation orig.
func sumDupGen(u string, at int64, p *crawl.TextPile, title string, orig int64) *crawl.NewGeneration {
	g := sumGen(u, at, p, title)
	g.DuplicateOf, g.Generation.MarkedDuplicate = orig, true
	return g
}

func sumSummary(u, crawlUUID string, at int64, action crawl.GenerationAction, openID int64, ng *crawl.NewGeneration) crawl.SummaryUpdate {
	return crawl.SummaryUpdate{
		URL: u, Action: action, OpenID: openID, SeenAt: at, New: ng,
		Crawl: crawl.CrawlSummary{WasRobotsTxtApproved: true, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			AgentUUID: sumAgentUUID, TimeStarted: at, ExitCode: crawl.ExitComplete, RequestDurationMS: sumPtr(int64(12))},
		HTTP: &crawl.HTTPSummary{StatusCode: 200, ETag: sumPtr(`"e"`)},
	}
}

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
		ExpressionAttributeValues: map[string]types.AttributeValue{":u": gS(u), ":g": gS(skGenPrefix)},
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
			out[gGetS(it, gaURL)+" "+gGetS(it, gaSK)] = it
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

func TestApplySummaryGenerations(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const u = "http://example.com/"
	alpha, beta := sumPile("alpha"), sumPile("beta")
	type want struct {
		gens    int // generations of u
		first   int64
		last    int64
		content string
	}
	var g1 int64
	steps := []struct {
		name   string
		crawl  string
		at     int64
		action crawl.GenerationAction
		ng     *crawl.NewGeneration
		want   want
		check  func(t *testing.T)
	}{
		{"first crawl opens a generation", "c1", 100, crawl.GenerationReplace, sumGen(u, 100, alpha, "A"),
			want{1, 100, 100, "text:" + hex.EncodeToString(alpha.Digest)}, func(t *testing.T) { g1 = sumOpen(t, db, u).Generation.ID }},
		{"same content extends", "c2", 200, crawl.GenerationExtend, nil, want{1, 100, 200, "text:" + hex.EncodeToString(alpha.Digest)}, nil},
		{"a late crawl does not move last_seen back", "c3", 150, crawl.GenerationExtend, nil, want{1, 100, 200, "text:" + hex.EncodeToString(alpha.Digest)}, nil},
		{"new content replaces", "c4", 300, crawl.GenerationReplace, sumGen(u, 300, beta, "B"),
			want{2, 300, 300, "text:" + hex.EncodeToString(beta.Digest)}, func(t *testing.T) {
				old := sumGenByID(t, db, u, g1).generation()
				want := crawl.EntityGeneration{ID: g1, UUID: old.UUID, URL: u, FirstSeen: 100, LastSeen: 200,
					ConfirmedEnd: sumPtr(int64(300)), TextPileID: sumPtr(TextPileID(alpha.Digest))}
				if !reflect.DeepEqual(old, want) {
					t.Errorf("closed generation:\n got %+v\nwant %+v", old, want)
				}
			}},
		{"failed crawl attaches", "c5", 400, crawl.GenerationAttach, nil, want{2, 300, 300, "text:" + hex.EncodeToString(beta.Digest)}, nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var openID int64
			if o, err := db.OpenGeneration(ctx, u); err == nil {
				openID = o.Generation.ID
			} else if !errors.Is(err, crawl.ErrNotFound) {
				t.Fatal(err)
			}
			s := sumSummary(u, st.crawl, st.at, st.action, openID, st.ng)
			if st.action == crawl.GenerationAttach {
				s.Crawl.ExitCode, s.HTTP = crawl.ExitTimeout, nil
			}
			if !sumApply(t, db, s) {
				t.Fatal("ApplySummary reported the crawl as already summarized")
			}
			o := sumOpen(t, db, u)
			got := want{len(sumGens(t, db, u)), o.Generation.FirstSeen, o.Generation.LastSeen, o.ContentKey}
			if got != st.want {
				t.Errorf("after %s: %+v, want %+v", st.crawl, got, st.want)
			}
			if !o.Generation.Open() {
				t.Errorf("open generation has confirmed_end %v", *o.Generation.ConfirmedEnd)
			}
			if g := gGetN(sumCrawl(t, db, u, st.crawl), gaGenID); g != o.Generation.ID {
				t.Errorf("crawl summary of %s points at generation %d, want the open one %d", st.crawl, g, o.Generation.ID)
			}
			if st.check != nil {
				st.check(t)
			}
		})
	}
	if n := sumKinds(t, db); !reflect.DeepEqual(n, map[string]int{"head": 1, "gen": 2, "crawl": 5}) {
		t.Errorf("items by kind: %v", n)
	}
	// The crawl summary items, whole.
	c4 := sumCrawl(t, db, u, "c4")
	wantC4 := map[string]types.AttributeValue{
		gaURL: gS(u), gaSK: gS("crawl#c4"), gaWasRobotsApproved: gBool(true), gaCrawlType: gN(int64(crawl.CrawlFirst)),
		gaCrawlUUID: gS("c4"), gaAgentUUID: gS(sumAgentUUID), gaTimeStarted: gN(300), gaExitCode: gN(int64(crawl.ExitComplete)),
		gaGenID: gN(sumOpen(t, db, u).Generation.ID), gaRequestDuration: gN(12),
		gaHTTP: &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{gaStatusCode: gN(200), gaETag: gS(`"e"`)}},
	}
	if !reflect.DeepEqual(c4, wantC4) {
		t.Errorf("crawl summary item:\n got %v\nwant %v", c4, wantC4)
	}
	if c5 := sumCrawl(t, db, u, "c5"); c5[gaHTTP] != nil || gGetN(c5, gaExitCode) != int64(crawl.ExitTimeout) {
		t.Errorf("failed crawl's summary: %v, want no http_summary and exit code timeout", c5)
	}
	head, _ := db.getGenTableItem(ctx, u, skHead)
	if gGetN(head, gaGenCount) != 2 {
		t.Errorf("head: %v, want gen_count 2", head)
	}
}

func TestApplySummaryFailedFirstCrawl(t *testing.T) {
	db, _ := sumDB(t)
	const u = "http://example.com/down"
	s := sumSummary(u, "c1", 100, crawl.GenerationAttach, 0, nil)
	s.Crawl.ExitCode, s.HTTP = crawl.ExitNetworkError, nil
	if !sumApply(t, db, s) {
		t.Fatal("not fresh")
	}
	if it := sumCrawl(t, db, u, "c1"); it[gaGenID] != nil {
		t.Errorf("failed crawl of a URL without generations points at generation %v, want none", it[gaGenID])
	}
	if _, err := db.OpenGeneration(context.Background(), u); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("OpenGeneration = %v, want ErrNotFound", err)
	}
	// An extend with nothing open attaches, as in the SQLite store.
	if !sumApply(t, db, sumSummary(u, "c2", 200, crawl.GenerationExtend, 0, nil)) {
		t.Fatal("not fresh")
	}
	if n := sumKinds(t, db); !reflect.DeepEqual(n, map[string]int{"crawl": 2}) {
		t.Errorf("items by kind: %v, want two crawl summaries only", n)
	}
}

func TestApplySummaryAttachments(t *testing.T) {
	ctx := context.Background()
	blobs := &sumHeadBlobs{sumBlobs: newSumBlobs()}
	db := testDB(t, WithBlobs(blobs))
	const u = "http://example.com/doc"
	p := &crawl.TextPile{Text: "lamps and lighthouses", BigHeadlines: "Lamps", SmallHeadlines: "Oil", CodeText: "x := 1"}
	p.Digest = p.ComputeDigest()
	ng := sumGen(u, 100, p, "Lamps")
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
	sumApply(t, db, sumSummary(u, "c1", 100, crawl.GenerationReplace, 0, ng))
	o := sumOpen(t, db, u)
	gid, _ := GenerationID(ng.Generation.UUID)
	wantOpen := crawl.OpenGeneration{Generation: crawl.EntityGeneration{ID: gid, UUID: ng.Generation.UUID, URL: u,
		URLFragment: sumPtr("frag"), FirstSeen: 100, LastSeen: 100, TextPileID: sumPtr(TextPileID(p.Digest))}, ContentKey: ng.ContentKey}
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
		if gGetS(raw, gaBodyKey) != "raw/aa/bb" || !gGetBool(raw, gaNoIndex) {
			t.Errorf("body_key %q noindex %v", gGetS(raw, gaBodyKey), gGetBool(raw, gaNoIndex))
		}
	})
	t.Run("search fields", func(t *testing.T) {
		if gGetS(raw, gaSearchText) != "lamps and lighthouses" || gGetS(raw, gaSearchHeadlines) != "Lamps\nOil" {
			t.Errorf("search_text %q search_headlines %q", gGetS(raw, gaSearchText), gGetS(raw, gaSearchHeadlines))
		}
	})
	t.Run("links round-trip", func(t *testing.T) {
		b, ok := raw[gaLinks].(*types.AttributeValueMemberB)
		if !ok {
			t.Fatalf("link_summary is %T", raw[gaLinks])
		}
		got, err := decodeLinks(b.Value, gid)
		if err != nil {
			t.Fatal(err)
		}
		want := append([]crawl.LinkSummary(nil), ng.Links...)
		for i := range want {
			want[i].ID, want[i].GenerationID = int64(i+1), gid
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("links:\n got %+v\nwant %+v", got, want)
		}
		if gGetN(raw, gaLinkCount) != 3 || raw[gaLinksDropped] != nil {
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
	_, err := db.ApplySummary(context.Background(), sumSummary(u, "c1", 100, crawl.GenerationReplace, 0, sumGen(u, 100, sumPile("x"), "X")))
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
	ng := sumGen(u, 100, sumPile("links"), "Links")
	ng.Links = links
	sumApply(t, db, sumSummary(u, "c1", 100, crawl.GenerationReplace, 0, ng))
	gid, _ := GenerationID(ng.Generation.UUID)
	raw := sumItems(t, db)[u+" "+genSK(100, gid)]
	b := raw[gaLinks].(*types.AttributeValueMemberB).Value
	kept, dropped := gGetN(raw, gaLinkCount), gGetN(raw, gaLinksDropped)
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
	same, other := sumPile("the same words"), sumPile("other words")
	tokens := map[string]int{"the": 1, "same": 1, "words": 1}

	g := sumGen(a, 100, same, "A")
	g.Tokens = tokens
	sumApply(t, db, sumSummary(a, "c1", 100, crawl.GenerationReplace, 0, g))
	g1 := sumOpen(t, db, a).Generation.ID
	// Another URL with the same text: a duplicate sharing the pile.
	g = sumDupGen(b, 110, same, "B", g1)
	g.Tokens = tokens
	sumApply(t, db, sumSummary(b, "c2", 110, crawl.GenerationReplace, 0, g))
	gb := sumOpen(t, db, b).Generation.ID
	// a changes, then changes back: its third generation shares the first's pile.
	sumApply(t, db, sumSummary(a, "c3", 200, crawl.GenerationReplace, g1, sumGen(a, 200, other, "A2")))
	g2 := sumOpen(t, db, a).Generation.ID
	g = sumGen(a, 300, same, "A3")
	g.Tokens = tokens
	sumApply(t, db, sumSummary(a, "c4", 300, crawl.GenerationReplace, g2, g))
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
	same := sumPile("copied")
	sumApply(t, db, sumSummary(a, "c1", 100, crawl.GenerationReplace, 0, sumGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	sumApply(t, db, sumSummary(b, "c2", 110, crawl.GenerationReplace, 0, sumDupGen(b, 110, same, "B", ga)))
	gb := sumOpen(t, db, b).Generation.ID
	if orig := sumGenByID(t, db, a, ga); orig.OpenDups != 1 {
		t.Errorf("original counts %d open duplicates, want 1", orig.OpenDups)
	}
	sumApply(t, db, sumSummary(b, "c3", 250, crawl.GenerationReplace, gb, sumGen(b, 250, sumPile("own text"), "B2")))
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

func TestApplySummaryIdempotent(t *testing.T) {
	ctx := context.Background()
	db, blobs := sumDB(t)
	const u, v = "http://example.com/", "http://example.com/copy"
	first := sumSummary(u, "c1", 100, crawl.GenerationReplace, 0, sumGen(u, 100, sumPile("one"), "T"))
	sumApply(t, db, first)
	g1 := sumOpen(t, db, u).Generation.ID
	sumApply(t, db, sumSummary(u, "c2", 200, crawl.GenerationExtend, g1, nil))
	dup := sumSummary(v, "c3", 150, crawl.GenerationReplace, 0, sumDupGen(v, 150, sumPile("one"), "C", g1))
	sumApply(t, db, dup)
	before, puts := sumItems(t, db), blobs.putCounts()

	tests := []struct {
		name string
		s    crawl.SummaryUpdate
	}{
		{"first crawl again", first},
		{"extend again, later", sumSummary(u, "c2", 900, crawl.GenerationExtend, g1, nil)},
		{"duplicate again", dup},
		{"same crawl uuid with a stale open id", sumSummary(u, "c1", 100, crawl.GenerationReplace, 12345, sumGen(u, 100, sumPile("x"), "X"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh, err := db.ApplySummary(ctx, tt.s)
			if err != nil || fresh {
				t.Fatalf("ApplySummary = %v, %v; want false, nil", fresh, err)
			}
			if got := sumItems(t, db); !reflect.DeepEqual(got, before) {
				t.Errorf("items changed:\n%v\n->\n%v", before, got)
			}
			if got := blobs.putCounts(); !reflect.DeepEqual(got, puts) {
				t.Errorf("blob puts %v -> %v", puts, got)
			}
		})
	}
	if n := sumKinds(t, db); !reflect.DeepEqual(n, map[string]int{"head": 2, "gen": 2, "crawl": 3}) {
		t.Errorf("items by kind: %v", n)
	}
	if g := sumGenByID(t, db, u, g1); g.OpenDups != 1 {
		t.Errorf("original counts %d open duplicates, want 1: the redelivery counted again", g.OpenDups)
	}
}

// TestApplySummaryConcurrent: summaries planned against the same open
// generation race; one wins, the others lose with a conflict, and a
// crawl delivered twice at once is summarized once.
func TestApplySummaryConcurrent(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const u = "http://example.com/"
	sumApply(t, db, sumSummary(u, "c0", 100, crawl.GenerationReplace, 0, sumGen(u, 100, sumPile("zero"), "Z")))
	g0 := sumOpen(t, db, u).Generation.ID

	const n = 6
	run := func(mk func(i int) crawl.SummaryUpdate) (won, already, conflicts int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fresh, err := db.ApplySummary(ctx, mk(i))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case errors.Is(err, crawl.ErrConflict):
					conflicts++
				case err != nil:
					t.Errorf("ApplySummary: %v", err)
				case fresh:
					won++
				default:
					already++
				}
			}()
		}
		wg.Wait()
		return
	}
	won, _, conflicts := run(func(i int) crawl.SummaryUpdate {
		return sumSummary(u, fmt.Sprintf("r%d", i), 200, crawl.GenerationReplace, g0, sumGen(u, 200, sumPile(fmt.Sprintf("text %d", i)), "R"))
	})
	if won != 1 || conflicts != n-1 {
		t.Errorf("racing replaces: %d won, %d conflicts; want 1 and %d", won, conflicts, n-1)
	}
	if gens := sumGens(t, db, u); len(gens) != 2 {
		t.Errorf("%d generations, want 2", len(gens))
	}
	open := sumOpen(t, db, u).Generation.ID
	won, already, conflicts := run(func(int) crawl.SummaryUpdate {
		return sumSummary(u, "same", 300, crawl.GenerationExtend, open, nil)
	})
	if won != 1 || won+already+conflicts != n {
		t.Errorf("one crawl delivered %d times at once: %d fresh, %d already, %d conflicts; want 1 fresh", n, won, already, conflicts)
	}
	if got := sumKinds(t, db)["crawl"]; got != 3 {
		t.Errorf("%d crawl summaries, want 3", got)
	}
}

func TestApplySummaryConflict(t *testing.T) {
	ctx := context.Background()
	db, blobs := sumDB(t)
	const u, fresh = "http://example.com/", "http://example.com/no-generation"
	sumApply(t, db, sumSummary(u, "c1", 100, crawl.GenerationReplace, 0, sumGen(u, 100, sumPile("one"), "T")))
	g1 := sumOpen(t, db, u).Generation.ID
	sumApply(t, db, sumSummary(u, "c2", 200, crawl.GenerationReplace, g1, sumGen(u, 200, sumPile("two"), "T")))
	g2 := sumOpen(t, db, u).Generation.ID

	tests := []struct {
		name   string
		url    string
		openID int64
		action crawl.GenerationAction
		ng     *crawl.NewGeneration
	}{
		{"replace as if there were none", u, 0, crawl.GenerationReplace, sumGen(u, 300, sumPile("three"), "T")},
		{"replace against the closed generation", u, g1, crawl.GenerationReplace, sumGen(u, 300, sumPile("three"), "T")},
		{"extend the closed generation", u, g1, crawl.GenerationExtend, nil},
		{"attach to an unknown generation", u, g2 + 100, crawl.GenerationAttach, nil},
		{"attach as if there were none", u, 0, crawl.GenerationAttach, nil},
		{"URL without generations", fresh, g2, crawl.GenerationReplace, sumGen(fresh, 300, sumPile("three"), "T")},
		{"duplicate of a closed generation", fresh, 0, crawl.GenerationReplace, sumDupGen(fresh, 300, sumPile("one"), "T", g1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, puts := sumItems(t, db), blobs.putCounts()
			ok, err := db.ApplySummary(ctx, sumSummary(tt.url, "c-conflict", 300, tt.action, tt.openID, tt.ng))
			if !errors.Is(err, crawl.ErrConflict) || ok {
				t.Fatalf("ApplySummary = %v, %v; want ErrConflict", ok, err)
			}
			if crawl.KindOf(err) != crawl.KindConflict || !crawl.IsTransient(err) {
				t.Errorf("kind %v: a conflict must be retryable", crawl.KindOf(err))
			}
			if got := sumItems(t, db); !reflect.DeepEqual(got, before) {
				t.Errorf("items changed:\n%v\n->\n%v", before, got)
			}
			if got := blobs.putCounts(); !reflect.DeepEqual(got, puts) {
				t.Errorf("blob puts %v -> %v", puts, got)
			}
		})
	}
}

// TestApplySummaryIndexBehind: when the duplicates GSI does not list
// what the original counts, closing it is a conflict (after a few
// re-reads), not a hand-over that forgets a copy.
func TestApplySummaryIndexBehind(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	same := sumPile("shared")
	sumApply(t, db, sumSummary(a, "c1", 100, crawl.GenerationReplace, 0, sumGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation
	sumApply(t, db, sumSummary(b, "c2", 110, crawl.GenerationReplace, 0, sumDupGen(b, 110, same, "B", ga.ID)))
	// Pretend a second duplicate is not in the index yet.
	if _, err := db.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(db.t.Generations),
		Key: genKey(a, genSK(100, ga.ID)), UpdateExpression: aws.String("SET #d = :n"),
		ExpressionAttributeNames: map[string]string{"#d": gaOpenDups}, ExpressionAttributeValues: map[string]types.AttributeValue{":n": gN(2)}}); err != nil {
		t.Fatal(err)
	}
	before := sumItems(t, db)
	_, err := db.ApplySummary(ctx, sumSummary(a, "c3", 200, crawl.GenerationReplace, ga.ID, sumGen(a, 200, sumPile("new"), "A2")))
	if !errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("ApplySummary = %v, want ErrConflict", err)
	}
	if got := sumItems(t, db); !reflect.DeepEqual(got, before) {
		t.Error("items changed")
	}
}

func TestFindOriginal(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const a, b, c, n = "http://example.com/a", "http://example.com/b", "http://example.com/c", "http://example.com/n"
	shared, gone, current, hidden := sumPile("shared text"), sumPile("gone text"), sumPile("current text"), sumPile("hidden text")

	sumApply(t, db, sumSummary(a, "c1", 100, crawl.GenerationReplace, 0, sumGen(a, 100, shared, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	sumApply(t, db, sumSummary(b, "c2", 110, crawl.GenerationReplace, 0, sumDupGen(b, 110, shared, "B", ga)))
	sumApply(t, db, sumSummary(c, "c3", 120, crawl.GenerationReplace, 0, sumGen(c, 120, gone, "C")))
	gcOld := sumOpen(t, db, c).Generation.ID
	sumApply(t, db, sumSummary(c, "c4", 130, crawl.GenerationReplace, gcOld, sumGen(c, 130, current, "C2")))
	gc := sumOpen(t, db, c).Generation.ID
	ng := sumGen(n, 90, hidden, "N")
	ng.NoIndex = true
	sumApply(t, db, sumSummary(n, "c5", 90, crawl.GenerationReplace, 0, ng))
	sumApply(t, db, sumSummary("http://example.com/empty", "c8", 95, crawl.GenerationReplace, 0, sumGen("http://example.com/empty", 95, sumPile(""), "E")))
	// A later original of the current text at another URL: the earliest wins.
	sumApply(t, db, sumSummary("http://example.com/d", "c6", 140, crawl.GenerationReplace, 0, sumGen("http://example.com/d", 140, current, "D")))

	tests := []struct {
		name   string
		digest []byte
		url    string
		want   int64
	}{
		{"another URL's open original", shared.Digest, "http://example.com/new", ga},
		{"the duplicate finds the original", shared.Digest, b, ga},
		{"not the URL itself, nor a duplicate", shared.Digest, a, 0},
		{"closed generation is no original", gone.Digest, "http://example.com/new", 0},
		{"open generation after a change, the earliest", current.Digest, "http://example.com/new", gc},
		{"the earliest of another URL", current.Digest, c, sumOpen(t, db, "http://example.com/d").Generation.ID},
		{"noindex page is no original", hidden.Digest, "http://example.com/new", 0},
		{"unknown digest", sumPile("never seen").Digest, "http://example.com/new", 0},
		{"empty text is never compared", sumPile("").Digest, "http://example.com/new", 0},
		{"no digest", nil, "http://example.com/new", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.FindOriginal(ctx, tt.digest, tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("FindOriginal = %d, want %d", got, tt.want)
			}
		})
	}

	t.Run("original closed: its copy takes over", func(t *testing.T) {
		sumApply(t, db, sumSummary(a, "c7", 200, crawl.GenerationReplace, ga, sumGen(a, 200, sumPile("a moved on"), "A2")))
		got, err := db.FindOriginal(ctx, shared.Digest, "http://example.com/new")
		if err != nil {
			t.Fatal(err)
		}
		if gb := sumOpen(t, db, b).Generation.ID; got != gb {
			t.Errorf("FindOriginal = %d, want %d: the promoted copy", got, gb)
		}
	})
}

// TestDuplicatesPromotedWhenOriginalCloses: with an original and three
// copies, the earliest a noindex page, when the original changes the
// earliest indexable copy becomes the original and the others are
// re-pointed to it; search finds the text again.
func TestDuplicatesPromotedWhenOriginalCloses(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const a, n, b, c = "http://example.com/a", "http://example.com/n", "http://example.com/b", "http://example.com/c"
	same := sumPile("beacon keepers handbook")
	sumApply(t, db, sumSummary(a, "c1", 100, crawl.GenerationReplace, 0, sumGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	g := sumDupGen(n, 105, same, "N", ga)
	g.NoIndex = true
	sumApply(t, db, sumSummary(n, "c2", 105, crawl.GenerationReplace, 0, g))
	for i, u := range []string{b, c} {
		sumApply(t, db, sumSummary(u, fmt.Sprintf("c%d", 3+i), int64(110+i), crawl.GenerationReplace, 0, sumDupGen(u, int64(110+i), same, u, ga)))
	}
	sumApply(t, db, sumSummary(a, "c9", 200, crawl.GenerationReplace, ga, sumGen(a, 200, sumPile("moved on"), "A2")))

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
	hits, err := db.Search(ctx, "beacon", 10)
	if err != nil || len(hits) != 1 || hits[0].URL != b {
		t.Errorf("search after promotion: %+v (%v), want b only", hits, err)
	}
	if got, err := db.FindOriginal(ctx, same.Digest, "http://example.com/new"); err != nil || got != gb.ID {
		t.Errorf("FindOriginal = %d, %v; want the heir %d", got, err, gb.ID)
	}

	// The heir changes too: c (indexable) takes over, n follows.
	sumApply(t, db, sumSummary(b, "c10", 300, crawl.GenerationReplace, gb.ID, sumGen(b, 300, sumPile("b moved on"), "B2")))
	gn, gc = sumGens(t, db, n)[0], sumGens(t, db, c)[0]
	if !gc.Original || gc.OpenDups != 1 || gn.DupOf != gc.ID || len(gn.History) != 3 {
		t.Errorf("after the heir closed: c original %v open_dups %d; n dup_of %d (want %d) history %+v",
			gc.Original, gc.OpenDups, gn.DupOf, gc.ID, gn.History)
	}
}

// TestPromotionWithoutIndexableCopy: copies that are all noindex become
// originals of their own (none findable as one: noindex).
func TestPromotionWithoutIndexableCopy(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const a, n = "http://example.com/a", "http://example.com/n"
	same := sumPile("members only")
	sumApply(t, db, sumSummary(a, "c1", 100, crawl.GenerationReplace, 0, sumGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	g := sumDupGen(n, 110, same, "N", ga)
	g.NoIndex = true
	sumApply(t, db, sumSummary(n, "c2", 110, crawl.GenerationReplace, 0, g))
	sumApply(t, db, sumSummary(a, "c3", 200, crawl.GenerationReplace, ga, sumGen(a, 200, sumPile("public"), "A2")))
	gn := sumGens(t, db, n)[0]
	if gn.MarkedDuplicate || gn.Original || gn.DupOf != 0 || len(gn.History) != 1 || gn.History[0].End == nil {
		t.Errorf("noindex copy: %+v; want unmarked, not an original, its status ended", gn)
	}
	if got, err := db.FindOriginal(ctx, same.Digest, "http://example.com/new"); err != nil || got != 0 {
		t.Errorf("FindOriginal = %d, %v; want none", got, err)
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
	same := sumPile("terms of service")
	sumApply(t, db, sumSummary(a, "c0", 100, crawl.GenerationReplace, 0, sumGen(a, 100, same, "A")))
	ga := sumOpen(t, db, a).Generation.ID
	const copies = 2*maxTxItems + 10
	urls := make([]string, copies)
	for i := range urls {
		urls[i] = fmt.Sprintf("http://example.com/copy/%03d", i)
		g := sumDupGen(urls[i], int64(1000+i), same, "copy", ga)
		g.NoIndex = i == 0 // never the heir
		sumApply(t, db, sumSummary(urls[i], fmt.Sprintf("d%d", i), int64(1000+i), crawl.GenerationReplace, 0, g))
	}
	if g := sumGenByID(t, db, a, ga); g.OpenDups != copies {
		t.Fatalf("original counts %d copies, want %d", g.OpenDups, copies)
	}

	// The first transaction commits, the process dies before the next.
	closing := sumSummary(a, "c1", 5000, crawl.GenerationReplace, ga, sumGen(a, 5000, sumPile("new terms"), "A2"))
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
	if err := db.queryGenIndex(ctx, IndexDuplicates, gaDupOf, gN(heir.ID), 0, func(it map[string]types.AttributeValue) bool {
		under = append(under, gGetS(it, gaURL))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	sort.Strings(under)
	if len(under) != copies-1 {
		t.Errorf("%d copies listed under the heir, want %d", len(under), copies-1)
	}
}
