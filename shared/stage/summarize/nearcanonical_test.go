package summarize

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// words is n words of text drawn from seed; with edit, one is changed.
func words(seed, n int, edit bool) string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%d", r.IntN(5000))
	}
	if edit {
		w[n/2] = "edited"
	}
	return strings.Join(w, " ")
}

// page is one page summarized in a test: its text, the canonical its
// HTML names, the canonical its Link header named, whether it is
// noindex; and what it must become: a duplicate of want ("" for an
// original), exactly or not.
type page struct {
	url, text, htmlCanonical, headerCanonical string
	noindex                                   bool
	want                                      string
	exact                                     bool
}

// TestNearAndCanonicalDuplicates: the summarizer marks a page as a
// duplicate of another URL's original when the texts are the same, when
// they are within crawl.NearDistance by SimHash, or when the page names
// the other as canonical (in its HTML or an HTTP Link header); a short
// text, an unrelated one, or a canonical that is not (yet) an original
// leaves the page an original.
func TestNearAndCanonicalDuplicates(t *testing.T) {
	const a, b, x = "http://example.com/a", "http://example.com/b", "http://example.com/x"
	long, edited, other := words(1, 1000, false), words(1, 1000, true), words(2, 1000, false)
	tests := []struct {
		name  string
		pages []page
	}{
		{"the same text", []page{{url: a, text: long}, {url: b, text: long, want: a, exact: true}}},
		{"one word changed in 1,000", []page{{url: a, text: long}, {url: b, text: edited, want: a}}},
		{"unrelated text", []page{{url: a, text: long}, {url: b, text: other}}},
		{"short texts one word apart are not near", []page{{url: a, text: words(1, 30, false)}, {url: b, text: words(1, 30, true)}}},
		{"rel=canonical names a crawled page", []page{{url: a, text: long}, {url: b, text: other, htmlCanonical: a, want: a}}},
		{"Link header canonical", []page{{url: a, text: long}, {url: b, text: other, headerCanonical: a, want: a}}},
		{"the HTML canonical overrides the header", []page{{url: a, text: long}, {url: x, text: words(3, 400, false)},
			{url: b, text: other, headerCanonical: a, htmlCanonical: x, want: x}}},
		{"canonical not crawled yet", []page{{url: b, text: other, htmlCanonical: a}, {url: a, text: long}}},
		{"canonical names a noindex page", []page{{url: a, text: long, noindex: true}, {url: b, text: other, htmlCanonical: a}}},
		{"canonical names a duplicate", []page{{url: x, text: long}, {url: a, text: long, want: x, exact: true},
			{url: b, text: other, htmlCanonical: a}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			db := openStore(t)
			s := New(db, nil, Config{}, slog.New(slog.DiscardHandler))
			for i, p := range tt.pages {
				size := int64(len(p.text))
				cr := crawl.Crawl{
					Log: crawl.CrawlLog{AgentUUID: "agent", URL: p.url, CrawlType: crawl.CrawlFirst, CrawlUUID: fmt.Sprint("c", i),
						TimeStarted: int64(100 + i), ExitCode: crawl.ExitComplete},
					File: &crawl.File{URL: p.url, MIMEType: "text/html", FileSize: &size, BodyKey: crawl.BodyKey([]byte(p.text))},
				}
				if p.headerCanonical != "" {
					cr.File.CanonicalURL = &p.headerCanonical
				}
				code, at := crawl.ExitComplete, int64(100+i)
				if err := db.PutCandidate(ctx, crawl.Candidate{URL: p.url, Host: "example.com", CrawlType: crawl.CrawlFirst,
					State: crawl.StateCrawled, LastCrawlTime: &at, LastCrawlExitCode: &code, LastContentfulCrawlTime: &at}); err != nil {
					t.Fatal(err)
				}
				if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
					t.Fatal(err)
				}
				doc := &crawl.Document{URL: p.url, Text: crawl.TextPile{Text: p.text}, NoIndex: p.noindex}
				if p.htmlCanonical != "" {
					doc.CanonicalURL = &p.htmlCanonical
				}
				if err := s.HandleDocument(ctx, crawl.SummarizeTask{URL: p.url, CrawlUUID: cr.Log.CrawlUUID}, doc); err != nil {
					t.Fatalf("summarize %s: %v", p.url, err)
				}
			}
			for _, p := range tt.pages {
				st, err := db.Status(ctx, p.url)
				if err != nil {
					t.Fatal(err)
				}
				g := st.Generation
				if g == nil {
					t.Fatalf("%s: no generation", p.url)
				}
				if got := map[bool]string{true: g.DuplicateOf}[g.MarkedDuplicate]; got != p.want {
					t.Errorf("%s: duplicate of %q, want %q", p.url, got, p.want)
				}
				if p.want != "" && (st.ExactDuplicate != p.exact || st.Status != crawl.StatusDuplicate) {
					t.Errorf("%s: status %q, exact-duplicate %v; want duplicate, exact %v", p.url, st.Status, st.ExactDuplicate, p.exact)
				}
			}
		})
	}
}

// TestNoIndexChangeOpensAGeneration: a page recrawled with the same text
// but noindex added, then taken away, opens a new generation each time,
// so that search leaves it out, then finds it again.
func TestNoIndexChangeOpensAGeneration(t *testing.T) {
	ctx := t.Context()
	db := openStore(t)
	s := New(db, nil, Config{}, slog.New(slog.DiscardHandler))
	const u, text = "http://example.com/page", "lighthouse lamps burn whale oil in the old days"
	for i, noindex := range []bool{false, true, false} {
		size, at, code := int64(len(text)), int64(100+10*i), crawl.ExitComplete
		cr := crawl.Crawl{
			Log: crawl.CrawlLog{AgentUUID: "agent", URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: fmt.Sprint("c", i),
				TimeStarted: at, ExitCode: code},
			File: &crawl.File{URL: u, MIMEType: "text/html", FileSize: &size, BodyKey: crawl.BodyKey([]byte(text))},
		}
		c := crawl.Candidate{URL: u, Host: "example.com", CrawlType: crawl.CrawlFirst, State: crawl.StateCrawled,
			LastCrawlTime: &at, LastCrawlExitCode: &code, LastContentfulCrawlTime: &at}
		if i > 0 {
			old, err := db.GetCandidate(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			c.Version = old.Version
		}
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
			t.Fatal(err)
		}
		doc := &crawl.Document{URL: u, Text: crawl.TextPile{Text: text}, NoIndex: noindex}
		if err := s.HandleDocument(ctx, crawl.SummarizeTask{URL: u, CrawlUUID: cr.Log.CrawlUUID}, doc); err != nil {
			t.Fatal(err)
		}
		st, err := db.Status(ctx, u)
		if err != nil || st.Generation == nil || st.Generation.Generations != i+1 {
			t.Fatalf("crawl %d (noindex %v): status %+v, %v; want generation %d", i, noindex, st.Generation, err, i+1)
		}
		hits, err := db.Search(ctx, "lighthouse", 10)
		if err != nil {
			t.Fatal(err)
		}
		if found := len(hits) == 1 && hits[0].URL == u; found == noindex {
			t.Errorf("crawl %d (noindex %v): search found the page: %v", i, noindex, found)
		}
	}
}

// TestGonePageLeavesSearch: a page that answers 404 or 410 after it had
// content closes its generation and opens one without content, which
// later 404s extend, so that search leaves it out until it is back; a
// 500 changes no generation, and a URL whose first answer is a 404
// opens none.
func TestGonePageLeavesSearch(t *testing.T) {
	const u, never, text = "http://example.com/page", "http://example.com/never", "lighthouse lamps burn whale oil in the old days"
	tests := []struct {
		url         string
		status      int  // 200: the text
		generations int  // the URL's, after the crawl; 0: none
		found       bool // whether search finds the page (u) then
	}{
		{u, 200, 1, true},
		{u, 500, 1, true},
		{u, 404, 2, false},
		{u, 410, 2, false},
		{u, 200, 3, true},
		{never, 404, 0, true},
	}
	ctx := t.Context()
	db := openStore(t)
	s := New(db, nil, Config{}, slog.New(slog.DiscardHandler))
	for i, tt := range tests {
		at := int64(100 + 10*i)
		status := tt.status
		cr := crawl.Crawl{
			Log: crawl.CrawlLog{AgentUUID: "agent", URL: tt.url, CrawlType: crawl.CrawlFirst, CrawlUUID: fmt.Sprint("c", i),
				TimeStarted: at, ExitCode: crawl.ExitComplete},
			Requests: []crawl.Request{{URL: tt.url, TimeSent: at, RobotsTxtApproved: true, HTTPStatusCode: &status}},
		}
		c := crawl.Candidate{URL: tt.url, Host: "example.com", CrawlType: crawl.CrawlFirst, State: crawl.StateCrawled, LastCrawlTime: &at}
		switch {
		case status == 200:
			size := int64(len(text))
			cr.File = &crawl.File{URL: tt.url, MIMEType: "text/html", FileSize: &size, BodyKey: crawl.BodyKey([]byte(text))}
			c.LastContentfulCrawlTime = &at
		case status >= 500:
			cr.Log.ExitCode = crawl.ExitHTTPServerError
		default:
			cr.Log.ExitCode = crawl.ExitHTTPClientError
		}
		cr.Requests[0].ExitCode = cr.Log.ExitCode
		c.LastCrawlExitCode = &cr.Log.ExitCode
		if old, err := db.GetCandidate(ctx, tt.url); err == nil {
			c.Version = old.Version
		}
		if err := db.PutCandidate(ctx, c); err != nil {
			t.Fatal(err)
		}
		if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
			t.Fatal(err)
		}
		task := crawl.SummarizeTask{URL: tt.url, CrawlUUID: cr.Log.CrawlUUID}
		var err error
		if status == 200 {
			err = s.HandleDocument(ctx, task, &crawl.Document{URL: tt.url, Text: crawl.TextPile{Text: text}})
		} else {
			err = s.Handle(ctx, task)
		}
		if err != nil {
			t.Fatalf("crawl %d (%d): %v", i, status, err)
		}
		st, err := db.Status(ctx, tt.url)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		if st.Generation != nil {
			got = st.Generation.Generations
		}
		if got != tt.generations {
			t.Errorf("crawl %d (%d): %d generations, want %d", i, status, got, tt.generations)
		}
		hits, err := db.Search(ctx, "lighthouse", 10)
		if err != nil {
			t.Fatal(err)
		}
		if found := len(hits) == 1 && hits[0].URL == u; found != tt.found {
			t.Errorf("crawl %d (%d): search found the page: %v, want %v", i, status, found, tt.found)
		}
	}
}
