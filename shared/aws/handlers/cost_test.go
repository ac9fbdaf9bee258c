package handlers_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/bench/cost/costmodel"
	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/itemsize"
	"github.com/serverless-crawler/crawler/shared/aws/s3blob"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
)

// BenchmarkCostPerPage measures what a page asks of AWS. It crawls the
// test site through the four functions on the emulators, as
// TestCrawlTestSiteOnAWS does (three fetcher environments), then, once
// every page is due again, recrawls it with nothing changed: the site
// answers If-None-Match with 304. Every function has its own metered
// clients (awsmeter) and writes its logs, EMF and usage records as on
// Lambda; each phase's lines are priced as `go run ./bench/cost` prices
// an end-to-end run's logs, and reported per page.
//
//	DYNAMODB_LOCAL_PORT=18200 MINISTACK_PORT=14966 infra/with-emulators.sh \
//	  go test -run X -bench CostPerPage -benchtime 1x ./shared/aws/handlers
//
// CRAWLER_COST_DELAY is the politeness delay (default 1s, the
// template's), CRAWLER_COST_RECRAWL the recrawl period (default 150s:
// longer than the fresh crawl, which must end before any page is due);
// CRAWLER_COST_PAGE_KB adds that many KiB of prose to every HTML page
// (the test site's pages are tiny: 0.4 KiB; write units grow with the
// text); CRAWLER_COST_LINKS adds that many navigation links to every
// HTML page (to /nav/0.html, /nav/1.html, ...: small pages of their own,
// which carry the same links), the fan-out of real sites, where most
// links are known; CRAWLER_COST_SITE=docs crawls the documentation tree
// of `make bench` instead of the test site (BENCH_DOC_ROOT, as
// bench/inputs.sh prints it; about 320 links a page); CRAWLER_COST_OUT,
// if set, is a directory to write each phase's log lines to
// (fresh.jsonl, recrawl.jsonl).
func BenchmarkCostPerPage(b *testing.B) {
	delay := envDuration(b, "CRAWLER_COST_DELAY", time.Second)
	period := envDuration(b, "CRAWLER_COST_RECRAWL", 150*time.Second)
	pad := 0
	if v := os.Getenv("CRAWLER_COST_PAGE_KB"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			b.Fatalf("CRAWLER_COST_PAGE_KB=%q is not a number of KiB", v)
		}
		pad = n << 10
	}
	links := 0
	if v := os.Getenv("CRAWLER_COST_LINKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			b.Fatalf("CRAWLER_COST_LINKS=%q is not a number of links", v)
		}
		links = n
	}
	var site http.Handler
	switch v := os.Getenv("CRAWLER_COST_SITE"); v {
	case "", "testsite":
		ts := testsite.New()
		defer ts.Close()
		ts.SetHang(3 * time.Second)
		site = ts.Config.Handler
	case "docs":
		root := os.Getenv("BENCH_DOC_ROOT")
		if root == "" {
			b.Fatal("CRAWLER_COST_SITE=docs needs BENCH_DOC_ROOT (BENCH_DOC_ROOT=$(bench/inputs.sh | sed -n 's/^DOC_ROOT=//p'))")
		}
		site = http.FileServer(http.Dir(root))
	default:
		b.Fatalf("CRAWLER_COST_SITE=%q: testsite or docs", v)
	}
	for range b.N {
		runCost(b, site, delay, period, pad, links)
	}
}

// settleWithin is how long a crawl of the benchmark's site may take:
// five minutes, and a politeness delay for each of up to 1,000 pages of
// one host (the documentation tree has 543), so that a polite crawl is
// measured whole rather than cut off and left to the next phase.
func settleWithin(delay time.Duration) time.Duration {
	return 5*time.Minute + 1000*delay
}

func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, v, err)
	}
	return d
}

func runCost(b *testing.B, site http.Handler, delay, period time.Duration, pad, links int) {
	counted := &counting{h: site, counts: map[string]int{}}
	cond := &conditional{h: navigation{h: counted, links: links}, pad: pad, links: links}
	srv := httptest.NewServer(cond)
	defer srv.Close()
	h := newAWSHome(b, func(s *stack.Settings) {
		s.Delay, s.RecrawlPeriod, s.MemoryMB = delay, period, 256 // template.yaml: Globals MemorySize
	})
	// The pump stands for Lambda's event source mappings: meter it on
	// its own, to check the model of their requests.
	pump := awsmeter.New()
	pc := emulatorClients(b, pump)
	for n, q := range h.queues {
		h.queues[n] = sqsq.New(pc.SQS, q.URL())
	}
	logs := &lineSink{}
	fs, sched := h.functions(3, h.metered(logs))
	ctx := context.Background()

	b.ResetTimer()
	start := time.Now()
	seed, _ := json.Marshal(crawl.EnqueueEvent{URL: srv.URL + "/", Version: 1})
	h.run(fs, settleWithin(delay), seed)
	freshEnd := time.Now()
	fresh, freshPump := logs.take(), pump.Take()
	for p, n := range counted.snapshot() {
		if n != 1 {
			b.Errorf("%s requested %d times in the fresh crawl: the recrawl period %v is shorter than the crawl (%v)", p, n, period, freshEnd.Sub(start))
		}
	}
	b.Logf("fresh crawl: %v", freshEnd.Sub(start).Round(time.Second))
	searchCost(b, h)
	if dir := os.Getenv("CRAWLER_COST_OUT"); dir != "" {
		// What sets each write's units: the items' sizes after the fresh crawl.
		sizes := itemSizes(b, h)
		if err := os.WriteFile(filepath.Join(dir, "sizes.md"), []byte(sizes), 0o644); err != nil {
			b.Fatal(err)
		}
	}

	// Every page is due once the period has passed since the last crawl.
	b.StopTimer()
	time.Sleep(time.Until(freshEnd.Add(period + 1500*time.Millisecond)))
	b.StartTimer()
	recrawlStart := time.Now()
	before := cond.notModified()
	if _, err := sched(ctx, json.RawMessage(`{"source":"crawler.schedule","action":"release"}`)); err != nil {
		b.Fatal(err)
	}
	h.run(fs, settleWithin(delay))
	recrawl, recrawlPump := logs.take(), pump.Take()
	b.Logf("recrawl: %v, %d pages answered 304", time.Since(recrawlStart).Round(time.Second), cond.notModified()-before)
	b.StopTimer()

	// Short lines first: go test cuts a benchmark's log short (-v
	// shows it all; CRAWLER_COST_OUT keeps the tables too).
	var tables []string
	for _, ph := range []struct {
		name  string
		lines []byte
		pump  awsmeter.Usage
	}{{"fresh", fresh, freshPump}, {"recrawl", recrawl, recrawlPump}} {
		t, err := costmodel.Read(bytes.NewReader(ph.lines), nil)
		if err != nil {
			b.Fatal(err)
		}
		e, err := costmodel.Price(t, 0)
		if err != nil {
			b.Fatalf("%s: %v", ph.name, err)
		}
		var md strings.Builder
		costmodel.WriteMarkdown(&md, t, e)
		tables = append(tables, ph.name+":\n"+md.String())
		if dir := os.Getenv("CRAWLER_COST_OUT"); dir != "" {
			for name, data := range map[string][]byte{ph.name + ".jsonl": ph.lines, ph.name + ".md": []byte(md.String())} {
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Logf("%s: %.0f pages, $%.2f per million pages, %.1f AWS requests per page; %.0f links, %.1f a page, $%.3f per million links, %.3f requests per link",
			ph.name, e.Pages, e.PerMillionPages, e.PerPage(e.Requests), e.Links, e.PerPage(e.Links), e.PerLink(e.USD)*1e6, e.PerLink(e.Requests))
		reportCost(b, ph.name, t, e)
		// The model's requests by Lambda's event source mapping, against
		// what the pump made (its empty receives are Lambda's idle
		// polling, priced apart).
		var esmRecv, esmDel int64
		for _, f := range t.Functions {
			esmRecv += f.ESMReceives
			esmDel += f.ESMDeletes
		}
		r, d := ph.pump["SQS.ReceiveMessage"], ph.pump["SQS.DeleteMessageBatch"]
		b.Logf("%s: Lambda's event source mapping modelled as %d receives and %d deletes; the pump made %d receives with messages (%d empty) and %d deletes",
			ph.name, esmRecv, esmDel, r.Calls-r.Empty, r.Empty, d.Calls)
		for _, f := range t.Functions {
			if u := f.Ops.Total().Unreported + f.InitOps.Total().Unreported; u > 0 {
				b.Errorf("%s: %s made %d DynamoDB calls that reported no consumed capacity", ph.name, f.Name, u)
			}
		}
	}
	for _, t := range tables {
		b.Log(t)
	}
}

// reportCost reports a phase's counts per page.
func reportCost(b *testing.B, phase string, t *costmodel.Totals, e *costmodel.Estimate) {
	var calls awsmeter.Usage = awsmeter.Usage{}
	var inv, gbs float64
	var esm int64
	for _, f := range t.Functions {
		calls.Add(f.Ops)
		inv += float64(f.Invocations)
		gbs += f.GBSeconds
		esm += f.ESMReceives + f.ESMDeletes
	}
	var sqsBilled, s3Put, s3Get float64
	for k, o := range calls {
		switch {
		case strings.HasPrefix(k, "SQS."):
			sqsBilled += float64(o.Billed)
		case k == "S3.PutObject":
			s3Put += float64(o.Calls + o.Retries)
		case strings.HasPrefix(k, "S3."):
			s3Get += float64(o.Calls + o.Retries)
		}
	}
	tot := calls.Total()
	m := func(v float64, unit string) { b.ReportMetric(v, phase+"-"+unit) }
	m(e.Pages, "pages")
	m(e.PerPage(e.Requests), "requests/page")
	m(e.PerPage(sqsBilled+float64(esm)), "sqs/page")
	m(e.PerPage(tot.WCU+tot.EstWCU), "ddb-wru/page")
	m(e.PerPage(tot.RCU), "ddb-rru/page")
	m(e.PerPage(s3Put), "s3-put/page")
	m(e.PerPage(s3Get), "s3-get/page")
	m(e.PerPage(inv), "invocations/page")
	m(e.PerPage(gbs)*1000, "GB-ms/page")
	m(e.PerMillionPages, "$/Mpages")
	m(e.PerPage(e.Links), "links/page")
	m(e.PerLink(e.Requests), "requests/link")
}

// metered is an environment of its own per function (and per fetcher):
// metered clients, a Lambda logger and metrics, all writing to logs.
func (h *awsHome) metered(logs *lineSink) environment {
	return func(name string) (stack.Clients, *slog.Logger, io.Writer) {
		log := slog.New(slog.NewJSONHandler(logs, nil)).With("function", name)
		return emulatorClients(h.t, awsmeter.New()), log, logs
	}
}

// lineSink collects what the functions write to standard output and
// error, as CloudWatch Logs would. Every writer here writes a whole line
// per Write.
type lineSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *lineSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// take returns the lines written since the last take.
func (s *lineSink) take() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := bytes.Clone(s.buf.Bytes())
	s.buf.Reset()
	return out
}

// conditional serves a handler's 200 answers with a strong ETag of their
// body, and answers a request whose If-None-Match is that ETag with 304:
// a site whose pages did not change. It adds pad bytes of prose, the
// same on every request, and links navigation links to each HTML page.
type conditional struct {
	h          http.Handler
	pad, links int
	mu         sync.Mutex
	nm         int
}

func (c *conditional) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	body := rec.Body.Bytes()
	if (c.pad > 0 || c.links > 0) && rec.Code == http.StatusOK && strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		if i := bytes.LastIndex(body, []byte("</body>")); i >= 0 {
			body = slices.Concat(body[:i:i], prose(r.URL.String(), c.pad), navLinks(c.links), body[i:])
		}
	}
	if rec.Code == http.StatusOK {
		sum := sha256.Sum256(body)
		etag := fmt.Sprintf("%q", hex.EncodeToString(sum[:8]))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			c.mu.Lock()
			c.nm++
			c.mu.Unlock()
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.WriteHeader(rec.Code)
	w.Write(body)
}

// prose is about n bytes of paragraphs of words, the same for the same
// seed and different for another (no two pages are duplicates).
func prose(seed string, n int) []byte {
	words := strings.Fields("lamp lens horn fog signal keeper tower light beam rock shore tide storm ship harbour " +
		"night watch oil wick glass brass bell chart course reef channel buoy mark coast wind wave north south")
	h := sha256.Sum256([]byte(seed))
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:8]), binary.LittleEndian.Uint64(h[8:16])))
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString("<p>")
		for range 12 + rng.IntN(12) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d.</p>\n", rng.IntN(10000))
	}
	return b.Bytes()
}

// navigation serves /nav/<k>.html, for k below links, as small pages
// (conditional adds the links to them too); other paths go to h.
type navigation struct {
	h     http.Handler
	links int
}

func (n navigation) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var k int
	if _, err := fmt.Sscanf(r.URL.Path, "/nav/%d.html", &k); err == nil && k >= 0 && k < n.links {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>Section %d</title></head><body><h1>Section %d</h1>%s</body></html>",
			k, k, prose(r.URL.Path, 600))
		return
	}
	n.h.ServeHTTP(w, r)
}

// navLinks is a navigation block of n links, the same on every page.
func navLinks(n int) []byte {
	var b bytes.Buffer
	if n > 0 {
		b.WriteString("<div class=\"nav\">")
		for k := range n {
			fmt.Fprintf(&b, `<a href="/nav/%d.html">Section %d</a> `, k, k)
		}
		b.WriteString("</div>")
	}
	return b.Bytes()
}

// counting counts the requests for each path.
type counting struct {
	h      http.Handler
	mu     sync.Mutex
	counts map[string]int
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.counts[r.URL.RequestURI()]++
	c.mu.Unlock()
	c.h.ServeHTTP(w, r)
}

func (c *counting) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

func (c *conditional) notModified() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nm
}

// itemSizes scans the stack's tables and returns, as Markdown, each kind
// of item's count, mean size and how many are past 1 KiB (one write
// unit), with the attributes that take 5% of its kind's bytes or more:
// sizes as DynamoDB bills them (itemsize.Of). A kind is a generations
// item's sort key prefix (head, gen, links, crawl, near) or a
// candidate's state.
func itemSizes(b *testing.B, h *awsHome) string {
	type kind struct {
		n, bytes, over int
		attrs          map[string]int
	}
	var out strings.Builder
	out.WriteString("| table | kind | items | mean bytes | past 1 KiB | largest attributes (mean bytes) |\n|---|---|---:|---:|---:|---|\n")
	t := h.settings.Tables
	for _, table := range []struct{ name, id string }{{"candidates", t.Candidates}, {"crawl log", t.CrawlLog}, {"generations", t.Generations}} {
		kinds := map[string]*kind{}
		in := &dynamodb.ScanInput{TableName: aws.String(table.id)}
		for {
			page, err := h.clients.DynamoDB.Scan(context.Background(), in)
			if err != nil {
				b.Fatal(err)
			}
			for _, it := range page.Items {
				name := "item"
				if sk, ok := it["sk"].(*ddbtypes.AttributeValueMemberS); ok {
					name, _, _ = strings.Cut(sk.Value, "#")
				}
				if st, ok := it["state"].(*ddbtypes.AttributeValueMemberS); ok {
					name = st.Value
				}
				k := kinds[name]
				if k == nil {
					k = &kind{attrs: map[string]int{}}
					kinds[name] = k
				}
				size := itemsize.Of(it)
				k.n++
				k.bytes += size
				if size > 1024 {
					k.over++
				}
				for a, v := range it {
					k.attrs[a] += itemsize.Of(map[string]ddbtypes.AttributeValue{a: v})
				}
			}
			if len(page.LastEvaluatedKey) == 0 {
				break
			}
			in.ExclusiveStartKey = page.LastEvaluatedKey
		}
		for _, name := range slices.Sorted(maps.Keys(kinds)) {
			k := kinds[name]
			attrs := slices.SortedFunc(maps.Keys(k.attrs), func(x, y string) int { return k.attrs[y] - k.attrs[x] })
			var big []string
			for _, a := range attrs {
				if k.attrs[a]*20 >= k.bytes {
					big = append(big, fmt.Sprintf("%s %d", a, k.attrs[a]/k.n))
				}
			}
			fmt.Fprintf(&out, "| %s | %s | %d | %d | %d | %s |\n", table.name, name, k.n, k.bytes/k.n, k.over, strings.Join(big, ", "))
		}
	}
	return out.String()
}

// searchCost runs one search over the fresh crawl as `crawler search
// --stack` does (the generations table scanned, the piles read from S3)
// and reports its requests and time: what a search costs now that the
// text is read from the piles (BENCHMARKS.md, "#15, 2026-11-27 night").
func searchCost(b *testing.B, h *awsHome) {
	b.StopTimer()
	defer b.StartTimer()
	m := awsmeter.New()
	c := emulatorClients(b, m)
	db := dynamo.New(c.DynamoDB, h.settings.Tables, dynamo.WithBlobs(s3blob.New(c.S3, h.settings.Bucket)))
	start := time.Now()
	hits, err := db.Search(context.Background(), "sort a list", 10)
	took := time.Since(start)
	if err != nil {
		b.Fatalf("search: %v", err)
	}
	u := m.Take()
	get := u["S3.GetObject"]
	b.Logf("search: %d hits in %v; %d S3 GETs (%d bytes), %.1f read units", len(hits), took.Round(time.Millisecond),
		get.Calls, get.Bytes, u.Total().RCU)
	b.ReportMetric(float64(took.Milliseconds()), "search-ms")
	b.ReportMetric(float64(get.Calls), "search-s3-get")
	b.ReportMetric(u.Total().RCU, "search-ddb-rru")
}
