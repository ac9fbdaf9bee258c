package sqlite_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/sqlite"
)

func textPile(text string) *crawl.TextPile {
	p := crawl.TextPile{Text: text}
	p.Digest = p.ComputeDigest()
	return &p
}

// textGen is a generation of u whose content is the text pile p, first
// seen at at.
func textGen(u string, at int64, p *crawl.TextPile, title string) *crawl.NewGeneration {
	return &crawl.NewGeneration{
		Generation:  crawl.EntityGeneration{UUID: "gen-" + u + "-" + hex.EncodeToString(p.Digest[:4]) + "-" + strconv.FormatInt(at, 10), URL: u, FirstSeen: at, LastSeen: at},
		ContentKey:  "text:" + hex.EncodeToString(p.Digest),
		TextPile:    p,
		Description: &crawl.DocumentDescription{Title: ptr(title), Indexiness: 50},
	}
}

func summaryUpdate(u, crawlUUID string, at int64, action crawl.GenerationAction, openID int64, ng *crawl.NewGeneration) crawl.SummaryUpdate {
	return crawl.SummaryUpdate{
		URL: u, Action: action, OpenID: openID, SeenAt: at, New: ng,
		Crawl: crawl.CrawlSummary{WasRobotsTxtApproved: true, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			AgentUUID: agentUUID, TimeStarted: at, ExitCode: crawl.ExitComplete, RequestDurationMS: ptr(int64(12))},
		HTTP: &crawl.HTTPSummary{StatusCode: 200, ETag: ptr(`"e"`)},
	}
}

func apply(t *testing.T, db *sqlite.DB, s crawl.SummaryUpdate) bool {
	t.Helper()
	fresh, err := db.ApplySummary(context.Background(), s)
	if err != nil {
		t.Fatalf("apply summary of %s: %v", s.Crawl.CrawlUUID, err)
	}
	return fresh
}

func openGen(t *testing.T, db *sqlite.DB, u string) crawl.OpenGeneration {
	t.Helper()
	o, err := db.OpenGeneration(context.Background(), u)
	if err != nil {
		t.Fatalf("open generation of %s: %v", u, err)
	}
	return o
}

type genRow struct {
	FirstSeen, LastSeen int64
	ConfirmedEnd        *int64
	Duplicate           bool
	TextPileID          *int64
}

func generation(t *testing.T, db *sqlite.DB, id int64) genRow {
	t.Helper()
	var g genRow
	err := db.SQL().QueryRowContext(context.Background(), `SELECT first_seen_unix_utc, last_seen_unix_utc, confirmed_end_unix_utc,
		marked_duplicate, text_pile_id FROM entity_generation WHERE entity_generation_id=?`, id).
		Scan(&g.FirstSeen, &g.LastSeen, &g.ConfirmedEnd, &g.Duplicate, &g.TextPileID)
	if err != nil {
		t.Fatalf("generation %d: %v", id, err)
	}
	return g
}

// summaryGeneration returns the generation a crawl summary points at (0: none).
func summaryGeneration(t *testing.T, db *sqlite.DB, crawlUUID string) int64 {
	t.Helper()
	var id *int64
	if err := db.SQL().QueryRowContext(context.Background(), `SELECT entity_generation_id FROM crawl_summary WHERE crawl_uuid=?`,
		crawlUUID).Scan(&id); err != nil {
		t.Fatalf("crawl summary %s: %v", crawlUUID, err)
	}
	if id == nil {
		return 0
	}
	return *id
}

func TestApplySummaryGenerations(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const u = "http://example.com/"
	alpha, beta := textPile("alpha"), textPile("beta")

	// Each step is one crawl of u, applied against the open generation of
	// the moment; then the generations are checked.
	type want struct {
		gens    int   // generations of u
		first   int64 // open generation's first_seen
		last    int64 // open generation's last_seen
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
		{"first crawl opens a generation", "c1", 100, crawl.GenerationReplace, textGen(u, 100, alpha, "A"),
			want{1, 100, 100, "text:" + hex.EncodeToString(alpha.Digest)}, func(t *testing.T) { g1 = openGen(t, db, u).Generation.ID }},
		{"same content extends", "c2", 200, crawl.GenerationExtend, nil, want{1, 100, 200, "text:" + hex.EncodeToString(alpha.Digest)}, nil},
		{"a late crawl does not move last_seen back", "c3", 150, crawl.GenerationExtend, nil, want{1, 100, 200, "text:" + hex.EncodeToString(alpha.Digest)}, nil},
		{"new content replaces", "c4", 300, crawl.GenerationReplace, textGen(u, 300, beta, "B"),
			want{2, 300, 300, "text:" + hex.EncodeToString(beta.Digest)}, func(t *testing.T) {
				old := generation(t, db, g1)
				if old.ConfirmedEnd == nil || *old.ConfirmedEnd != 300 || old.LastSeen != 200 || old.FirstSeen != 100 {
					t.Errorf("closed generation: %+v, want first 100 last 200 confirmed_end 300", old)
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
			s := summaryUpdate(u, st.crawl, st.at, st.action, openID, st.ng)
			if st.action == crawl.GenerationAttach {
				s.Crawl.ExitCode, s.HTTP = crawl.ExitTimeout, nil
			}
			if !apply(t, db, s) {
				t.Fatal("ApplySummary reported the crawl as already summarized")
			}
			o := openGen(t, db, u)
			got := want{count(t, db, `SELECT count(*) FROM entity_generation`), o.Generation.FirstSeen, o.Generation.LastSeen, o.ContentKey}
			if got != st.want {
				t.Errorf("after %s: %+v, want %+v", st.crawl, got, st.want)
			}
			if o.Generation.ConfirmedEnd != nil || !o.Generation.Open() {
				t.Errorf("open generation has confirmed_end %v", *o.Generation.ConfirmedEnd)
			}
			if g := summaryGeneration(t, db, st.crawl); g != o.Generation.ID {
				t.Errorf("crawl_summary of %s points at generation %d, want the open one %d", st.crawl, g, o.Generation.ID)
			}
			if st.check != nil {
				st.check(t)
			}
		})
	}
	if n := count(t, db, `SELECT count(*) FROM http_summary`); n != 4 {
		t.Errorf("http_summary rows = %d, want 4 (the failed crawl had no response)", n)
	}
	if n := count(t, db, `SELECT count(*) FROM crawl_summary WHERE exit_code=?`, crawl.ExitTimeout); n != 1 {
		t.Errorf("failed crawl summaries = %d, want 1", n)
	}
}

func TestApplySummaryFailedFirstCrawl(t *testing.T) {
	db := openDB(t)
	s := summaryUpdate("http://example.com/down", "c1", 100, crawl.GenerationAttach, 0, nil)
	s.Crawl.ExitCode, s.HTTP = crawl.ExitNetworkError, nil
	if !apply(t, db, s) {
		t.Fatal("not fresh")
	}
	if g := summaryGeneration(t, db, "c1"); g != 0 {
		t.Errorf("failed crawl of a URL without generations points at generation %d, want NULL", g)
	}
	if _, err := db.OpenGeneration(context.Background(), "http://example.com/down"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("OpenGeneration = %v, want ErrNotFound", err)
	}
}

func TestApplySummaryAttachments(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const u = "http://example.com/doc"
	p := textPile("lamps and lighthouses")
	ng := textGen(u, 100, p, "Lamps")
	ng.BodyKey, ng.NoIndex = "raw/aa/bb", true
	ng.Tokens = map[string]int{"lamps": 1, "and": 1, "lighthouses": 1}
	ng.File = &crawl.FileSummary{FileSize: ptr(int64(1234)), MIMEType: ptr("text/html"), CanonicalURL: ptr("http://example.com/canon")}
	ng.Description = &crawl.DocumentDescription{TimeCreated: ptr(int64(1)), TimeUpdated: ptr(int64(2)), PrimaryLanguage: ptr("en"),
		Title: ptr("Lamps"), PrimaryHeadline: ptr("All about lamps"), Description: ptr("A page"), Indexiness: 0}
	dt := crawl.DestPage
	ng.Links = []crawl.LinkSummary{
		{LinkToURL: "http://example.com/a", RelNofollow: true, Location: crawl.Location{InNav: true, InList: true},
			DestinationType: &dt, Locality: crawl.LocalitySameHost, HTMLTagName: ptr("a"), Text: ptr("A")},
		{LinkToURL: "http://example.org/", LinkToFragment: ptr("top"), Location: crawl.Location{InMain: true}, ContainsHeadline: true,
			Locality: crawl.LocalityExternal},
	}
	apply(t, db, summaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, ng))
	gid := openGen(t, db, u).Generation.ID

	tests := []struct {
		name  string
		query string
		want  []any
	}{
		{"generation_content", `SELECT content_key, body_key, noindex FROM generation_content WHERE entity_generation_id=?`,
			[]any{ng.ContentKey, "raw/aa/bb", int64(1)}},
		{"file_summary", `SELECT f.file_size, m.mimetype, u.url FROM file_summary f JOIN mimetype m ON m.mimetype_id=f.mimetype_id
			JOIN url u ON u.url_id=f.canonical_url_id WHERE f.entity_generation_id=?`, []any{int64(1234), "text/html", "http://example.com/canon"}},
		{"document_description", `SELECT primary_language, title, primary_headline, description, indexiness, time_created_unix_utc
			FROM document_description WHERE entity_generation_id=?`, []any{"en", "Lamps", "All about lamps", "A page", int64(0), int64(1)}},
		{"link_summary", `SELECT count(*), sum(rel_nofollow), sum(in_nav), sum(in_main), sum(contains_headline),
			sum(destination_type IS NULL), group_concat(link_locality) FROM link_summary WHERE entity_generation_id=?`,
			[]any{int64(2), int64(1), int64(1), int64(1), int64(1), int64(1), "2,4"}},
		{"text pile", `SELECT p.text FROM text_pile p JOIN entity_generation g ON g.text_pile_id=p.text_pile_id
			WHERE g.entity_generation_id=?`, []any{"lamps and lighthouses"}},
		{"tokens", `SELECT count(*), sum(s.occurances) FROM token_statistics s JOIN entity_generation g ON g.text_pile_id=s.text_pile_id
			WHERE g.entity_generation_id=?`, []any{int64(3), int64(3)}},
		{"full text row carries title and description", `SELECT f.title, f.description FROM full_text_entity_index f
			JOIN entity_generation g ON g.text_pile_id=f.text_pile_id WHERE g.entity_generation_id=?`, []any{"Lamps", "A page"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := db.SQL().QueryContext(ctx, tt.query, gid)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			if !rows.Next() {
				t.Fatalf("no row")
			}
			got := make([]any, len(tt.want))
			ptrs := make([]any, len(got))
			for i := range got {
				ptrs[i] = &got[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestApplySummaryTextPileOncePerDigest(t *testing.T) {
	db := openDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	same, other := textPile("the same words"), textPile("other words")
	tokens := map[string]int{"the": 1, "same": 1, "words": 1}

	g := textGen(a, 100, same, "A")
	g.Tokens = tokens
	apply(t, db, summaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, g))
	g1 := openGen(t, db, a).Generation.ID
	// Another URL with the same text: a duplicate sharing the pile.
	g = textGen(b, 110, same, "B")
	g.Tokens, g.DuplicateOf, g.Generation.MarkedDuplicate = tokens, g1, true
	apply(t, db, summaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, g))
	// a changes, then changes back: its third generation shares the first's pile.
	apply(t, db, summaryUpdate(a, "c3", 200, crawl.GenerationReplace, g1, textGen(a, 200, other, "A2")))
	g2 := openGen(t, db, a).Generation.ID
	g = textGen(a, 300, same, "A3")
	g.Tokens = tokens
	apply(t, db, summaryUpdate(a, "c4", 300, crawl.GenerationReplace, g2, g))
	g3 := openGen(t, db, a).Generation.ID
	gb := openGen(t, db, b).Generation.ID

	tests := []struct {
		name  string
		query string
		args  []any
		want  int
	}{
		{"generations", `SELECT count(*) FROM entity_generation`, nil, 4},
		{"text piles: one per digest", `SELECT count(*) FROM text_pile`, nil, 2},
		{"full-text rows: one per pile", `SELECT count(*) FROM full_text_entity_index`, nil, 2},
		{"full-text rows of the shared digest", `SELECT count(*) FROM full_text_entity_index f JOIN text_pile p
			ON p.text_pile_id=f.text_pile_id WHERE p.blake2b512_digest=?`, []any{same.Digest}, 1},
		{"generations sharing the pile", `SELECT count(*) FROM entity_generation g JOIN text_pile p ON p.text_pile_id=g.text_pile_id
			WHERE p.blake2b512_digest=?`, []any{same.Digest}, 3},
		{"token statistics written once", `SELECT count(*) FROM token_statistics`, nil, 3},
		{"duplicate summary", `SELECT count(*) FROM duplicate_summary WHERE subject_entity_generation_id=? AND duplicate_of_entity_generation_id=?`,
			[]any{gb, g1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := count(t, db, tt.query, tt.args...); n != tt.want {
				t.Errorf("%d, want %d", n, tt.want)
			}
		})
	}
	r1, r3, rb := generation(t, db, g1), generation(t, db, g3), generation(t, db, gb)
	if r1.TextPileID == nil || r3.TextPileID == nil || rb.TextPileID == nil || *r1.TextPileID != *r3.TextPileID || *r1.TextPileID != *rb.TextPileID {
		t.Errorf("text pile ids: first %v third %v other URL %v, want one shared id", r1.TextPileID, r3.TextPileID, rb.TextPileID)
	}
	// When a's first generation (the original) closed at 200, b's copy
	// took over as the original: its duplicate status ended then.
	if rb.Duplicate {
		t.Error("the copy is still marked duplicate after its original closed")
	}
	if n := count(t, db, `SELECT count(*) FROM duplicate_summary WHERE subject_entity_generation_id=?
		AND duplicate_of_entity_generation_id=? AND duplicate_status_end_unix_utc=200`, gb, g1); n != 1 {
		t.Errorf("duplicate status of the copy not ended when the original closed (%d rows)", n)
	}
}

func TestApplySummaryEndsDuplicateStatus(t *testing.T) {
	db := openDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	same := textPile("copied")
	apply(t, db, summaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, textGen(a, 100, same, "A")))
	ga := openGen(t, db, a).Generation.ID
	g := textGen(b, 110, same, "B")
	g.DuplicateOf, g.Generation.MarkedDuplicate = ga, true
	apply(t, db, summaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, g))
	gb := openGen(t, db, b).Generation.ID
	apply(t, db, summaryUpdate(b, "c3", 250, crawl.GenerationReplace, gb, textGen(b, 250, textPile("own text"), "B2")))
	var end *int64
	if err := db.SQL().QueryRow(`SELECT duplicate_status_end_unix_utc FROM duplicate_summary WHERE subject_entity_generation_id=?`, gb).Scan(&end); err != nil {
		t.Fatal(err)
	}
	if end == nil || *end != 250 {
		t.Errorf("duplicate status end = %v, want 250", end)
	}
}

func TestApplySummaryIdempotent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const u = "http://example.com/"
	first := summaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, textGen(u, 100, textPile("one"), "T"))
	apply(t, db, first)
	g1 := openGen(t, db, u).Generation.ID
	apply(t, db, summaryUpdate(u, "c2", 200, crawl.GenerationExtend, g1, nil))

	snapshot := func() map[string]int {
		out := map[string]int{}
		for _, tb := range []string{"entity_generation", "crawl_summary", "http_summary", "text_pile", "full_text_entity_index",
			"generation_content", "document_description"} {
			out[tb] = count(t, db, `SELECT count(*) FROM `+tb)
		}
		return out
	}
	before := snapshot()
	beforeGen := generation(t, db, g1)

	tests := []struct {
		name string
		s    crawl.SummaryUpdate
	}{
		{"first crawl again", first},
		{"extend again, later", summaryUpdate(u, "c2", 900, crawl.GenerationExtend, g1, nil)},
		{"same crawl uuid with a stale open id", summaryUpdate(u, "c1", 100, crawl.GenerationReplace, 12345, textGen(u, 100, textPile("x"), "X"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fresh, err := db.ApplySummary(ctx, tt.s)
			if err != nil || fresh {
				t.Fatalf("ApplySummary = %v, %v; want false, nil", fresh, err)
			}
			if got := snapshot(); !reflect.DeepEqual(got, before) {
				t.Errorf("rows changed: %v -> %v", before, got)
			}
			if got := generation(t, db, g1); !reflect.DeepEqual(got, beforeGen) {
				t.Errorf("generation changed: %+v -> %+v", beforeGen, got)
			}
			if rec, err := db.SummaryRecorded(ctx, tt.s.Crawl.CrawlUUID); err != nil || !rec {
				t.Errorf("SummaryRecorded = %v, %v", rec, err)
			}
		})
	}
	if rec, err := db.SummaryRecorded(ctx, "never"); err != nil || rec {
		t.Errorf("SummaryRecorded(never) = %v, %v", rec, err)
	}
}

func TestApplySummaryConflict(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const u, fresh = "http://example.com/", "http://example.com/no-generation"
	apply(t, db, summaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, textGen(u, 100, textPile("one"), "T")))
	g1 := openGen(t, db, u).Generation.ID
	apply(t, db, summaryUpdate(u, "c2", 200, crawl.GenerationReplace, g1, textGen(u, 200, textPile("two"), "T")))
	g2 := openGen(t, db, u).Generation.ID

	tests := []struct {
		name   string
		url    string
		openID int64
		action crawl.GenerationAction
		ng     *crawl.NewGeneration
	}{
		{"replace as if there were none", u, 0, crawl.GenerationReplace, textGen(u, 300, textPile("three"), "T")},
		{"replace against the closed generation", u, g1, crawl.GenerationReplace, textGen(u, 300, textPile("three"), "T")},
		{"extend the closed generation", u, g1, crawl.GenerationExtend, nil},
		{"attach to an unknown generation", u, g2 + 100, crawl.GenerationAttach, nil},
		{"URL without generations", fresh, g2, crawl.GenerationReplace, textGen(fresh, 300, textPile("three"), "T")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gens := count(t, db, `SELECT count(*) FROM entity_generation`)
			sums := count(t, db, `SELECT count(*) FROM crawl_summary`)
			piles := count(t, db, `SELECT count(*) FROM text_pile`)
			open := generation(t, db, g2)
			ok, err := db.ApplySummary(ctx, summaryUpdate(tt.url, "c-conflict", 300, tt.action, tt.openID, tt.ng))
			if !errors.Is(err, crawl.ErrConflict) || ok {
				t.Fatalf("ApplySummary = %v, %v; want ErrConflict", ok, err)
			}
			if crawl.KindOf(err) != crawl.KindConflict || !crawl.IsTransient(err) {
				t.Errorf("kind %v: a conflict must be retryable", crawl.KindOf(err))
			}
			if g, s, p := count(t, db, `SELECT count(*) FROM entity_generation`), count(t, db, `SELECT count(*) FROM crawl_summary`),
				count(t, db, `SELECT count(*) FROM text_pile`); g != gens || s != sums || p != piles {
				t.Errorf("rows changed: generations %d->%d summaries %d->%d piles %d->%d", gens, g, sums, s, piles, p)
			}
			if got := generation(t, db, g2); !reflect.DeepEqual(got, open) {
				t.Errorf("open generation changed: %+v -> %+v", open, got)
			}
			if rec, _ := db.SummaryRecorded(ctx, "c-conflict"); rec {
				t.Error("conflicting crawl recorded")
			}
		})
	}
}

func TestFindOriginal(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const a, b, c = "http://example.com/a", "http://example.com/b", "http://example.com/c"
	shared, gone, current := textPile("shared text"), textPile("gone text"), textPile("current text")

	apply(t, db, summaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, textGen(a, 100, shared, "A")))
	ga := openGen(t, db, a).Generation.ID
	g := textGen(b, 110, shared, "B")
	g.DuplicateOf, g.Generation.MarkedDuplicate = ga, true
	apply(t, db, summaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, g))
	apply(t, db, summaryUpdate(c, "c3", 120, crawl.GenerationReplace, 0, textGen(c, 120, gone, "C")))
	gcOld := openGen(t, db, c).Generation.ID
	apply(t, db, summaryUpdate(c, "c4", 130, crawl.GenerationReplace, gcOld, textGen(c, 130, current, "C2")))
	gc := openGen(t, db, c).Generation.ID

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
		{"open generation after a change", current.Digest, "http://example.com/new", gc},
		{"unknown digest", textPile("never seen").Digest, "http://example.com/new", 0},
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
		apply(t, db, summaryUpdate(a, "c5", 200, crawl.GenerationReplace, ga, textGen(a, 200, textPile("a moved on"), "A2")))
		got, err := db.FindOriginal(ctx, shared.Digest, "http://example.com/new")
		if err != nil {
			t.Fatal(err)
		}
		// b's copy took over as the original when a's generation closed.
		if gb := openGen(t, db, b).Generation.ID; got != gb {
			t.Errorf("FindOriginal = %d, want %d: the promoted copy", got, gb)
		}
	})
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const (
		lamps    = "http://example.com/lamps"
		tower    = "http://example.com/tower"
		copyURL  = "http://example.com/copy"
		changed  = "http://example.com/changed"
		noindex  = "http://example.com/noindex"
		unrelate = "http://example.com/unrelated"
	)
	lampsPile := textPile("lighthouse lamps burn oil")
	apply(t, db, summaryUpdate(lamps, "c1", 100, crawl.GenerationReplace, 0, textGen(lamps, 100, lampsPile, "Lamps")))
	orig := openGen(t, db, lamps).Generation.ID
	apply(t, db, summaryUpdate(tower, "c2", 100, crawl.GenerationReplace, 0, textGen(tower, 100, textPile("a lighthouse tower"), "Lighthouse")))
	g := textGen(copyURL, 110, lampsPile, "Copy")
	g.DuplicateOf, g.Generation.MarkedDuplicate = orig, true
	apply(t, db, summaryUpdate(copyURL, "c3", 110, crawl.GenerationReplace, 0, g))
	apply(t, db, summaryUpdate(changed, "c4", 100, crawl.GenerationReplace, 0, textGen(changed, 100, textPile("lighthouse keeper"), "Old")))
	old := openGen(t, db, changed).Generation.ID
	apply(t, db, summaryUpdate(changed, "c5", 200, crawl.GenerationReplace, old, textGen(changed, 200, textPile("nothing of note"), "New")))
	g = textGen(noindex, 100, textPile("secret lighthouse"), "Hidden")
	g.NoIndex = true
	apply(t, db, summaryUpdate(noindex, "c6", 100, crawl.GenerationReplace, 0, g))
	apply(t, db, summaryUpdate(unrelate, "c7", 100, crawl.GenerationReplace, 0, textGen(unrelate, 100, textPile("gardening tips"), "Garden")))

	tests := []struct {
		name  string
		query string
		limit int
		want  []string
	}{
		{"title ranks above text; duplicate, closed and noindex left out", "lighthouse", 10, []string{tower, lamps}},
		{"limit", "lighthouse", 1, []string{tower}},
		{"every word must match", "lighthouse oil", 10, []string{lamps}},
		{"closed generation's words", "keeper", 10, []string{}},
		{"noindex page's words", "secret", 10, []string{}},
		{"open generation after a change", "note", 10, []string{changed}},
		{"case-insensitive", "GARDENING", 10, []string{unrelate}},
		{"punctuation cannot break the query", `"lamps" AND (`, 10, []string{}},
		{"no match", "zeppelin", 10, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := db.Search(ctx, tt.query, tt.limit)
			if err != nil {
				t.Fatalf("Search(%q): %v", tt.query, err)
			}
			got := []string{}
			for _, h := range hits {
				got = append(got, h.URL)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}

	t.Run("hit fields", func(t *testing.T) {
		hits, err := db.Search(ctx, "oil", 10)
		if err != nil || len(hits) != 1 {
			t.Fatalf("Search(oil) = %v, %v", hits, err)
		}
		if h := hits[0]; h.Title != "Lamps" || h.Snippet != "lighthouse lamps burn [oil]" || h.Rank >= 0 {
			t.Errorf("hit = %+v", h)
		}
	})

	for _, q := range []string{"", "   "} {
		t.Run("empty query "+strconv.Quote(q), func(t *testing.T) {
			_, err := db.Search(ctx, q, 10)
			if crawl.KindOf(err) != crawl.KindInvalid {
				t.Errorf("Search(%q) = %v, want a KindInvalid error", q, err)
			}
		})
	}
}

func TestOpenGenerationNotFound(t *testing.T) {
	db := openDB(t)
	_, err := db.OpenGeneration(context.Background(), "http://example.com/never")
	if !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("OpenGeneration = %v, want ErrNotFound", err)
	}
}

func TestStatus(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	registerAgent(t, db)
	const (
		pending   = "http://example.com/pending"
		complete  = "http://example.com/complete"
		dup       = "http://example.com/dup"
		outside   = "http://other.org/"
		invalid   = "http://exa mple.com/"
		timedOut  = "http://example.com/slow"
		redirects = "http://example.com/old"
	)
	putNew(t, db, dueCandidate(pending, 0, 1))
	putNew(t, db, crawl.Candidate{URL: outside, Host: "other.org", State: crawl.StateFiltered, Hops: 1, Parent: complete,
		CrawlType: crawl.CrawlFirst, LastCrawlExitCode: ptr(crawl.ExitOutOfScope)})
	putNew(t, db, crawl.Candidate{URL: invalid, State: crawl.StateFiltered, Hops: 1, Parent: complete,
		CrawlType: crawl.CrawlFirst, LastCrawlExitCode: ptr(crawl.ExitInvalidURL)})

	// record crawls u as cr, as the fetch stage would.
	record := func(u string, cr crawl.Crawl) {
		t.Helper()
		c := queuedCandidate(t, db, u, cr.Log.CrawlUUID)
		next := crawledAs(c, cr)
		if _, err := db.RecordCrawl(ctx, cr, &next); err != nil {
			t.Fatal(err)
		}
	}
	record(complete, completeCrawl(complete, "s1"))
	p := textPile("the text")
	apply(t, db, summaryUpdate(complete, "s1", 100, crawl.GenerationReplace, 0, textGen(complete, 100, p, "Complete")))
	orig := openGen(t, db, complete).Generation.ID
	record(dup, completeCrawl(dup, "s2"))
	g := textGen(dup, 110, p, "Dup")
	g.DuplicateOf, g.Generation.MarkedDuplicate = orig, true
	s := summaryUpdate(dup, "s2", 110, crawl.GenerationReplace, 0, g)
	s.Crawl.ExitCode = crawl.ExitDuplicate
	apply(t, db, s)
	record(timedOut, failedCrawl(timedOut, "s3"))
	record(redirects, redirectCrawl(redirects, complete, "s4"))

	tests := []struct {
		url        string
		state      string
		status     string
		frontier   crawl.CandidateState
		crawls     int
		exactDup   bool
		duplicate  string // the generation's DuplicateOf
		title      string // the generation's title; "" : no generation
		hasMessage bool
	}{
		{url: pending, state: "pending", status: crawl.StatusNone, frontier: crawl.StateDue},
		{url: complete, state: "success", status: crawl.StatusComplete, frontier: crawl.StateCrawled, crawls: 1, title: "Complete"},
		{url: dup, state: "warning", status: crawl.StatusDuplicate, frontier: crawl.StateCrawled, crawls: 1, exactDup: true, duplicate: complete, title: "Dup"},
		{url: outside, state: "warning", status: crawl.StatusFiltered, frontier: crawl.StateFiltered},
		{url: invalid, state: "error", status: crawl.StatusError, frontier: crawl.StateFiltered},
		{url: timedOut, state: "error", status: crawl.StatusError, frontier: crawl.StateCrawled, crawls: 1, hasMessage: true},
		{url: redirects, state: "success", status: crawl.StatusRedir, frontier: crawl.StateCrawled, crawls: 1, hasMessage: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			st, err := db.Status(ctx, tt.url)
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if st.State != tt.state || st.Status != tt.status || st.Frontier != tt.frontier || st.Crawls != tt.crawls ||
				st.ExactDuplicate != tt.exactDup || (st.Message != nil) != tt.hasMessage {
				t.Errorf("Status = state %q status %q frontier %s crawls %d exact-duplicate %v message %v;\nwant state %q status %q frontier %s crawls %d exact-duplicate %v message %v",
					st.State, st.Status, st.Frontier, st.Crawls, st.ExactDuplicate, st.Message != nil,
					tt.state, tt.status, tt.frontier, tt.crawls, tt.exactDup, tt.hasMessage)
			}
			if tt.title == "" {
				if st.Generation != nil {
					t.Errorf("generation %+v, want none", st.Generation)
				}
				return
			}
			if g := st.Generation; g == nil || g.Title == nil || *g.Title != tt.title || g.DuplicateOf != tt.duplicate || g.Generations != 1 {
				t.Errorf("generation = %+v, want title %q duplicate of %q", st.Generation, tt.title, tt.duplicate)
			}
		})
	}
	if _, err := db.Status(ctx, "http://example.com/unknown"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("Status(unknown) = %v, want ErrNotFound", err)
	}

	t.Run("outcome counts", func(t *testing.T) {
		got, err := db.OutcomeCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[crawl.ExitCode]int{crawl.ExitComplete: 1, crawl.ExitDuplicate: 1, crawl.ExitTimeout: 1, crawl.ExitRedirect: 1}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("OutcomeCounts = %v, want %v", got, want)
		}
		if got, err := db.OutcomeCounts(ctx, "another-agent"); err != nil || len(got) != 0 {
			t.Errorf("OutcomeCounts(another agent) = %v, %v; want none", got, err)
		}
		if got, err := db.OutcomeCounts(ctx, agentUUID, "another-agent"); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("OutcomeCounts(agent) = %v, %v; want %v", got, err, want)
		}
	})
	t.Run("filtered counts", func(t *testing.T) {
		got, err := db.FilteredCounts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := map[crawl.ExitCode]int{crawl.ExitOutOfScope: 1, crawl.ExitInvalidURL: 1}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("FilteredCounts = %v, want %v", got, want)
		}
	})
}

// TestDuplicatesPromotedWhenOriginalCloses: with an original and two
// copies, when the original changes, the earliest copy becomes the
// original and the other is re-pointed to it; search finds the text again.
func TestDuplicatesPromotedWhenOriginalCloses(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const a, b, c = "http://example.com/a", "http://example.com/b", "http://example.com/c"
	same := textPile("beacon keepers handbook")
	apply(t, db, summaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, textGen(a, 100, same, "A")))
	ga := openGen(t, db, a).Generation.ID
	for i, u := range []string{b, c} {
		g := textGen(u, int64(110+i), same, u)
		g.DuplicateOf, g.Generation.MarkedDuplicate = ga, true
		apply(t, db, summaryUpdate(u, fmt.Sprintf("c%d", 2+i), int64(110+i), crawl.GenerationReplace, 0, g))
	}
	apply(t, db, summaryUpdate(a, "c9", 200, crawl.GenerationReplace, ga, textGen(a, 200, textPile("moved on"), "A2")))
	gb, gc := openGen(t, db, b).Generation, openGen(t, db, c).Generation
	if gb.MarkedDuplicate || !gc.MarkedDuplicate {
		t.Errorf("after the original closed: b duplicate=%v (want false), c duplicate=%v (want true)", gb.MarkedDuplicate, gc.MarkedDuplicate)
	}
	if n := count(t, db, `SELECT count(*) FROM duplicate_summary WHERE subject_entity_generation_id=? AND
		duplicate_of_entity_generation_id=? AND duplicate_status_start_unix_utc=200 AND duplicate_status_end_unix_utc IS NULL`, gc.ID, gb.ID); n != 1 {
		t.Errorf("c not re-pointed to b (%d rows)", n)
	}
	hits, err := db.Search(ctx, "beacon", 10)
	if err != nil || len(hits) != 1 || hits[0].URL != b {
		t.Errorf("search after promotion: %+v (%v), want b only", hits, err)
	}
}

func TestNoindexPageIsNoOriginal(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := textPile("members only notes")
	g := textGen("http://example.com/hidden", 100, p, "hidden")
	g.NoIndex = true
	apply(t, db, summaryUpdate("http://example.com/hidden", "c1", 100, crawl.GenerationReplace, 0, g))
	if got, err := db.FindOriginal(ctx, p.Digest, "http://example.com/public"); err != nil || got != 0 {
		t.Errorf("FindOriginal = %d (%v): a noindex page must not be an original, or its copies vanish from search", got, err)
	}
}
