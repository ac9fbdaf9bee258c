package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/fetcher"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/parser"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/scheduler"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/summarizer"
	"github.com/serverless-crawler/crawler/shared/aws/s3blob"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/testsite"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// awsHome is the four functions built as their main.go builds them, over
// DynamoDB, SQS and S3 on the emulators that `make test` starts, with a
// pump standing in for Lambda's SQS event source mappings.
type awsHome struct {
	t        testing.TB
	settings stack.Settings
	clients  stack.Clients
	queues   map[string]*sqsq.Queue // by name: enqueue, fetch, parse, summarize and their -dlq
	db       *dynamo.DB
	// schedule is the scheduler's handler (functions), which run sends
	// the recrawl schedule's release event, as EventBridge would, when
	// the queues have settled.
	schedule func(context.Context, json.RawMessage) (any, error)

	// maxWindow, when set, shortens the batching windows the pump takes
	// from template.yaml, for a test that times a crawl.
	maxWindow time.Duration

	// trace is what the pump and the clients saw go wrong (an attempt
	// that failed, a batch that came back), shown if the test fails:
	// an emulator that lost an answer looks like the crawler losing a
	// message.
	trace *lineSink

	mu         sync.Mutex
	deliveries map[string][]delivery // fetch tasks handed to a fetcher, by URL
}

// delivery is a fetch task as the pump handed it to a fetcher.
type delivery struct {
	messageID, crawlUUID string
	receiveCount         int
}

// tracef adds a line to the trace.
func (h *awsHome) tracef(format string, args ...any) {
	fmt.Fprintf(h.trace, time.Now().UTC().Format("15:04:05.000")+" "+format+"\n", args...)
}

// fetchesAllowed is how many requests for u the fetch tasks delivered
// explain: one per message that carried its one crawl. A send whose
// answer is lost on the way is sent again (the SDK's retry; SQS, like
// ministack under load, may have taken the first), so one task can be
// two messages, reach two fetchers at once, and be fetched by both: the
// crawl is then recorded once. A message received again (after a
// deferral, or a failure) counts once, and tasks of two crawls of u, in
// a crawl that should fetch it once, are the crawler's own error: they
// explain nothing, and the answer is 1. It also returns the deliveries,
// to show.
func (h *awsHome) fetchesAllowed(u string) (int, []delivery) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ds := h.deliveries[u]
	messages := map[string]bool{}
	for _, d := range ds {
		if d.crawlUUID != ds[0].crawlUUID {
			return 1, ds
		}
		messages[d.messageID] = true
	}
	return max(1, len(messages)), ds
}

func newAWSHome(t testing.TB, mod func(*stack.Settings)) *awsHome {
	t.Helper()
	trace := &lineSink{}
	t.Cleanup(func() {
		if t.Failed() {
			lines := strings.Split(strings.TrimSpace(string(trace.take())), "\n")
			t.Logf("what the pump and the clients saw fail (the last %d lines):\n%s", min(len(lines), 100), strings.Join(lines[max(0, len(lines)-100):], "\n"))
		}
	})
	c := emulatorClients(t, nil, attemptLog(trace))
	ctx := context.Background()
	p := "h" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	s := stack.Settings{
		Tables: dynamo.Tables{Candidates: p + "-candidates", CrawlLog: p + "-crawl-log", Generations: p + "-generations", Control: p + "-control"},
		Bucket: p + "-bodies", UserAgent: "crawler-test/1.0", Delay: 50 * time.Millisecond, Timeout: time.Second,
		MaxResourceSize: 10 << 20, AllowPrivate: true, MaxDepth: 8, CrawlLogRetention: time.Hour,
	}
	if mod != nil {
		mod(&s)
	}
	if err := dynamo.CreateTables(ctx, c.DynamoDB, s.Tables); err != nil {
		t.Fatal(err)
	}
	if _, err := c.S3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s.Bucket)}); err != nil {
		t.Fatal(err)
	}
	h := &awsHome{t: t, trace: trace, settings: s, clients: c, queues: map[string]*sqsq.Queue{}, db: dynamo.New(c.DynamoDB, s.Tables, dynamo.WithBlobs(s3blob.New(c.S3, s.Bucket)))}
	for _, name := range []string{"enqueue", "fetch", "parse", "summarize"} {
		for _, n := range []string{name, name + "-dlq"} {
			out, err := c.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(p + "-" + n),
				// 60 s, not template.yaml's 360: a receive whose answer
				// is lost on the way hides its messages that long, and the
				// crawl must still settle within the test's bound.
				Attributes: map[string]string{"VisibilityTimeout": "60"}})
			if err != nil {
				t.Fatal(err)
			}
			h.queues[n] = sqsq.New(c.SQS, aws.ToString(out.QueueUrl))
		}
	}
	h.settings.EnqueueQueue, h.settings.FetchQueue = h.queues["enqueue"].URL(), h.queues["fetch"].URL()
	h.settings.ParseQueue, h.settings.SummarizeQueue = h.queues["parse"].URL(), h.queues["summarize"].URL()
	return h
}

// function is one deployed function: its queue and its handler.
type function struct {
	queue  string
	handle func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)
}

// environment is what one execution environment of a function gets:
// its clients, its logger and where its metrics go.
type environment func(name string) (stack.Clients, *slog.Logger, io.Writer)

// functions builds every function as its main.go does; envs fetchers
// stand for that many concurrent execution environments. Each function
// runs in env(its name), or with the home's clients and no logs when env
// is nil. It also returns the scheduler's handler, for schedule events.
func (h *awsHome) functions(envs int, env environment) ([]function, func(context.Context, json.RawMessage) (any, error)) {
	ctx := context.Background()
	if env == nil {
		// Warnings and errors kept, and shown if the test fails: what a
		// function logged is what tells a flaky emulator from a fault.
		logs := &lineSink{}
		h.t.Cleanup(func() {
			if h.t.Failed() {
				lines := strings.Split(strings.TrimSpace(string(logs.take())), "\n")
				h.t.Logf("the functions' last %d warnings and errors:\n%s", min(len(lines), 100), strings.Join(lines[max(0, len(lines)-100):], "\n"))
			}
		})
		env = func(name string) (stack.Clients, *slog.Logger, io.Writer) {
			log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})).With("function", name)
			return h.clients, log, io.Discard
		}
	}
	// in is the environment of the named function, consuming queue q.
	in := func(name, q string) handlers.Env {
		c, log, metrics := env(name)
		s := h.settings
		s.DeadLetterQueue = h.queues[q+"-dlq"].URL()
		return handlers.Env{Settings: s, Clients: c, Log: log, Metrics: metrics}
	}
	sched, err := scheduler.New(ctx, in("scheduler", "enqueue"))
	if err != nil {
		h.t.Fatal(err)
	}
	fs := []function{{"enqueue", func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		raw, _ := json.Marshal(ev)
		out, err := sched.Handle(ctx, raw)
		resp, _ := out.(events.SQSEventResponse)
		return resp, err
	}}}
	for range envs {
		f, err := fetcher.New(ctx, in("fetcher", "fetch"))
		if err != nil {
			h.t.Fatal(err)
		}
		fs = append(fs, function{"fetch", f.Handle})
	}
	p, err := parser.New(ctx, in("parser", "parse"))
	if err != nil {
		h.t.Fatal(err)
	}
	s, err := summarizer.New(ctx, in("summarizer", "summarize"))
	if err != nil {
		h.t.Fatal(err)
	}
	h.schedule = sched.Handle
	return append(fs, function{"parse", p.Handle}, function{"summarize", s.Handle}), sched.Handle
}

// emulatorClients are clients of the emulators `make test` starts, with
// m (if not nil) counting every operation; the test is skipped, saying
// so, when none is configured.
func emulatorClients(t testing.TB, m *awsmeter.Meter, more ...func(*middleware.Stack) error) stack.Clients {
	t.Helper()
	ddb, other := os.Getenv("CRAWLER_TEST_DYNAMODB"), os.Getenv("CRAWLER_TEST_AWS")
	if ddb == "" || other == "" {
		t.Skip("CRAWLER_TEST_DYNAMODB and CRAWLER_TEST_AWS are not set: run `make test`, which starts the emulators")
	}
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	var api []func(*middleware.Stack) error
	if m != nil {
		api = append(api, m.AddTo)
	}
	api = append(api, more...)
	return stack.Clients{
		DynamoDB: dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(ddb), Credentials: creds, APIOptions: api}),
		SQS:      sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String(other), Credentials: creds, APIOptions: api}),
		S3: s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(other), Credentials: creds, UsePathStyle: true,
			APIOptions: api}),
		Meter: m,
	}
}

// attemptLog writes a line to w for each attempt of an AWS call that
// failed, whether the SDK then retried it or not, save a condition that
// did not hold (the stores' expected answer). A receive whose answer was
// lost hides its messages for the visibility timeout, and the SDK's
// retry then answers with none: this is where that shows.
func attemptLog(w io.Writer) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("attemptLog", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleFinalize(ctx, in)
			var api smithy.APIError
			if errors.As(err, &api) && (api.ErrorCode() == "ConditionalCheckFailedException" || api.ErrorCode() == "TransactionCanceledException") {
				return out, md, err
			}
			if err != nil && ctx.Err() == nil {
				fmt.Fprintf(w, "%s %s %s: an attempt failed: %v\n", time.Now().UTC().Format("15:04:05.000"),
					awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx), err)
			}
			return out, md, err
		}), "Retry", middleware.After)
	}
}

// run sends the enqueue bodies and pumps every queue into its functions,
// each function in its own goroutine as Lambda would, until all queues
// stay empty (or the deadline passes).
func (h *awsHome) run(fs []function, within time.Duration, bodies ...[]byte) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if err := h.queues["enqueue"].Send(ctx, bodies...); err != nil {
		h.t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, f := range fs {
		size, window := eventBatching(h.t, f.queue)
		if h.maxWindow > 0 {
			window = min(window, h.maxWindow)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := h.queues[f.queue]
			for ctx.Err() == nil {
				msgs, err := q.Receive(ctx, size, time.Second)
				if err != nil && ctx.Err() == nil {
					h.tracef("receive from %s: %v", f.queue, err)
				}
				if err != nil || len(msgs) == 0 {
					continue
				}
				// As Lambda's event source mapping does: up to BatchSize
				// messages, gathered for up to the batching window.
				for end := time.Now().Add(window); len(msgs) < size && time.Now().Before(end) && ctx.Err() == nil; {
					more, err := q.Receive(ctx, size-len(msgs), 0)
					if err != nil && ctx.Err() == nil {
						h.tracef("receive from %s: %v", f.queue, err)
					}
					if err != nil || len(more) == 0 {
						time.Sleep(50 * time.Millisecond)
					}
					msgs = append(msgs, more...)
				}
				var ev events.SQSEvent
				if f.queue == "fetch" {
					h.noteDeliveries(msgs)
				}
				if f.queue == "enqueue" {
					for _, m := range msgs {
						h.tracef("enqueue message %s received (receive %d): %s", m.ID, m.ReceiveCount, crawl.Truncate(string(m.Body), 100))
					}
				}
				for _, m := range msgs {
					ev.Records = append(ev.Records, events.SQSMessage{MessageId: m.ID, ReceiptHandle: m.ReceiptHandle, Body: string(m.Body),
						Attributes: map[string]string{"ApproximateReceiveCount": strconvI(m.ReceiveCount),
							"SentTimestamp": strconvI(int(m.SentAt.UnixMilli()))}, EventSource: "aws:sqs"})
				}
				ictx, icancel := context.WithTimeout(ctx, 60*time.Second)
				resp, err := f.handle(ictx, ev)
				icancel()
				if err != nil {
					h.tracef("%s: a batch of %d failed and comes back whole: %v", f.queue, len(msgs), err)
					continue
				}
				failed := map[string]bool{}
				for _, f := range resp.BatchItemFailures {
					failed[f.ItemIdentifier] = true
				}
				var done []sqsq.Message
				for _, m := range msgs {
					if !failed[m.ID] {
						done = append(done, m)
					}
				}
				// Lambda's event source mapping deletes what succeeded. An
				// SDK retry of a delete whose first answer was lost on the
				// way (seen with ministack 1.5.33, which then refuses the
				// handle it just honoured; AWS accepts a stale handle) is
				// not the handler's failure.
				if err := q.Delete(ctx, done...); err != nil && ctx.Err() == nil {
					if !strings.Contains(err.Error(), "ReceiptHandleIsInvalid") {
						h.t.Errorf("delete from %s: %v", f.queue, err)
					}
					h.tracef("delete from %s: %v", f.queue, err)
				}
			}
		}()
	}
	// Settled: every queue empty, visible, in flight and delayed, three
	// times in a row, and then the schedule's release event releases
	// nothing: a polite crawl's scheduler leaves a host's URLs past its
	// spread's horizon due, for the schedule (SpreadingSender.Take).
	for quiet := 0; quiet < 3 && ctx.Err() == nil; {
		time.Sleep(500 * time.Millisecond)
		busy := false
		for _, n := range []string{"enqueue", "fetch", "parse", "summarize"} {
			v, f, d, err := h.queues[n].Depth(ctx)
			if err != nil || v+f+d > 0 {
				busy = true
			}
		}
		if busy {
			quiet = 0
			continue
		}
		if quiet++; quiet == 3 && h.schedule != nil && h.releasedOnSchedule(ctx) {
			quiet = 0
		}
	}
	if ctx.Err() != nil {
		h.t.Errorf("the crawl did not settle within %v", within)
	}
	cancel()
	wg.Wait()
}

// releasedOnSchedule sends the schedule's release event to the
// scheduler and reports whether it released anything.
func (h *awsHome) releasedOnSchedule(ctx context.Context) bool {
	out, err := h.schedule(ctx, json.RawMessage(`{"source":"crawler.schedule","action":"release"}`))
	if err != nil {
		h.t.Errorf("schedule event: %v", err)
		return false
	}
	n, _ := out.(map[string]int)
	return n["released"]+n["requeued"] > 0
}

// eventBatching is the BatchSize and MaximumBatchingWindowInSeconds of
// the template.yaml function that consumes the named queue ("summarize":
// SummarizeQueue).
func eventBatching(t testing.TB, queue string) (int, time.Duration) {
	t.Helper()
	arn := strings.ToUpper(queue[:1]) + queue[1:] + "Queue.Arn"
	for id, r := range handlers.TemplateResources(t) {
		if r["Type"] != "AWS::Serverless::Function" {
			continue
		}
		props, _ := r["Properties"].(map[string]any)
		evs, _ := props["Events"].(map[string]any)
		for _, ev := range evs {
			p, _ := ev.(map[string]any)["Properties"].(map[string]any)
			if fmt.Sprint(p["Queue"]) != arn {
				continue
			}
			size, ok := p["BatchSize"].(int)
			if !ok {
				t.Fatalf("template.yaml: %s's %s event has no BatchSize", id, queue)
			}
			window, _ := p["MaximumBatchingWindowInSeconds"].(int)
			return size, time.Duration(window) * time.Second
		}
	}
	t.Fatalf("template.yaml: no function consumes %s", arn)
	return 0, 0
}

// noteDeliveries records the fetch tasks of msgs (fetchesAllowed).
func (h *awsHome) noteDeliveries(msgs []sqsq.Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.deliveries == nil {
		h.deliveries = map[string][]delivery{}
	}
	for _, m := range msgs {
		var t crawl.FetchTask
		if json.Unmarshal(m.Body, &t) == nil {
			h.deliveries[t.URL] = append(h.deliveries[t.URL], delivery{m.ID, t.CrawlUUID, m.ReceiveCount})
		}
	}
}

func strconvI(n int) string { b, _ := json.Marshal(n); return string(b) }

// The #2 test-site crawl, run through the four functions on DynamoDB,
// SQS and S3: the same outcomes as the embedded home, with three fetcher
// environments at once and the politeness delay held across them.
func TestCrawlTestSiteOnAWS(t *testing.T) {
	site := testsite.New()
	defer site.Close()
	site.SetHang(3 * time.Second)
	h := newAWSHome(t, nil)
	seed, _ := json.Marshal(crawl.EnqueueEvent{URL: site.URL + "/", Version: 1})
	fs, _ := h.functions(3, nil)
	h.run(fs, 3*time.Minute, seed, []byte(`{"url": 42}`))

	counts := site.Counts()
	for p, n := range counts {
		allowed, ds := h.fetchesAllowed(site.URL + p)
		// A request the crawl retried (after a timeout, say) is in its log.
		sent := 1
		if c, err := h.db.GetCandidate(context.Background(), site.URL+p); err == nil && c.CrawlUUID != "" {
			if cr, err := h.db.GetCrawl(context.Background(), c.CrawlUUID); err == nil {
				sent = max(1, len(cr.Requests))
			}
		}
		switch {
		case n > allowed*sent:
			t.Errorf("%s requested %d times, want once (its crawl logged %d requests); its fetch tasks: %+v", p, n, sent, ds)
		case n > 1:
			t.Logf("%s requested %d times: its crawl logged %d requests, and %+v carried its fetch task", p, n, sent, ds)
		}
	}
	reqs := site.Requests()
	slices.SortFunc(reqs, func(a, b testsite.Request) int { return a.At.Compare(b.At) })
	for i := 1; i < len(reqs); i++ {
		if gap := reqs[i].At.Sub(reqs[i-1].At); gap < h.settings.Delay {
			t.Errorf("%s started %v after %s: closer than the delay %v", reqs[i].Path, gap, reqs[i-1].Path, h.settings.Delay)
		}
	}
	ctx := context.Background()
	exitOf := func(u string) crawl.ExitCode {
		t.Helper()
		c, err := h.db.GetCandidate(ctx, u)
		if err != nil || c.LastCrawlExitCode == nil {
			t.Errorf("candidate %s: %+v, %v", u, c, err)
			return 0
		}
		return *c.LastCrawlExitCode
	}
	for _, p := range testsite.Ordinary {
		if got := exitOf(site.URL + p); got != crawl.ExitComplete {
			t.Errorf("%s: exit %v, want complete", p, got)
		}
	}
	for u, code := range map[string]crawl.ExitCode{
		site.URL + "/missing.html": crawl.ExitHTTPClientError, site.URL + "/broken.html": crawl.ExitHTTPServerError,
		site.URL + "/hang": crawl.ExitTimeout, site.URL + "/old.html": crawl.ExitRedirect,
		site.URL + "/chain-1.html": crawl.ExitRedirect, site.URL + "/files/report.pdf": crawl.ExitComplete,
		"http://exa mple.com/": crawl.ExitInvalidURL,
	} {
		if got := exitOf(u); got != code {
			t.Errorf("%s: exit %v, want %v", u, got, code)
		}
	}
	// Out-of-scope links are killed by default on AWS (RecordOutOfScope):
	// no candidate, no write.
	if c, err := h.db.GetCandidate(ctx, "http://other.invalid/elsewhere.html"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("out-of-scope link recorded: %+v, %v", c, err)
	}
	// Bodies are packed in WARC files, read back with ranged GETs: each
	// page's body is the one the site served, and the pages fetched at
	// once in an invocation share a file.
	bodies := warc.NewPacker(s3blob.New(h.clients.S3, h.settings.Bucket), warc.PackConfig{})
	files := map[string]bool{}
	for _, p := range testsite.Ordinary {
		c, err := h.db.GetCandidate(ctx, site.URL+p)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := h.db.GetCrawl(ctx, c.CrawlUUID)
		if err != nil || cr.File == nil {
			t.Fatalf("crawl of %s: %+v, %v", p, cr.File, err)
		}
		ref, ok := warc.ParseRef(cr.File.BodyKey)
		if !ok {
			t.Errorf("%s: body key %q is not in a WARC file", p, cr.File.BodyKey)
			continue
		}
		files[ref.Object] = true
		body, err := bodies.Get(ctx, cr.File.BodyKey)
		if err != nil || crawl.BodyKey(body) != cr.File.ContentID() || int64(len(body)) != *cr.File.FileSize {
			t.Errorf("%s: body read back: %d bytes, %v; want the %d bytes of content %s", p, len(body), err, *cr.File.FileSize, cr.File.ContentID())
		}
	}
	if len(files) >= len(testsite.Ordinary) {
		t.Errorf("%d WARC files for %d pages: no two bodies shared a file", len(files), len(testsite.Ordinary))
	}
	t.Logf("%d pages' bodies in %d WARC files", len(testsite.Ordinary), len(files))
	// Text piles too are records in shared WARC files (under piles/),
	// named from the generation item.
	piles := map[string]bool{}
	for _, p := range testsite.Ordinary {
		key := textPileKey(t, h, site.URL+p)
		ref, ok := warc.ParseRef(key)
		if !ok || !strings.HasPrefix(ref.Object, "piles/") {
			t.Errorf("%s: text pile key %q is not a record in a piles/ WARC file", p, key)
			continue
		}
		piles[ref.Object] = true
		data, err := bodies.Get(ctx, key)
		var pile dynamo.TextPileBlob
		if err == nil {
			err = json.Unmarshal(data, &pile)
		}
		if err != nil || pile.ID == 0 {
			t.Errorf("%s: text pile at %s: %+v, %v", p, key, pile, err)
		}
	}
	t.Logf("%d pages' text piles in %d WARC files", len(testsite.Ordinary), len(piles))
	st, err := h.db.Status(ctx, site.URL+"/docs/faq.html")
	if err != nil || st.Generation == nil || st.Generation.Title == nil {
		t.Errorf("status of the FAQ: %+v, %v", st, err)
	}
	hits, err := h.db.Search(ctx, "Unique text for /docs/faq.html", 5)
	if err != nil || len(hits) == 0 || hits[0].URL != site.URL+"/docs/faq.html" {
		t.Errorf("search: %v, %+v", err, hits)
	}
	// A plain text file is a document too (parse.ExtractPlain), its
	// text searched: the site serves it as "file /files/notes.txt".
	hits, err = h.db.Search(ctx, "file notes", 5)
	if err != nil || !slices.ContainsFunc(hits, func(h crawl.SearchHit) bool { return h.URL == site.URL+"/files/notes.txt" }) {
		t.Errorf("search for the plain text file: %v, %+v", err, hits)
	}
	// The malformed event, and nothing else, is in a dead-letter queue,
	// with its reason.
	for _, n := range deadLetterQueues {
		want := 0
		if n == "enqueue-dlq" {
			want = 1
		}
		msgs := h.deadLetters(ctx, n, want)
		if len(msgs) != want {
			t.Errorf("%s holds %d messages, want %d: %+v", n, len(msgs), want, msgs)
			continue
		}
		if want == 1 && (string(msgs[0].Body) != `{"url": 42}` || !strings.Contains(msgs[0].Attributes["reason"], "not a valid enqueue event")) {
			t.Errorf("dead letter %q with reason %q", msgs[0].Body, msgs[0].Attributes["reason"])
		}
	}
}

var deadLetterQueues = []string{"enqueue-dlq", "fetch-dlq", "parse-dlq", "summarize-dlq"}

// deadLetters receives the messages of the dead-letter queue n, with a
// few long polls while fewer than want have come: a receive may answer
// empty while a message is there (SQS samples its servers; under -race
// the emulator answered so once). Each receive hides what it takes for
// a second only: under load ministack now and then resets a connection
// in the middle of its answer, the SDK retries, and the messages the
// lost answer took would otherwise stay hidden for the queue's 60 s
// visibility timeout, past every poll here. A message received twice
// (after its second) counts once.
func (h *awsHome) deadLetters(ctx context.Context, n string, want int) []sqsq.Message {
	h.t.Helper()
	var msgs []sqsq.Message
	seen := map[string]bool{}
	for try := 0; try < 4 && (try == 0 || len(msgs) < want); try++ {
		out, err := h.clients.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(h.queues[n].URL()),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 2, VisibilityTimeout: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			h.t.Fatal(err)
		}
		h.tracef("receive from %s: %d messages", n, len(out.Messages))
		for _, m := range out.Messages {
			if id := aws.ToString(m.MessageId); !seen[id] {
				seen[id] = true
				attrs := map[string]string{}
				for k, v := range m.MessageAttributes {
					attrs[k] = aws.ToString(v.StringValue)
				}
				msgs = append(msgs, sqsq.Message{ID: id, Body: []byte(aws.ToString(m.Body)), Attributes: attrs})
			}
		}
	}
	return msgs
}

// textPileKey reads where the open generation of u keeps its text pile
// (the text_pile_key of the generation's side item), "" when it names none.
func textPileKey(t *testing.T, h *awsHome, u string) string {
	t.Helper()
	get := func(sk string) map[string]ddbtypes.AttributeValue {
		out, err := h.clients.DynamoDB.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(h.settings.Tables.Generations),
			Key:            map[string]ddbtypes.AttributeValue{"url": &ddbtypes.AttributeValueMemberS{Value: u}, "sk": &ddbtypes.AttributeValueMemberS{Value: sk}},
			ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Item
	}
	str := func(it map[string]ddbtypes.AttributeValue, k string) string {
		if v, ok := it[k].(*ddbtypes.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	sk := str(get("head"), "open_sk")
	if sk == "" {
		return ""
	}
	// On the generation's side item (the generation's own item when it
	// has no text to search).
	if k := str(get("links#"+sk), "text_pile_key"); k != "" {
		return k
	}
	return str(get(sk), "text_pile_key")
}
