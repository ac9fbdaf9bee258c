package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/report"
)

// status: what `crawler status` reports of a URL, whole, in each state.
func status(t *testing.T, open Opener) {
	s := open(t)
	registerAgent(t, s)
	const (
		pending   = "http://example.com/pending"
		complete  = "http://example.com/complete"
		dup       = "http://example.com/dup"
		outside   = "http://other.org/"
		invalid   = "http://exa mple.com/"
		timedOut  = "http://example.com/slow"
		redirects = "http://example.com/old"
		private   = "http://example.com/private"
	)
	putNew(t, s, crawl.Candidate{URL: pending, Host: "example.com", State: crawl.StateDue, DueAt: 1, CrawlType: crawl.CrawlFirst})
	putNew(t, s, crawl.Candidate{URL: outside, Host: "other.org", State: crawl.StateFiltered, Hops: 1, Parent: complete,
		CrawlType: crawl.CrawlFirst, LastCrawlExitCode: ptr(crawl.ExitOutOfScope)})
	putNew(t, s, crawl.Candidate{URL: invalid, State: crawl.StateFiltered, Hops: 1, Parent: complete,
		CrawlType: crawl.CrawlFirst, LastCrawlExitCode: ptr(crawl.ExitInvalidURL)})

	record(t, s, statusCrawl(complete, "s1", 100, crawl.ExitComplete, 200, nil))
	p := TextPile("the text")
	ng := TextGen(complete, 100, p, "Complete")
	ng.File = &crawl.FileSummary{FileSize: ptr(int64(100)), MIMEType: ptr("text/html")}
	ng.Links = []crawl.LinkSummary{{LinkToURL: "http://example.com/a"}, {LinkToURL: "http://example.com/b"}}
	apply(t, s, SummaryUpdate(complete, "s1", 100, crawl.GenerationReplace, 0, ng))
	orig := openGen(t, s, complete).Generation.ID

	record(t, s, statusCrawl(dup, "s2", 110, crawl.ExitComplete, 200, nil))
	su := SummaryUpdate(dup, "s2", 110, crawl.GenerationReplace, 0, DupGen(dup, 110, p, "Dup", orig))
	su.Crawl.ExitCode = crawl.ExitDuplicate
	apply(t, s, su)

	record(t, s, statusCrawl(timedOut, "s3", 120, crawl.ExitTimeout, 0, ptr("timeout after 30s")))
	su = SummaryUpdate(timedOut, "s3", 120, crawl.GenerationAttach, 0, nil)
	su.Crawl.ExitCode, su.HTTP = crawl.ExitTimeout, nil
	apply(t, s, su)

	rc := statusCrawl(redirects, "s4", 130, crawl.ExitRedirect, 301, ptr("301 to "+complete))
	rc.Redirect = &crawl.Redirect{URL: redirects, ToURL: complete, InformationSource: crawl.SourceHTTPHeader, IsPermanent: true}
	record(t, s, rc)
	rg := &crawl.NewGeneration{Generation: crawl.EntityGeneration{UUID: "5f0e1b7a-3c2d-4e8f-9a10-b2c3d4e5f601", URL: redirects, FirstSeen: 130, LastSeen: 130},
		ContentKey: "redirect:" + complete, Redirect: &crawl.RedirectSummary{ToURL: complete, InformationSource: crawl.SourceHTTPHeader}}
	su = SummaryUpdate(redirects, "s4", 130, crawl.GenerationReplace, 0, rg)
	su.Crawl.ExitCode = crawl.ExitRedirect
	apply(t, s, su)

	// robots.txt kept it from being requested: a crawl in the log, but
	// not one that counts.
	pc := statusCrawl(private, "s6", 140, crawl.ExitRobotsDisallowed, 0, ptr("disallowed by robots.txt: Disallow: /private"))
	pc.Requests = nil
	record(t, s, pc)

	uuidOf := func(u string) string { return openGen(t, s, u).Generation.UUID }
	exit := func(c crawl.ExitCode) (*crawl.ExitCode, string) { return &c, c.String() }
	cc, cn := exit(crawl.ExitComplete)
	tc, tn := exit(crawl.ExitTimeout)
	rcd, rn := exit(crawl.ExitRedirect)
	oc, on := exit(crawl.ExitOutOfScope)
	ic, in := exit(crawl.ExitInvalidURL)
	pcd, pn := exit(crawl.ExitRobotsDisallowed)
	for _, want := range []crawl.URLStatus{
		{URL: pending, State: "pending", Status: crawl.StatusNone, Frontier: crawl.StateDue, DueAt: ptr(int64(1))},
		{URL: complete, State: "success", Status: crawl.StatusComplete, Frontier: crawl.StateCrawled, ExitCode: cc, ExitName: cn,
			LastCrawl: ptr(int64(100)), LastContentful: ptr(int64(100)), ETag: ptr(`"s1"`), Crawls: 1, HTTPStatus: ptr(200),
			Generation: &crawl.GenerationView{UUID: uuidOf(complete), FirstSeen: 100, LastSeen: 100, Generations: 1,
				Title: ptr("Complete"), MIMEType: ptr("text/html"), FileSize: ptr(int64(100)), Links: 2}},
		{URL: dup, State: "warning", Status: crawl.StatusDuplicate, Frontier: crawl.StateCrawled, ExitCode: cc, ExitName: cn,
			LastCrawl: ptr(int64(110)), LastContentful: ptr(int64(110)), ETag: ptr(`"s2"`), ExactDuplicate: true, Crawls: 1,
			HTTPStatus: ptr(200),
			Generation: &crawl.GenerationView{UUID: uuidOf(dup), FirstSeen: 110, LastSeen: 110,
				MarkedDuplicate: true, DuplicateOf: complete, Generations: 1, Title: ptr("Dup")}},
		{URL: outside, State: "warning", Status: crawl.StatusFiltered, Frontier: crawl.StateFiltered, ExitCode: oc, ExitName: on,
			Hops: 1, Parent: complete},
		{URL: invalid, State: "error", Status: crawl.StatusError, Frontier: crawl.StateFiltered, ExitCode: ic, ExitName: in,
			Hops: 1, Parent: complete},
		{URL: timedOut, State: "error", Status: crawl.StatusError, Frontier: crawl.StateCrawled, ExitCode: tc, ExitName: tn,
			LastCrawl: ptr(int64(120)), Crawls: 1, Message: ptr("timeout after 30s")},
		{URL: redirects, State: "success", Status: crawl.StatusRedir, Frontier: crawl.StateCrawled, ExitCode: rcd, ExitName: rn,
			LastCrawl: ptr(int64(130)), Crawls: 1, Message: ptr("301 to " + complete), HTTPStatus: ptr(301),
			Generation: &crawl.GenerationView{UUID: uuidOf(redirects), FirstSeen: 130, LastSeen: 130, Generations: 1, RedirectTo: ptr(complete)}},
		{URL: private, State: "warning", Status: crawl.StatusDisallowed, Frontier: crawl.StateCrawled, ExitCode: pcd, ExitName: pn,
			LastCrawl: ptr(int64(140)), Crawls: 0, Message: ptr("disallowed by robots.txt: Disallow: /private")},
	} {
		want = want.WithTimes() // the same times in RFC 3339 (crawl's test checks the format)
		t.Run(want.URL, func(t *testing.T) {
			if got := mustStatus(t, s, want.URL); !reflect.DeepEqual(got, want) {
				t.Errorf("Status:\n got %s\nwant %s", show(got), show(want))
			}
		})
	}
	if _, err := s.Status(t.Context(), "http://example.com/unknown"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("Status(unknown) = %v, want ErrNotFound", err)
	}

	// A duplicate that is not its URL's first generation: its crawl's
	// summary says duplicate (on DynamoDB, its crawl summary item).
	const dupLater = "http://example.com/dup-later"
	record(t, s, statusCrawl(dupLater, "s7", 105, crawl.ExitComplete, 200, nil))
	apply(t, s, SummaryUpdate(dupLater, "s7", 105, crawl.GenerationReplace, 0, TextGen(dupLater, 105, TextPile("its own words"), "Own")))
	if fresh, err := s.RecordCrawl(t.Context(), statusCrawl(dupLater, "s8", 115, crawl.ExitComplete, 200, nil), nil); err != nil || !fresh {
		t.Fatalf("record crawl s8: %v, %v", fresh, err)
	}
	su = SummaryUpdate(dupLater, "s8", 115, crawl.GenerationReplace, openGen(t, s, dupLater).Generation.ID, DupGen(dupLater, 115, p, "Dup later", orig))
	su.Crawl.ExitCode = crawl.ExitDuplicate
	apply(t, s, su)
	// Crawled again, the same copy: it extends the generation, and its
	// summary says duplicate too.
	if fresh, err := s.RecordCrawl(t.Context(), statusCrawl(dupLater, "s9", 125, crawl.ExitComplete, 200, nil), nil); err != nil || !fresh {
		t.Fatalf("record crawl s9: %v, %v", fresh, err)
	}
	su = SummaryUpdate(dupLater, "s9", 125, crawl.GenerationExtend, openGen(t, s, dupLater).Generation.ID, nil)
	su.Crawl.ExitCode = crawl.ExitDuplicate
	apply(t, s, su)

	t.Run("crawl report", func(t *testing.T) {
		r, err := report.Collect(t.Context(), s, time.Unix(1000, 0))
		if err != nil {
			t.Fatal(err)
		}
		outcomes := map[string]int{}
		for _, o := range r.Outcomes {
			outcomes[o.Label] = o.N
		}
		// The duplicates' crawl log says complete; their summaries,
		// duplicate.
		wantOutcomes := map[string]int{cn: 2, crawl.ExitDuplicate.String(): 3, tn: 1, rn: 1, pn: 1}
		if r.Crawls != 8 || !reflect.DeepEqual(outcomes, wantOutcomes) || r.Bytes != 500 || r.Duplicates != 2 {
			t.Errorf("report: %d crawls %v, %d bytes, %d duplicates; want 8 %v, 500, 2", r.Crawls, outcomes, r.Bytes, r.Duplicates, wantOutcomes)
		}
		hops := 0
		for _, h := range r.Hops {
			hops += h.N
		}
		if hops != r.URLs || r.Hops[1].N < 2 || r.URLs < 3 {
			t.Errorf("report: %d URLs, hops %v; want the URLs in the hops bars, two of them one hop away", r.URLs, r.Hops)
		}
		if len(r.Hosts) != 1 || r.Hosts[0] != (crawl.ReportCount{Label: "example.com", N: 8}) || len(r.Slowest) != 7 || r.Sizes[0].N != 5 {
			t.Errorf("report: hosts %v, %d slowest (want the 7 requested), sizes %v", r.Hosts, len(r.Slowest), r.Sizes)
		}
		over := 0
		for _, o := range r.Over {
			over += o.N
		}
		if len(r.Over) != 41 || r.Step != time.Second || over != 8 || r.Over[0].N != 1 || !r.First.Equal(time.Unix(100, 0)) {
			t.Errorf("report: over time %v by %v from %v; want 41 bars of a second from 100 to 140, 8 crawls in all", r.Over, r.Step, r.First)
		}
	})

	t.Run("the copy after its original changed", func(t *testing.T) {
		apply(t, s, SummaryUpdate(complete, "s5", 200, crawl.GenerationReplace, orig, TextGen(complete, 200, TextPile("new text"), "Complete 2")))
		got := mustStatus(t, s, dup)
		// No longer a duplicate (it took over as the original); the
		// generation still names what it duplicated.
		if got.ExactDuplicate || got.Status != crawl.StatusComplete || got.Generation.MarkedDuplicate || got.Generation.DuplicateOf != complete {
			t.Errorf("Status = %s", show(got))
		}
		if got := mustStatus(t, s, complete); got.Generation.Generations != 2 || *got.Generation.Title != "Complete 2" {
			t.Errorf("Status(complete) generation = %s, want the second of 2", show(got.Generation))
		}
	})
}

// statusCrawl is a crawl of u at at, of one request.
func statusCrawl(u, crawlUUID string, at int64, code crawl.ExitCode, status int, message *string) crawl.Crawl {
	cr := crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: AgentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID, TimeStarted: at,
			TimeTakenMS: 10, ExitCode: code, Message: message},
		Requests: []crawl.Request{{URL: u, TimeSent: at, RobotsTxtApproved: true, ExitCode: code}},
	}
	if status != 0 {
		cr.Requests[0].HTTPStatusCode = &status
		cr.Requests[0].HTTPETag = ptr(`"` + crawlUUID + `"`)
	}
	if code.Contentful() {
		cr.File = &crawl.File{URL: u, FileSize: ptr(int64(100)), MIMEType: "text/html", BodyKey: crawl.BodyKey([]byte(u))}
	}
	return cr
}

// show formats a status for a failure message.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(b)
}

// search: `crawler search` finds the open, non-duplicate, indexable
// generations, best first.
func search(t *testing.T, open Opener) {
	s := open(t)
	const (
		lamps     = "http://example.com/lamps"
		tower     = "http://example.com/tower"
		copyURL   = "http://example.com/copy"
		changed   = "http://example.com/changed"
		noindex   = "http://example.com/noindex"
		unrelate  = "http://example.com/unrelated"
		cafe      = "http://example.com/cafe"
		described = "http://example.com/described"
		threads   = "http://example.com/threads"
		// The same words, near together or far apart; URLs that sort
		// the far page first on a tie.
		copyNear = "http://example.com/copy-b-near"
		copyFar  = "http://example.com/copy-a-far"
		// Texts alike but for a word, one titled with the query word's
		// plural; URLs that sort the other first on a tie.
		widgetsTitled = "http://example.com/widget-b-titled"
		widgetPlain   = "http://example.com/widget-a-plain"
		// A source listing and a changelog, each with the words more
		// often or closer than the prose page that answers; URLs that
		// sort them first on a tie.
		listing   = "http://example.com/frob-a-listing"
		frobProse = "http://example.com/frob-b-prose"
		changes   = "http://example.com/lantern-a-changes"
		lantern   = "http://example.com/lantern-b-care"
		// A page that then answered 404: a generation without content.
		gonePage = "http://example.com/gone"
	)
	lampsPile := TextPile("lighthouse lamps burn oil")
	apply(t, s, SummaryUpdate(lamps, "c1", 100, crawl.GenerationReplace, 0, TextGen(lamps, 100, lampsPile, "Lamps")))
	orig := openGen(t, s, lamps).Generation.ID
	apply(t, s, SummaryUpdate(tower, "c2", 100, crawl.GenerationReplace, 0, TextGen(tower, 100, TextPile("a lighthouse tower"), "Lighthouse")))
	apply(t, s, SummaryUpdate(copyURL, "c3", 110, crawl.GenerationReplace, 0, DupGen(copyURL, 110, lampsPile, "Copy", orig)))
	apply(t, s, SummaryUpdate(changed, "c4", 100, crawl.GenerationReplace, 0, TextGen(changed, 100, TextPile("lighthouse keeper"), "Old")))
	old := openGen(t, s, changed).Generation.ID
	apply(t, s, SummaryUpdate(changed, "c5", 200, crawl.GenerationReplace, old, TextGen(changed, 200, TextPile("nothing of note"), "New")))
	g := TextGen(noindex, 100, TextPile("secret lighthouse"), "Hidden")
	g.NoIndex = true
	apply(t, s, SummaryUpdate(noindex, "c6", 100, crawl.GenerationReplace, 0, g))
	apply(t, s, SummaryUpdate(unrelate, "c7", 100, crawl.GenerationReplace, 0, TextGen(unrelate, 100, TextPile("gardening tips"), "Garden")))
	apply(t, s, SummaryUpdate(cafe, "c8", 100, crawl.GenerationReplace, 0, TextGen(cafe, 100, TextPile("Crème brûlée at the café"), "Café")))
	headed := &crawl.TextPile{Text: "plain words", BigHeadlines: "Harbour Guide"}
	headed.Digest = headed.ComputeDigest()
	g = TextGen(described, 100, headed, "Described")
	g.Description.Description = ptr("a zeppelin mooring mast")
	apply(t, s, SummaryUpdate(described, "c9", 100, crawl.GenerationReplace, 0, g))
	apply(t, s, SummaryUpdate(threads, "c11", 100, crawl.GenerationReplace, 0,
		TextGen(threads, 100, TextPile("run work side by side"), "Thread-based parallelism")))
	apply(t, s, SummaryUpdate(copyNear, "c12", 100, crawl.GenerationReplace, 0,
		TextGen(copyNear, 100, TextPile("copy a file to a new place quickly"), "Moving")))
	apply(t, s, SummaryUpdate(copyFar, "c13", 100, crawl.GenerationReplace, 0,
		TextGen(copyFar, 100, TextPile("copy to a new place quickly a file"), "Moving")))
	apply(t, s, SummaryUpdate(widgetsTitled, "c14", 100, crawl.GenerationReplace, 0,
		TextGen(widgetsTitled, 100, TextPile("fit a widget onto a frame"), "Widgets")))
	apply(t, s, SummaryUpdate(widgetPlain, "c15", 100, crawl.GenerationReplace, 0,
		TextGen(widgetPlain, 100, TextPile("fit a widget onto a panel"), "Fittings")))
	code := &crawl.TextPile{Text: "frobnicate gizmo", CodeText: strings.Repeat("def frobnicate(gizmo): return gizmo.frobnicate() ", 8)}
	code.Digest = code.ComputeDigest()
	apply(t, s, SummaryUpdate(listing, "c16", 100, crawl.GenerationReplace, 0, TextGen(listing, 100, code, "frob.py")))
	apply(t, s, SummaryUpdate(frobProse, "c17", 100, crawl.GenerationReplace, 0,
		TextGen(frobProse, 100, TextPile("to frobnicate a gizmo, turn it over twice"), "Guide")))
	apply(t, s, SummaryUpdate(changes, "c18", 100, crawl.GenerationReplace, 0,
		TextGen(changes, 100, TextPile("added: polish a lantern with a cloth"), "Changelog")))
	apply(t, s, SummaryUpdate(lantern, "c19", 100, crawl.GenerationReplace, 0,
		TextGen(lantern, 100, TextPile("polish a lantern with a soft dry cloth"), "Care")))
	apply(t, s, SummaryUpdate(gonePage, "c20", 100, crawl.GenerationReplace, 0,
		TextGen(gonePage, 100, TextPile("a vanished beacon"), "Beacon")))
	apply(t, s, SummaryUpdate(gonePage, "c21", 200, crawl.GenerationReplace, openGen(t, s, gonePage).Generation.ID,
		&crawl.NewGeneration{Generation: crawl.EntityGeneration{UUID: crawl.GenerationUUID("c21"), URL: gonePage, FirstSeen: 200, LastSeen: 200},
			ContentKey: "gone"}))
	// A failed crawl: a crawl summary, which search must skip.
	su := SummaryUpdate(unrelate, "c10", 300, crawl.GenerationAttach, openGen(t, s, unrelate).Generation.ID, nil)
	su.Crawl.ExitCode, su.HTTP = crawl.ExitTimeout, nil
	apply(t, s, su)

	for _, tt := range []struct {
		name  string
		query string
		limit int
		want  []string
	}{
		{"title ranks above text; duplicate, closed and noindex left out", "lighthouse", 10, []string{tower, lamps}},
		{"limit", "lighthouse", 1, []string{tower}},
		{"no limit", "lighthouse", -1, []string{tower, lamps}},
		{"a page with more of the words first", "lighthouse oil", 10, []string{lamps, tower}},
		{"common words left out", "the lighthouse", 10, []string{tower, lamps}},
		{"common words alone still searched", "at the", 10, []string{cafe}},
		{"closed generation's words", "keeper", 10, []string{}},
		{"noindex page's words", "secret", 10, []string{}},
		{"open generation after a change", "note", 10, []string{changed}},
		{"case-insensitive", "GARDENING", 10, []string{unrelate}},
		{"accents ignored", "creme brulee cafe", 10, []string{cafe}},
		{"description", "zeppelin", 10, []string{described}},
		{"headlines", "harbour", 10, []string{described}},
		{"punctuation cannot break the query", `"lamps" AND (`, 10, []string{lamps}},
		{"a NUL byte separates words", "lighthouse\x00oil", 10, []string{lamps, tower}},
		{"no match", "airship", 10, []string{}},
		{"words joined by punctuation are each a word", "lighthouse/airship", 10, []string{tower, lamps}},
		{"no word at all", "*^--", 10, []string{}},
		{"a plural finds its singular", "threads", 10, []string{threads}},
		{"a singular does not find plurals", "lamp", 10, []string{}},
		{"query words close together rank first", "copy file", 10, []string{copyNear, copyFar}},
		{"a word's plural in a title counts for the title", "widget", 10, []string{widgetsTitled, widgetPlain}},
		{"a source listing ranks below prose", "frobnicate gizmo", 10, []string{frobProse, listing}},
		{"a changelog ranks below a page of its words", "polish lantern", 10, []string{lantern, changes}},
		{"a changelog is not demoted when the query asks for changes", "lantern polish changes", 10, []string{changes, lantern}},
		{"a word asking for changes is found between punctuation", "lantern polish changes/fixes", 10, []string{changes, lantern}},
		{"a generation without content ends the page's search", "beacon", 10, []string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hits, err := s.Search(t.Context(), tt.query, tt.limit)
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
		hits, err := s.Search(t.Context(), "oil", 10)
		if err != nil || len(hits) != 1 {
			t.Fatalf("Search(oil) = %v, %v", hits, err)
		}
		if h := hits[0]; h.URL != lamps || h.Title != "Lamps" || h.Snippet != "lighthouse lamps burn [oil]" || h.Rank <= 0 {
			t.Errorf("hit = %+v", h)
		}
	})
	t.Run("rank orders hits", func(t *testing.T) {
		hits, err := s.Search(t.Context(), "lighthouse", 10)
		if err != nil || len(hits) != 2 || !(hits[0].Rank > hits[1].Rank) {
			t.Errorf("hits %+v (%v): want scores decreasing", hits, err)
		}
	})
	for _, q := range []string{"", "   "} {
		t.Run("empty query "+strconv.Quote(q), func(t *testing.T) {
			if _, err := s.Search(t.Context(), q, 10); crawl.KindOf(err) != crawl.KindInvalid {
				t.Errorf("Search(%q) = %v, want a KindInvalid error", q, err)
			}
		})
	}
}
