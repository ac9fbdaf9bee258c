package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

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

// TestApplySummaryRows: what the contract cannot see of the generations
// a URL's crawls make: the closed generation's row, which generation
// each crawl_summary points at (none for a failed crawl of a URL without
// one), and the http_summary rows of the crawls that got a response.
func TestApplySummaryRows(t *testing.T) {
	db := openDB(t)
	const u = "http://example.com/"
	failed := func(s crawl.SummaryUpdate) crawl.SummaryUpdate {
		s.Crawl.ExitCode, s.HTTP = crawl.ExitTimeout, nil
		return s
	}
	apply(t, db, failed(contract.SummaryUpdate(u, "c0", 50, crawl.GenerationAttach, 0, nil)))
	apply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("alpha"), "A")))
	g1 := openGen(t, db, u).Generation.ID
	apply(t, db, contract.SummaryUpdate(u, "c2", 200, crawl.GenerationExtend, g1, nil))
	apply(t, db, contract.SummaryUpdate(u, "c3", 300, crawl.GenerationReplace, g1, contract.TextGen(u, 300, contract.TextPile("beta"), "B")))
	g2 := openGen(t, db, u).Generation.ID
	apply(t, db, failed(contract.SummaryUpdate(u, "c4", 400, crawl.GenerationAttach, g2, nil)))

	if old := generation(t, db, g1); old.ConfirmedEnd == nil || *old.ConfirmedEnd != 300 || old.LastSeen != 200 || old.FirstSeen != 100 {
		t.Errorf("closed generation: %+v, want first 100 last 200 confirmed_end 300", old)
	}
	for crawlUUID, want := range map[string]int64{"c0": 0, "c1": g1, "c2": g1, "c3": g2, "c4": g2} {
		if g := summaryGeneration(t, db, crawlUUID); g != want {
			t.Errorf("crawl_summary of %s points at generation %d, want %d", crawlUUID, g, want)
		}
	}
	if n := count(t, db, `SELECT count(*) FROM http_summary`); n != 3 {
		t.Errorf("http_summary rows = %d, want 3 (the failed crawls had no response)", n)
	}
	if n := count(t, db, `SELECT count(*) FROM crawl_summary WHERE exit_code=?`, crawl.ExitTimeout); n != 2 {
		t.Errorf("failed crawl summaries = %d, want 2", n)
	}
}

func TestApplySummaryAttachments(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	const u = "http://example.com/doc"
	p := contract.TextPile("lamps and lighthouses")
	ng := contract.TextGen(u, 100, p, "Lamps")
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
	apply(t, db, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, ng))
	gid := openGen(t, db, u).Generation.ID
	// The full-text row and the tokens are written in batches.
	if n, err := db.Unindexed(ctx); n != 1 || err != nil {
		t.Fatalf("Unindexed = %d, %v; want 1", n, err)
	}
	if err := db.IndexAll(ctx); err != nil {
		t.Fatal(err)
	}

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
	same, other := contract.TextPile("the same words"), contract.TextPile("other words")
	tokens := map[string]int{"the": 1, "same": 1, "words": 1}

	g := contract.TextGen(a, 100, same, "A")
	g.Tokens = tokens
	apply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, g))
	g1 := openGen(t, db, a).Generation.ID
	// Another URL with the same text: a duplicate sharing the pile.
	g = contract.TextGen(b, 110, same, "B")
	g.Tokens, g.DuplicateOf, g.Generation.MarkedDuplicate = tokens, g1, true
	apply(t, db, contract.SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, g))
	// a changes, then changes back: its third generation shares the first's pile.
	apply(t, db, contract.SummaryUpdate(a, "c3", 200, crawl.GenerationReplace, g1, contract.TextGen(a, 200, other, "A2")))
	g2 := openGen(t, db, a).Generation.ID
	g = contract.TextGen(a, 300, same, "A3")
	g.Tokens = tokens
	apply(t, db, contract.SummaryUpdate(a, "c4", 300, crawl.GenerationReplace, g2, g))
	g3 := openGen(t, db, a).Generation.ID
	gb := openGen(t, db, b).Generation.ID
	if err := db.IndexAll(context.Background()); err != nil {
		t.Fatal(err)
	}
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
	if r1, r3 := generation(t, db, g1), generation(t, db, g3); r1.TextPileID == nil || r3.TextPileID == nil || *r1.TextPileID != *r3.TextPileID {
		t.Errorf("text pile ids: first %v third %v, want one shared id", r1.TextPileID, r3.TextPileID)
	}
	// When a's first generation (the original) closed at 200, b's copy
	// took over as the original: its duplicate status ended then.
	if n := count(t, db, `SELECT count(*) FROM duplicate_summary WHERE subject_entity_generation_id=?
		AND duplicate_of_entity_generation_id=? AND duplicate_status_end_unix_utc=200`, gb, g1); n != 1 {
		t.Errorf("duplicate status of the copy not ended when the original closed (%d rows)", n)
	}
}

func TestApplySummaryEndsDuplicateStatus(t *testing.T) {
	db := openDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	same := contract.TextPile("copied")
	apply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, same, "A")))
	ga := openGen(t, db, a).Generation.ID
	g := contract.TextGen(b, 110, same, "B")
	g.DuplicateOf, g.Generation.MarkedDuplicate = ga, true
	apply(t, db, contract.SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, g))
	gb := openGen(t, db, b).Generation.ID
	apply(t, db, contract.SummaryUpdate(b, "c3", 250, crawl.GenerationReplace, gb, contract.TextGen(b, 250, contract.TextPile("own text"), "B2")))
	var end *int64
	if err := db.SQL().QueryRow(`SELECT duplicate_status_end_unix_utc FROM duplicate_summary WHERE subject_entity_generation_id=?`, gb).Scan(&end); err != nil {
		t.Fatal(err)
	}
	if end == nil || *end != 250 {
		t.Errorf("duplicate status end = %v, want 250", end)
	}
}

// TestNotModifiedDuplicate: the crawl_summary row of a 304 says
// duplicate when the generation it extends is marked duplicate, as the
// first crawl's did, and the 304 is not observed as a revisit again (the
// fetch observed it).
func TestNotModifiedDuplicate(t *testing.T) {
	db := openDB(t)
	const a, b = "http://example.com/a", "http://example.com/b"
	same := contract.TextPile("copied")
	apply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, same, "A")))
	g := contract.TextGen(b, 110, same, "B")
	g.DuplicateOf, g.Generation.MarkedDuplicate = openGen(t, db, a).Generation.ID, true
	apply(t, db, contract.SummaryUpdate(b, "c2", 110, crawl.GenerationReplace, 0, g))
	for _, u := range []string{a, b} {
		putNew(t, db, crawl.Candidate{URL: u, Host: "example.com", State: crawl.StateCrawled, CrawlType: crawl.CrawlRecrawl, DiscoveredAt: 1})
	}
	counter := func() int {
		return count(t, db, `SELECT sum(f.mrate_counter) FROM crawl_frontier f JOIN url u ON u.url_id=f.url_id WHERE u.url IN (?, ?)`, a, b)
	}
	before := counter()
	for _, tt := range []struct {
		url   string
		crawl string
		want  crawl.ExitCode
		at    int64
	}{{a, "n1", crawl.ExitUnchanged, 200}, {b, "n2", crawl.ExitDuplicate, 200},
		{b, "n3", crawl.ExitUnchanged, 105}} { // older than b's generation: attached as it is
		su := contract.SummaryUpdate(tt.url, tt.crawl, tt.at, crawl.GenerationExtendOpen, 0, nil)
		su.Crawl.ExitCode, su.HTTP = crawl.ExitUnchanged, &crawl.HTTPSummary{StatusCode: 304}
		apply(t, db, su)
		if n := count(t, db, `SELECT count(*) FROM crawl_summary WHERE crawl_uuid=? AND exit_code=?`, tt.crawl, tt.want); n != 1 {
			t.Errorf("%s: %d crawl_summary rows with exit code %v, want 1", tt.url, n, tt.want)
		}
	}
	if got := counter(); got != before {
		t.Errorf("the 304 was observed as a revisit: mrate_counter %d, was %d", got, before)
	}
}

// TestOutcomeCounts: what a run reports (SQLite only): crawls by
// outcome, with the duplicates the summarizer found counted as such,
// and candidates ruled out by exit code.
func TestOutcomeCounts(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	registerAgent(t, db)
	for _, cr := range []crawl.Crawl{
		contract.CompleteCrawl("http://example.com/complete", "s1"), contract.CompleteCrawl("http://example.com/dup", "s2"),
		contract.FailedCrawl("http://example.com/slow", "s3"), contract.RedirectCrawl("http://example.com/old", "http://example.com/complete", "s4"),
	} {
		if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
			t.Fatal(err)
		}
	}
	s := contract.SummaryUpdate("http://example.com/dup", "s2", 110, crawl.GenerationAttach, 0, nil)
	s.Crawl.ExitCode = crawl.ExitDuplicate
	apply(t, db, s)
	putNew(t, db, dueCandidate("http://example.com/pending", 0, 1))
	putNew(t, db, crawl.Candidate{URL: "http://other.org/", Host: "other.org", State: crawl.StateFiltered, CrawlType: crawl.CrawlFirst,
		LastCrawlExitCode: ptr(crawl.ExitOutOfScope)})
	putNew(t, db, crawl.Candidate{URL: "http://exa mple.com/", State: crawl.StateFiltered, CrawlType: crawl.CrawlFirst,
		LastCrawlExitCode: ptr(crawl.ExitInvalidURL)})

	want := map[crawl.ExitCode]int{crawl.ExitComplete: 1, crawl.ExitDuplicate: 1, crawl.ExitTimeout: 1, crawl.ExitRedirect: 1}
	for _, tt := range []struct {
		agents []string
		want   map[crawl.ExitCode]int
	}{
		{nil, want},
		{[]string{"another-agent"}, map[crawl.ExitCode]int{}},
		{[]string{contract.AgentUUID, "another-agent"}, want},
	} {
		if got, err := db.OutcomeCounts(ctx, tt.agents...); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("OutcomeCounts(%q) = %v, %v; want %v", tt.agents, got, err, tt.want)
		}
	}
	got, err := db.FilteredCounts(ctx)
	if want := map[crawl.ExitCode]int{crawl.ExitOutOfScope: 1, crawl.ExitInvalidURL: 1}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("FilteredCounts = %v, %v; want %v", got, err, want)
	}
}

// TestDuplicatesPromotedRows: the duplicate_summary rows of a hand-over
// (the contract checks what Status, FindOriginal and Search show of it):
// when the original closes, the earliest copy's status ends and the
// other copy's old status ends and a new one, of the heir, starts.
func TestDuplicatesPromotedRows(t *testing.T) {
	db := openDB(t)
	const a, b, c = "http://example.com/a", "http://example.com/b", "http://example.com/c"
	same := contract.TextPile("beacon keepers handbook")
	apply(t, db, contract.SummaryUpdate(a, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(a, 100, same, "A")))
	ga := openGen(t, db, a).Generation.ID
	for i, u := range []string{b, c} {
		g := contract.TextGen(u, int64(110+i), same, u)
		g.DuplicateOf, g.Generation.MarkedDuplicate = ga, true
		apply(t, db, contract.SummaryUpdate(u, fmt.Sprintf("c%d", 2+i), int64(110+i), crawl.GenerationReplace, 0, g))
	}
	apply(t, db, contract.SummaryUpdate(a, "c9", 200, crawl.GenerationReplace, ga, contract.TextGen(a, 200, contract.TextPile("moved on"), "A2")))
	gb, gc := openGen(t, db, b).Generation.ID, openGen(t, db, c).Generation.ID
	for _, tt := range []struct {
		name        string
		subject, of int64
		start       int64
		end         string
	}{
		{"heir's status ended", gb, ga, 110, "= 200"},
		{"copy's old status ended", gc, ga, 111, "= 200"},
		{"copy re-pointed to the heir", gc, gb, 200, "IS NULL"},
	} {
		if n := count(t, db, `SELECT count(*) FROM duplicate_summary WHERE subject_entity_generation_id=? AND
			duplicate_of_entity_generation_id=? AND duplicate_status_start_unix_utc=? AND duplicate_status_end_unix_utc `+tt.end,
			tt.subject, tt.of, tt.start); n != 1 {
			t.Errorf("%s: %d rows, want 1", tt.name, n)
		}
	}
}

// TestLinkSummaryRoundTrip: a page's links, stored a row per
// generation (generation_links), read back through the link_summary
// view as the seed's rows: every column of every row, each flag alone
// in its own column, nulls where nothing was given, text that JSON must
// escape, and the page's order (link_summary_id). A page of many links
// keeps every one.
func TestLinkSummaryRoundTrip(t *testing.T) {
	var many []crawl.LinkSummary
	for i := range 2500 {
		many = append(many, crawl.LinkSummary{LinkToURL: fmt.Sprintf("http://example.com/p%d", i%700), Text: ptr(fmt.Sprint(i))})
	}
	tests := []struct {
		name  string
		links []crawl.LinkSummary
		want  []crawl.LinkSummary // nil: links
	}{
		{"every column", everyLinkColumn(), nil},
		{"many links", many, nil},
		// JSON text is UTF-8: a bad byte is stored as U+FFFD.
		{"text not UTF-8", []crawl.LinkSummary{{LinkToURL: "http://example.com/x", Text: ptr("caf\xe9")}},
			[]crawl.LinkSummary{{LinkToURL: "http://example.com/x", Text: ptr("caf\ufffd")}}},
	}
	db := openDB(t)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := fmt.Sprintf("http://example.com/page%d", i)
			ng := contract.TextGen(u, int64(100+i), contract.TextPile(tt.name), "Page")
			ng.Links = tt.links
			apply(t, db, contract.SummaryUpdate(u, fmt.Sprint("c", i), int64(100+i), crawl.GenerationReplace, 0, ng))
			gid := openGen(t, db, u).Generation.ID
			got := readLinks(t, db.SQL(), gid)
			for j, l := range got {
				if l.GenerationID != gid || j > 0 && l.ID <= got[j-1].ID {
					t.Fatalf("row %d: link_summary_id %d, generation %d; want increasing ids of generation %d", j, l.ID, l.GenerationID, gid)
				}
			}
			want := tt.want
			if want == nil {
				want = tt.links
			}
			sameLinks(t, got, want)
		})
	}
}

// everyLinkColumn returns links that set every link_summary column, each
// flag alone and all at once, and leave the optional ones unset.
func everyLinkColumn() []crawl.LinkSummary {
	dt, nav := crawl.DestPage, crawl.DestNavigation
	one := func(flag func(*crawl.LinkSummary)) crawl.LinkSummary {
		l := crawl.LinkSummary{LinkToURL: "http://example.com/flag"}
		flag(&l)
		return l
	}
	return []crawl.LinkSummary{
		{LinkToURL: "http://example.com/a", LinkToFragment: ptr("top"), DestinationType: &dt, Locality: crawl.LocalitySameHost,
			HTMLTagName: ptr("a"), Text: ptr(`say "hi" <b> & \ tab\t é 日本`)},
		{LinkToURL: "http://example.org/"},
		{LinkToURL: "http://example.org/t", Text: ptr("")},
		{LinkToURL: "http://example.org/n", LinkToFragment: ptr("a\x00b"), Text: ptr("line\u2028sep\ttab\x01")},
		{LinkToURL: "http://example.com/a", DestinationType: &nav, Locality: crawl.LocalityExternal, HTMLTagName: ptr("link")},
		one(func(l *crawl.LinkSummary) { l.RelNofollow = true }),
		one(func(l *crawl.LinkSummary) { l.RelMe = true }),
		one(func(l *crawl.LinkSummary) { l.RelTag = true }),
		one(func(l *crawl.LinkSummary) { l.ContainsHeadline = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InHeader = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InFooter = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InAside = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InNav = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InForm = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InMain = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InArticle = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InSection = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InTable = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InFigure = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InAddress = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InCode = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InHeadline = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InList = true }),
		one(func(l *crawl.LinkSummary) { l.Location.InParagraph = true }),
		one(func(l *crawl.LinkSummary) { l.SetFlags(1<<19 - 1) }),
	}
}

// readLinks reads a generation's link_summary rows, every column, in
// link_summary_id order, the target URL's text for its id.
func readLinks(t *testing.T, db *sql.DB, gid int64) []crawl.LinkSummary {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT l.link_summary_id, l.entity_generation_id, u.url, l.link_to_fragment,
		l.rel_nofollow, l.rel_me, l.rel_tag, l.in_header, l.in_footer, l.in_aside, l.in_nav, l.in_form, l.in_main,
		l.in_article, l.in_section, l.in_table, l.in_figure, l.in_address, l.in_code, l.in_headline, l.in_list,
		l.in_paragraph, l.contains_headline, l.destination_type, l.link_locality, l.html_tag_name, l.text
		FROM link_summary l JOIN url u ON u.url_id=l.link_to_url WHERE l.entity_generation_id=? ORDER BY l.link_summary_id`, gid)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []crawl.LinkSummary
	for rows.Next() {
		var l crawl.LinkSummary
		p := &l.Location
		if err := rows.Scan(&l.ID, &l.GenerationID, &l.LinkToURL, &l.LinkToFragment, &l.RelNofollow, &l.RelMe, &l.RelTag,
			&p.InHeader, &p.InFooter, &p.InAside, &p.InNav, &p.InForm, &p.InMain, &p.InArticle, &p.InSection, &p.InTable,
			&p.InFigure, &p.InAddress, &p.InCode, &p.InHeadline, &p.InList, &p.InParagraph, &l.ContainsHeadline,
			&l.DestinationType, &l.Locality, &l.HTMLTagName, &l.Text); err != nil {
			t.Fatal(err)
		}
		got = append(got, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// sameLinks fails t unless got and want are the same rows, their ids
// aside.
func sameLinks(t *testing.T, got, want []crawl.LinkSummary) {
	t.Helper()
	for j := range max(len(got), len(want)) {
		if j >= len(got) || j >= len(want) {
			t.Fatalf("%d rows, want %d", len(got), len(want))
		}
		g := got[j]
		g.ID, g.GenerationID = want[j].ID, want[j].GenerationID
		if !reflect.DeepEqual(g, want[j]) {
			t.Fatalf("row %d:\n got %+v\nwant %+v", j, g, want[j])
		}
	}
}
