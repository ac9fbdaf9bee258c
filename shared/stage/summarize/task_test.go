package summarize

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestDocumentInTask: a summarize task's document is read the same
// whether it rides as JSON or gzipped (DocumentGz); a gzipped one that
// is not gzip, or decompresses past crawl.MaxDocumentBytes, is refused
// as malformed, not retried.
func TestDocumentInTask(t *testing.T) {
	title := "Lamps"
	doc := crawl.Document{URL: orderURL, Title: &title, Text: crawl.TextPile{Text: "lamps and lighthouses"}}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	tests := []struct {
		name    string
		task    crawl.SummarizeTask
		invalid bool
	}{
		{"as JSON", crawl.SummarizeTask{Document: js}, false},
		{"gzipped", crawl.SummarizeTask{DocumentGz: gz(js)}, false},
		{"not gzip", crawl.SummarizeTask{DocumentGz: []byte("plain bytes")}, true},
		{"past the limit", crawl.SummarizeTask{DocumentGz: gz(make([]byte, crawl.MaxDocumentBytes+1))}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openStore(t)
			cr := crawl.Crawl{
				Log:  crawl.CrawlLog{AgentUUID: "agent", URL: orderURL, CrawlType: crawl.CrawlFirst, CrawlUUID: "c1", TimeStarted: 100, ExitCode: crawl.ExitComplete},
				File: &crawl.File{URL: orderURL, MIMEType: "text/html", BodyKey: crawl.BodyKey([]byte("<p>lamps</p>"))},
			}
			if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
				t.Fatal(err)
			}
			s := New(db, nil, Config{}, slog.New(slog.DiscardHandler))
			task := tt.task
			task.URL, task.CrawlUUID = orderURL, "c1"
			err := s.Handle(ctx, task)
			if tt.invalid {
				if crawl.KindOf(err) != crawl.KindInvalid {
					t.Fatalf("Handle = %v, want a KindInvalid error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var n int
			db.SQL().QueryRow(`SELECT count(*) FROM document_description WHERE title = ?`, title).Scan(&n)
			if n != 1 {
				t.Errorf("%d generations titled %q, want 1", n, title)
			}
		})
	}
}

// crawlReads counts the crawl log reads of the store it wraps.
type crawlReads struct {
	Store
	n int
}

func (s *crawlReads) GetCrawl(ctx context.Context, crawlUUID string) (crawl.Crawl, error) {
	s.n++
	return s.Store.GetCrawl(ctx, crawlUUID)
}

// TestCrawlInTask: a task that carries its crawl (through the queue, as
// JSON) is summarized without reading the crawl log; one without reads
// it; one whose crawl is another crawl's, or another URL's, is refused
// as malformed.
func TestCrawlInTask(t *testing.T) {
	size, status, etag := int64(12), 200, `"v1"`
	recorded := crawl.Crawl{
		Log:      crawl.CrawlLog{AgentUUID: "agent", URL: orderURL, CrawlType: crawl.CrawlFirst, CrawlUUID: "c1", TimeStarted: 100, ExitCode: crawl.ExitComplete},
		Requests: []crawl.Request{{URL: orderURL, TimeSent: 100, RobotsTxtApproved: true, ExitCode: crawl.ExitComplete, HTTPStatusCode: &status, HTTPETag: &etag}},
		File:     &crawl.File{URL: orderURL, MIMEType: "text/html", FileSize: &size, BodyKey: crawl.BodyKey([]byte("<p>lamps</p>"))},
	}
	other := recorded
	other.Log.CrawlUUID = "c2"
	elsewhere := recorded
	elsewhere.Log.URL = orderURL + "elsewhere"
	tests := []struct {
		name      string
		carried   *crawl.Crawl
		logReads  int
		invalid   bool
		wantCrawl bool
	}{
		{"carried", &recorded, 0, false, true},
		{"not carried", nil, 1, false, true},
		{"another crawl's", &other, 0, true, false},
		{"another URL's", &elsewhere, 0, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openStore(t)
			if _, err := db.RecordCrawl(ctx, recorded, nil); err != nil {
				t.Fatal(err)
			}
			store := &crawlReads{Store: db}
			s := New(store, nil, Config{}, slog.New(slog.DiscardHandler))
			b, err := json.Marshal(crawl.SummarizeTask{URL: orderURL, CrawlUUID: "c1", Crawl: tt.carried})
			if err != nil {
				t.Fatal(err)
			}
			var task crawl.SummarizeTask
			if err := json.Unmarshal(b, &task); err != nil {
				t.Fatal(err)
			}
			err = s.Handle(ctx, task)
			if tt.invalid {
				if crawl.KindOf(err) != crawl.KindInvalid {
					t.Fatalf("Handle = %v, want a KindInvalid error", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if store.n != tt.logReads {
				t.Errorf("%d crawl log reads, want %d", store.n, tt.logReads)
			}
			var n int
			if err := db.SQL().QueryRow(`SELECT count(*) FROM crawl_summary cs JOIN http_summary hs ON hs.crawl_summary_id = cs.crawl_summary_id
				WHERE cs.crawl_uuid = 'c1' AND hs.etag = ?`, etag).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if (n == 1) != tt.wantCrawl {
				t.Errorf("%d crawl summaries with the crawl's ETag, want %v", n, tt.wantCrawl)
			}
		})
	}
}

// applyCounter counts the summaries being applied at once.
type applyCounter struct {
	Store
	mu        sync.Mutex
	now, most int
}

func (s *applyCounter) ApplySummary(ctx context.Context, u crawl.SummaryUpdate) (bool, error) {
	s.mu.Lock()
	s.now++
	s.most = max(s.most, s.now)
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	defer func() { s.mu.Lock(); s.now--; s.mu.Unlock() }()
	return s.Store.ApplySummary(ctx, u)
}

// Documents decoded at once stay within MaxDocumentBytes, and one
// larger than the bound is still summarized, alone.
func TestDocumentRoom(t *testing.T) {
	for _, tc := range []struct {
		name     string
		room     int64
		wantMost int // 0: more than one
	}{
		{"no bound", 0, 0},
		{"room for one", 1500, 1},
		{"each larger than the room", 100, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := openStore(t)
			store := &applyCounter{Store: db}
			s := New(store, nil, Config{MaxDocumentBytes: tc.room}, slog.New(slog.DiscardHandler))
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				u := fmt.Sprintf("%s%d", orderURL, i)
				id := fmt.Sprintf("c%d", i)
				cr := crawl.Crawl{
					Log:  crawl.CrawlLog{AgentUUID: "agent", URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: id, TimeStarted: 100, ExitCode: crawl.ExitComplete},
					File: &crawl.File{URL: u, MIMEType: "text/html", BodyKey: crawl.BodyKey([]byte(u))},
				}
				if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
					t.Fatal(err)
				}
				// Texts of their own words: pages that may be near copies
				// of each other take turns anyway (sameText).
				var words strings.Builder
				for j := range 150 {
					fmt.Fprintf(&words, "w%dx%d ", i, j)
				}
				doc, err := json.Marshal(crawl.Document{URL: u, Text: crawl.TextPile{Text: words.String()}})
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = s.Handle(ctx, crawl.SummarizeTask{URL: u, CrawlUUID: id, Document: doc, Crawl: &cr})
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			switch {
			case tc.wantMost == 0 && store.most < 2:
				t.Errorf("at most %d summaries at once, want them to overlap", store.most)
			case tc.wantMost > 0 && store.most != tc.wantMost:
				t.Errorf("at most %d summaries at once, want %d", store.most, tc.wantMost)
			}
		})
	}
}

// readsCounted is a store that counts the summarizer's reads of the
// generations and keeps the updates it applies.
type readsCounted struct {
	Store
	reads   int
	applied []crawl.SummaryUpdate
}

func (r *readsCounted) OpenGeneration(ctx context.Context, u string) (crawl.OpenGeneration, error) {
	r.reads++
	return r.Store.OpenGeneration(ctx, u)
}

func (r *readsCounted) ApplySummary(ctx context.Context, s crawl.SummaryUpdate) (bool, error) {
	r.applied = append(r.applied, s)
	return r.Store.ApplySummary(ctx, s)
}

// TestNotModifiedReadsNothing: a 304 is handed to the store as an
// extension of whatever is open (crawl.GenerationExtendOpen) without
// reading the open generation first; the store moves it on.
func TestNotModifiedReadsNothing(t *testing.T) {
	ctx := context.Background()
	db := openStore(t)
	store := &readsCounted{Store: db}
	s := New(store, nil, Config{}, slog.New(slog.DiscardHandler))
	first := crawl.Crawl{
		Log:  crawl.CrawlLog{AgentUUID: "agent", URL: orderURL, CrawlType: crawl.CrawlFirst, CrawlUUID: "c1", TimeStarted: 100, ExitCode: crawl.ExitComplete},
		File: &crawl.File{URL: orderURL, MIMEType: "text/html", BodyKey: crawl.BodyKey([]byte("<p>lamps</p>"))},
	}
	status := 304
	unchanged := crawl.Crawl{
		Log:      crawl.CrawlLog{AgentUUID: "agent", URL: orderURL, CrawlType: crawl.CrawlRecrawl, CrawlUUID: "c2", TimeStarted: 200, ExitCode: crawl.ExitUnchanged},
		Requests: []crawl.Request{{HTTPStatusCode: &status}},
	}
	for _, cr := range []crawl.Crawl{first, unchanged} {
		if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
			t.Fatal(err)
		}
	}
	title := "Lamps"
	doc := crawl.Document{URL: orderURL, Title: &title, Text: crawl.TextPile{Text: "lamps and lighthouses"}}
	if err := s.HandleDocument(ctx, crawl.SummarizeTask{URL: orderURL, CrawlUUID: "c1", Crawl: &first}, &doc); err != nil {
		t.Fatal(err)
	}
	store.reads = 0
	if err := s.Handle(ctx, crawl.SummarizeTask{URL: orderURL, CrawlUUID: "c2", Crawl: &unchanged}); err != nil {
		t.Fatal(err)
	}
	if store.reads != 0 {
		t.Errorf("a 304 read the open generation %d times, want none", store.reads)
	}
	if last := store.applied[len(store.applied)-1]; last.Action != crawl.GenerationExtendOpen || last.SeenAt != 200 || last.HTTP == nil || last.HTTP.StatusCode != 304 {
		t.Errorf("a 304 applied %+v, want an extension of what is open at 200 with its HTTP status", last)
	}
	if o, err := db.OpenGeneration(ctx, orderURL); err != nil || o.Generation.FirstSeen != 100 || o.Generation.LastSeen != 200 {
		t.Errorf("open generation %+v (%v), want first seen 100, last seen 200", o.Generation, err)
	}
}
