package sqlite_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/bench/corpus"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
)

// memBlobs is a blob store in memory, for the summarize stage.
type memBlobs map[string][]byte

func (m memBlobs) Get(_ context.Context, key string) ([]byte, error) {
	b, ok := m[key]
	if !ok {
		return nil, crawl.ErrNotFound
	}
	return b, nil
}

// BenchmarkStorePage writes one page per op the way the pipeline does,
// each op a new URL in a database that grows as in a crawl:
//
//   - candidate: the scheduler's PutCandidate of the released URL;
//   - fetch: the fetch stage's GetCrawl, GetCandidate and RecordCrawl
//     (crawl_log, request, file, file_body, file_text, the candidate);
//   - summarize: the summarize stage's Handle (GetCrawl, the document
//     decoded, OpenGeneration, FindOriginal, ApplySummary: generation,
//     text pile, every link) and, every indexEvery pages, the full-text
//     rows and tokens of those pages (IndexPending);
//   - summarize-no-tokens: the same with --tokens=false;
//   - page: all of it.
//
// Only the named part is timed. Pages come in a fixed order spread over
// the site, and repeat once it is used up, with their text changed so
// that each op stores a new text pile.
func BenchmarkStorePage(b *testing.B) {
	for _, site := range []struct {
		name  string
		pages func(testing.TB) []corpus.Page
	}{
		{"demosite", corpus.DemoSite},
		{"python-docs", corpus.PythonDocs},
	} {
		for _, part := range []string{"candidate", "fetch", "summarize", "summarize-no-tokens", "page"} {
			b.Run(site.name+"/"+part, func(b *testing.B) { benchStorePage(b, site.pages(b), part) })
		}
	}
}

// indexEvery is how many pages the benchmark summarizes between two
// sqlite.IndexPending: about what the docs crawl summarizes in a second.
const indexEvery = 100

func benchStorePage(b *testing.B, pages []corpus.Page, part string) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "crawl.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	agent := crawl.Agent{UUID: uuid.NewString(), Name: "bench", TimeStarted: time.Now().Unix()}
	if err := db.RegisterAgent(ctx, agent); err != nil {
		b.Fatal(err)
	}
	// Each part runs what comes before it in a page's life (untimed) but
	// not what comes after, which would only slow the benchmark down.
	summarizing := part == "summarize" || part == "summarize-no-tokens" || part == "page"
	fetching := part == "fetch" || summarizing
	docs := make([]crawl.Document, len(pages))
	for i, p := range pages {
		if summarizing {
			docs[i] = parse.Extract("http://127.0.0.1:8080/"+p.Path, p.Body, "")
		}
	}
	blobs := memBlobs{}
	sum := summarize.New(db, blobs, summarize.Config{Tokens: part != "summarize-no-tokens"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	timed := func(name string) bool {
		return part == "page" || part == name || name == "summarize" && summarizing
	}

	var pageBytes int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// Pages in a fixed spread order, so that the first ops of any run
		// sample the whole site and parts with different b.N compare.
		k := spread(i, len(pages))
		p, doc := pages[k], docs[k] // a copy: the text below is this op's
		u := fmt.Sprintf("http://127.0.0.1:8080/r%d/%s", i/len(pages), p.Path)
		doc.URL = u
		if i >= len(pages) {
			doc.Text.Text += fmt.Sprintf(" round %d", i/len(pages))
		}
		doc.Text.Digest = nil
		docKey := "doc"
		if summarizing {
			raw, err := json.Marshal(doc)
			if err != nil {
				b.Fatal(err)
			}
			blobs[docKey] = raw
		}
		now := time.Now().Unix()
		crawlUUID := uuid.NewString()
		c := crawl.Candidate{URL: u, Host: "127.0.0.1:8080", State: crawl.StateQueued, Hops: 1, CrawlType: crawl.CrawlFirst,
			CrawlUUID: crawlUUID, QueuedAt: now, DiscoveredAt: now}
		pageBytes += int64(len(p.Body))

		// The scheduler releases the URL.
		if timed("candidate") {
			b.StartTimer()
		}
		if err := db.PutCandidate(ctx, c); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()

		if !fetching {
			continue
		}
		// The fetch stage records the crawl.
		if timed("fetch") {
			b.StartTimer()
		}
		if _, err := db.GetCrawl(ctx, crawlUUID); !errors.Is(err, crawl.ErrNotFound) {
			b.Fatalf("get crawl of a new page: %v", err)
		}
		got, err := db.GetCandidate(ctx, u)
		if err != nil {
			b.Fatal(err)
		}
		cr := pageCrawl(agent.UUID, crawlUUID, u, p.Body, now)
		next := got
		next.State, next.LastCrawlTime, next.LastContentfulCrawlTime = crawl.StateCrawled, &now, &now
		code := crawl.ExitComplete
		next.LastCrawlExitCode = &code
		if _, err := db.RecordCrawl(ctx, cr, &next); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()

		if !summarizing {
			continue
		}
		// The summarize stage folds it into the summary tables.
		if timed("summarize") {
			b.StartTimer()
		}
		if err := sum.Handle(ctx, crawl.SummarizeTask{URL: u, CrawlUUID: crawlUUID, DocumentKey: docKey}); err != nil {
			b.Fatal(err)
		}
		// The search and token indexes, every indexEvery pages as the
		// pipeline does about every second.
		if (i+1)%indexEvery == 0 || i == b.N-1 {
			if err := db.IndexAll(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
	}
	b.ReportMetric(float64(pageBytes)/float64(b.N), "page-bytes/op")
}

// spread maps op i to a page index: each round of n ops visits every
// page once, striding through them.
func spread(i, n int) int {
	const stride = 211 // a prime: coprime with n unless n is a multiple
	if n%stride == 0 {
		return i % n
	}
	return (i * stride) % n
}

// pageCrawl is the crawl the fetch stage records for a 200 text/html page.
func pageCrawl(agentUUID, crawlUUID, u, body string, now int64) crawl.Crawl {
	status, dur, size := 200, int64(3), int64(len(body))
	text := body
	return crawl.Crawl{
		Log: crawl.CrawlLog{AgentUUID: agentUUID, URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: crawlUUID,
			TimeStarted: now, TimeTakenMS: 4, ExitCode: crawl.ExitComplete},
		Requests: []crawl.Request{{URL: u, TimeSent: now, DurationMS: &dur, RobotsTxtApproved: true,
			ExitCode: crawl.ExitComplete, HTTPStatusCode: &status}},
		File: &crawl.File{URL: u, FileSize: &size, MIMEType: "text/html", BodyKey: crawl.BodyKey([]byte(body)),
			Charset: "utf-8", ContentType: "text/html; charset=utf-8"},
		FileText: &text,
	}
}

// BenchmarkDueCandidates is one release of up to 16 candidates from a
// frontier of 64,000 URLs in state due with 16 released and not
// recorded: over 1 host; over 64 hosts, their URLs due in turn (the most
// hosts among which DueCandidates shares a release); over one host with
// all but nine, the other nine hosts with one each, due last; and the
// same with the big host's URLs all due later (a recrawl's), so that
// the release has the nine.
func BenchmarkDueCandidates(b *testing.B) {
	const urls, now = 64000, 1000
	for _, tt := range []struct {
		name string
		host func(i int) int
		due  func(i int) int64
		want int
	}{
		{"hosts=1", func(int) int { return 0 }, func(i int) int64 { return int64(i / 100) }, 16},
		{"hosts=64", func(i int) int { return i % 64 }, func(i int) int64 { return int64(i / 100) }, 16},
		{"one-big-and-9", func(i int) int { return max(0, i-(urls-10)) }, func(i int) int64 { return int64(i / 100) }, 16},
		{"one-big-due-later-and-9", func(i int) int { return max(0, i-(urls-10)) },
			func(i int) int64 { return now + int64(max(0, urls-9-i)) }, 9},
	} {
		b.Run(tt.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "crawl.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			var cs []crawl.Candidate
			for i := range urls {
				host := fmt.Sprintf("h%d.example", tt.host(i))
				c := crawl.Candidate{URL: fmt.Sprintf("http://%s/%d", host, i), Host: host, State: crawl.StateDue,
					DueAt: tt.due(i), CrawlType: crawl.CrawlFirst, DiscoveredAt: 1}
				if i < 16 {
					c.State, c.CrawlUUID, c.QueuedAt = crawl.StateQueued, uuid.NewString(), 1
				}
				cs = append(cs, c)
				if len(cs) == 1000 || i == urls-1 {
					if err := errors.Join(db.PutCandidates(ctx, cs)...); err != nil {
						b.Fatal(err)
					}
					cs = cs[:0]
				}
			}
			b.ResetTimer()
			for b.Loop() {
				got, err := db.DueCandidates(ctx, now, 16)
				if err != nil || len(got) != tt.want {
					b.Fatalf("DueCandidates = %d, %v; want %d", len(got), err, tt.want)
				}
			}
		})
	}
}
