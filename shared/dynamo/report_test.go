package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// sumPutCandidate stores a new candidate and returns it as stored.
func sumPutCandidate(t *testing.T, db *DB, c crawl.Candidate) crawl.Candidate {
	t.Helper()
	c.Version = 0
	if err := db.PutCandidate(context.Background(), c); err != nil {
		t.Fatalf("put candidate %s: %v", c.URL, err)
	}
	got, err := db.GetCandidate(context.Background(), c.URL)
	if err != nil {
		t.Fatalf("get candidate %s: %v", c.URL, err)
	}
	return got
}

// sumRecord records cr of a queued candidate as the fetch stage does.
func sumRecord(t *testing.T, db *DB, cr crawl.Crawl) {
	t.Helper()
	c := sumPutCandidate(t, db, crawl.Candidate{URL: cr.Log.URL, Host: "example.com", State: crawl.StateQueued, Hops: 1,
		Parent: "http://example.com/", CrawlUUID: cr.Log.CrawlUUID, QueuedAt: cr.Log.TimeStarted - 1, CrawlType: crawl.CrawlFirst,
		DiscoveredAt: cr.Log.TimeStarted - 10})
	code, at := cr.Log.ExitCode, cr.Log.TimeStarted
	c.State, c.LastCrawlTime, c.LastCrawlExitCode = crawl.StateCrawled, &at, &code
	if code.Contentful() {
		c.LastContentfulCrawlTime, c.LastContentfulETag = &at, cr.Requests[len(cr.Requests)-1].HTTPETag
	}
	if _, err := db.RecordCrawl(context.Background(), cr, &c); err != nil {
		t.Fatalf("record crawl %s: %v", cr.Log.CrawlUUID, err)
	}
}

func sumCrawlOf(u, crawlUUID string, at int64, code crawl.ExitCode, status int, message *string) crawl.Crawl {
	cr := crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: sumAgentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID, TimeStarted: at,
			TimeTakenMS: 10, ExitCode: code, Message: message},
		Requests: []crawl.Request{{URL: u, TimeSent: at, RobotsTxtApproved: true, ExitCode: code}},
	}
	if status != 0 {
		cr.Requests[0].HTTPStatusCode = &status
		cr.Requests[0].HTTPETag = sumPtr(`"` + crawlUUID + `"`)
	}
	if code.Contentful() {
		cr.File = &crawl.File{URL: u, FileSize: sumPtr(int64(100)), MIMEType: "text/html", BodyKey: crawl.BodyKey([]byte(u))}
	}
	return cr
}

func TestStatus(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const (
		pending   = "http://example.com/pending"
		complete  = "http://example.com/complete"
		dup       = "http://example.com/dup"
		outside   = "http://other.org/"
		timedOut  = "http://example.com/slow"
		redirects = "http://example.com/old"
	)
	sumPutCandidate(t, db, crawl.Candidate{URL: pending, Host: "example.com", State: crawl.StateDue, DueAt: 1, CrawlType: crawl.CrawlFirst})
	sumPutCandidate(t, db, crawl.Candidate{URL: outside, Host: "other.org", State: crawl.StateFiltered, Hops: 1, Parent: complete,
		CrawlType: crawl.CrawlFirst, LastCrawlExitCode: sumPtr(crawl.ExitOutOfScope)})

	sumRecord(t, db, sumCrawlOf(complete, "s1", 100, crawl.ExitComplete, 200, nil))
	p := sumPile("the text")
	ng := sumGen(complete, 100, p, "Complete")
	ng.File = &crawl.FileSummary{FileSize: sumPtr(int64(100)), MIMEType: sumPtr("text/html")}
	ng.Links = []crawl.LinkSummary{{LinkToURL: "http://example.com/a"}, {LinkToURL: "http://example.com/b"}}
	sumApply(t, db, sumSummary(complete, "s1", 100, crawl.GenerationReplace, 0, ng))
	orig := sumOpen(t, db, complete).Generation.ID

	sumRecord(t, db, sumCrawlOf(dup, "s2", 110, crawl.ExitComplete, 200, nil))
	dg := sumDupGen(dup, 110, p, "Dup", orig)
	s := sumSummary(dup, "s2", 110, crawl.GenerationReplace, 0, dg)
	s.Crawl.ExitCode = crawl.ExitDuplicate
	sumApply(t, db, s)

	sumRecord(t, db, sumCrawlOf(timedOut, "s3", 120, crawl.ExitTimeout, 0, sumPtr("timeout after 30s")))
	s = sumSummary(timedOut, "s3", 120, crawl.GenerationAttach, 0, nil)
	s.Crawl.ExitCode, s.HTTP = crawl.ExitTimeout, nil
	sumApply(t, db, s)

	rc := sumCrawlOf(redirects, "s4", 130, crawl.ExitRedirect, 301, sumPtr("301 to "+complete))
	rc.Redirect = &crawl.Redirect{URL: redirects, ToURL: complete, InformationSource: crawl.SourceHTTPHeader, IsPermanent: true}
	sumRecord(t, db, rc)
	rg := &crawl.NewGeneration{Generation: crawl.EntityGeneration{UUID: "5f0e1b7a-3c2d-4e8f-9a10-b2c3d4e5f601", URL: redirects, FirstSeen: 130, LastSeen: 130},
		ContentKey: "redirect:" + complete, Redirect: &crawl.RedirectSummary{ToURL: complete, InformationSource: crawl.SourceHTTPHeader}}
	s = sumSummary(redirects, "s4", 130, crawl.GenerationReplace, 0, rg)
	s.Crawl.ExitCode = crawl.ExitRedirect
	sumApply(t, db, s)

	gen := func(u string) (string, int64) {
		o := sumOpen(t, db, u)
		return o.Generation.UUID, o.Generation.FirstSeen
	}
	exit := func(c crawl.ExitCode) (*crawl.ExitCode, string) { return &c, c.String() }
	completeUUID, _ := gen(complete)
	dupUUID, _ := gen(dup)
	redirUUID, _ := gen(redirects)
	cc, cn := exit(crawl.ExitComplete)
	tc, tn := exit(crawl.ExitTimeout)
	rcd, rn := exit(crawl.ExitRedirect)
	oc, on := exit(crawl.ExitOutOfScope)
	tests := []crawl.URLStatus{
		{URL: pending, State: "pending", Status: crawl.StatusNone, Frontier: crawl.StateDue},
		{URL: complete, State: "success", Status: crawl.StatusComplete, Frontier: crawl.StateCrawled, ExitCode: cc, ExitName: cn,
			LastCrawl: sumPtr(int64(100)), LastContentful: sumPtr(int64(100)), ETag: sumPtr(`"s1"`), Hops: 1, Parent: "http://example.com/",
			Crawls: 1, Generation: &crawl.GenerationView{UUID: completeUUID, FirstSeen: 100, LastSeen: 100, Generations: 1,
				Title: sumPtr("Complete"), MIMEType: sumPtr("text/html"), FileSize: sumPtr(int64(100)), Links: 2}},
		{URL: dup, State: "warning", Status: crawl.StatusDuplicate, Frontier: crawl.StateCrawled, ExitCode: cc, ExitName: cn,
			LastCrawl: sumPtr(int64(110)), LastContentful: sumPtr(int64(110)), ETag: sumPtr(`"s2"`), Hops: 1, Parent: "http://example.com/",
			ExactDuplicate: true, Crawls: 1, Generation: &crawl.GenerationView{UUID: dupUUID, FirstSeen: 110, LastSeen: 110,
				MarkedDuplicate: true, DuplicateOf: complete, Generations: 1, Title: sumPtr("Dup")}},
		{URL: outside, State: "warning", Status: crawl.StatusFiltered, Frontier: crawl.StateFiltered, ExitCode: oc, ExitName: on,
			Hops: 1, Parent: complete},
		{URL: timedOut, State: "error", Status: crawl.StatusError, Frontier: crawl.StateCrawled, ExitCode: tc, ExitName: tn,
			LastCrawl: sumPtr(int64(120)), Hops: 1, Parent: "http://example.com/", Crawls: 1, Message: sumPtr("timeout after 30s")},
		{URL: redirects, State: "success", Status: crawl.StatusRedir, Frontier: crawl.StateCrawled, ExitCode: rcd, ExitName: rn,
			LastCrawl: sumPtr(int64(130)), Hops: 1, Parent: "http://example.com/", Crawls: 1, Message: sumPtr("301 to " + complete),
			Generation: &crawl.GenerationView{UUID: redirUUID, FirstSeen: 130, LastSeen: 130, Generations: 1, RedirectTo: sumPtr(complete)}},
	}
	for _, want := range tests {
		t.Run(want.URL, func(t *testing.T) {
			got, err := db.Status(ctx, want.URL)
			if err != nil {
				t.Fatalf("Status: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Status:\n got %s\nwant %s", sumJSON(got), sumJSON(want))
			}
		})
	}
	if _, err := db.Status(ctx, "http://example.com/unknown"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("Status(unknown) = %v, want ErrNotFound", err)
	}

	t.Run("the copy after its original changed", func(t *testing.T) {
		sumApply(t, db, sumSummary(complete, "s5", 200, crawl.GenerationReplace, orig, sumGen(complete, 200, sumPile("new text"), "Complete 2")))
		got, err := db.Status(ctx, dup)
		if err != nil {
			t.Fatal(err)
		}
		// No longer a duplicate (it took over as the original); the
		// generation still names what it duplicated, as the SQLite store.
		if got.ExactDuplicate || got.Status != crawl.StatusComplete || got.Generation.MarkedDuplicate || got.Generation.DuplicateOf != complete {
			t.Errorf("Status = %s", sumJSON(got))
		}
		if got, _ := db.Status(ctx, complete); got.Generation.Generations != 2 || *got.Generation.Title != "Complete 2" {
			t.Errorf("Status(complete) generation = %s, want the second of 2", sumJSON(got.Generation))
		}
	})
}

func sumJSON(v any) string { return fmt.Sprintf("%+v", v) }

func TestShownDuplicateOf(t *testing.T) {
	end := func(n int64) *int64 { return &n }
	tests := []struct {
		name string
		h    []dupStatus
		want string
	}{
		{"never a duplicate", nil, ""},
		{"open status", []dupStatus{{OfURL: "a", End: end(5)}, {OfURL: "b"}}, "b"},
		{"ended: the first to end", []dupStatus{{OfURL: "a", End: end(9)}, {OfURL: "b", End: end(5)}, {OfURL: "c", End: end(5)}}, "b"},
	}
	for _, tt := range tests {
		if got := (&genItem{History: tt.h}).shownDuplicateOf(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	db, _ := sumDB(t)
	const (
		lamps     = "http://example.com/lamps"
		tower     = "http://example.com/tower"
		copyURL   = "http://example.com/copy"
		changed   = "http://example.com/changed"
		noindex   = "http://example.com/noindex"
		unrelate  = "http://example.com/unrelated"
		cafe      = "http://example.com/cafe"
		described = "http://example.com/described"
	)
	lampsPile := sumPile("lighthouse lamps burn oil")
	sumApply(t, db, sumSummary(lamps, "c1", 100, crawl.GenerationReplace, 0, sumGen(lamps, 100, lampsPile, "Lamps")))
	orig := sumOpen(t, db, lamps).Generation.ID
	sumApply(t, db, sumSummary(tower, "c2", 100, crawl.GenerationReplace, 0, sumGen(tower, 100, sumPile("a lighthouse tower"), "Lighthouse")))
	sumApply(t, db, sumSummary(copyURL, "c3", 110, crawl.GenerationReplace, 0, sumDupGen(copyURL, 110, lampsPile, "Copy", orig)))
	sumApply(t, db, sumSummary(changed, "c4", 100, crawl.GenerationReplace, 0, sumGen(changed, 100, sumPile("lighthouse keeper"), "Old")))
	old := sumOpen(t, db, changed).Generation.ID
	sumApply(t, db, sumSummary(changed, "c5", 200, crawl.GenerationReplace, old, sumGen(changed, 200, sumPile("nothing of note"), "New")))
	g := sumGen(noindex, 100, sumPile("secret lighthouse"), "Hidden")
	g.NoIndex = true
	sumApply(t, db, sumSummary(noindex, "c6", 100, crawl.GenerationReplace, 0, g))
	sumApply(t, db, sumSummary(unrelate, "c7", 100, crawl.GenerationReplace, 0, sumGen(unrelate, 100, sumPile("gardening tips"), "Garden")))
	sumApply(t, db, sumSummary(cafe, "c8", 100, crawl.GenerationReplace, 0, sumGen(cafe, 100, sumPile("Crème brûlée at the café"), "Café")))
	g = sumGen(described, 100, &crawl.TextPile{Text: "plain words", BigHeadlines: "Harbour Guide"}, "Described")
	g.TextPile.Digest = g.TextPile.ComputeDigest()
	g.Description.Description = sumPtr("a zeppelin mooring mast")
	sumApply(t, db, sumSummary(described, "c9", 100, crawl.GenerationReplace, 0, g))
	// A failed crawl: a crawl summary item, which search must skip.
	s := sumSummary(unrelate, "c10", 300, crawl.GenerationAttach, sumOpen(t, db, unrelate).Generation.ID, nil)
	s.Crawl.ExitCode, s.HTTP = crawl.ExitTimeout, nil
	sumApply(t, db, s)

	tests := []struct {
		name  string
		query string
		limit int
		want  []string
	}{
		{"title ranks above text; duplicate, closed and noindex left out", "lighthouse", 10, []string{tower, lamps}},
		{"limit", "lighthouse", 1, []string{tower}},
		{"no limit", "lighthouse", -1, []string{tower, lamps}},
		{"every word must match", "lighthouse oil", 10, []string{lamps}},
		{"closed generation's words", "keeper", 10, []string{}},
		{"noindex page's words", "secret", 10, []string{}},
		{"open generation after a change", "note", 10, []string{changed}},
		{"case-insensitive", "GARDENING", 10, []string{unrelate}},
		{"accents ignored", "creme brulee cafe", 10, []string{cafe}},
		{"description", "zeppelin", 10, []string{described}},
		{"headlines", "harbour", 10, []string{described}},
		{"punctuation cannot break the query", `"lamps" AND (`, 10, []string{}},
		{"no match", "airship", 10, []string{}},
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
		if h := hits[0]; h.URL != lamps || h.Title != "Lamps" || h.Snippet != "lighthouse lamps burn [oil]" || h.Rank >= 0 {
			t.Errorf("hit = %+v", h)
		}
	})
	t.Run("rank orders hits", func(t *testing.T) {
		hits, err := db.Search(ctx, "lighthouse", 10)
		if err != nil || len(hits) != 2 || !(hits[0].Rank < hits[1].Rank) {
			t.Errorf("hits %+v (%v): want ranks increasing", hits, err)
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

func TestSnippet(t *testing.T) {
	words := make([]string, 40)
	for i := range words {
		words[i] = "w" + strconv.Itoa(i)
	}
	long := strings.Join(words, " ")
	tests := []struct {
		name  string
		text  string
		terms []string
		want  string
	}{
		{"whole text", "lighthouse lamps burn oil", []string{"oil"}, "lighthouse lamps burn [oil]"},
		{"punctuation kept between tokens", "Hello, World! Again.", []string{"world"}, "Hello, [World]! Again"},
		{"window around the hit", long, []string{"w20"}, "…" + strings.Join(words[13:20], " ") + " [w20] " + strings.Join(words[21:29], " ") + "…"},
		{"most distinct terms win", long, []string{"w2", "w30", "w33"}, "…" + strings.Join(words[24:30], " ") + " [w30] w31 w32 [w33] " + strings.Join(words[34:40], " ")},
		{"no hit: the start", long, []string{"zzz"}, strings.Join(words[:16], " ") + "…"},
		{"empty", "", []string{"x"}, ""},
	}
	for _, tt := range tests {
		terms := map[string]bool{}
		for _, w := range tt.terms {
			terms[w] = true
		}
		if got := snippet(tt.text, terms); got != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, got, tt.want)
		}
	}
}

func TestSearchTokens(t *testing.T) {
	var got []string
	searchTokens("Crème-Brûlée, CAFÉ 42x naïve_ok", func(_, _ int, tok string) { got = append(got, tok) })
	want := []string{"creme", "brulee", "cafe", "42x", "naive", "ok"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tokens %q, want %q", got, want)
	}
}
