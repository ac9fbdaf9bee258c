// Package fetcher builds the fetcher function: it fetches the URLs of
// the fetch queue's tasks, politely across all its invocations (the
// per-host gate in DynamoDB), stores bodies in S3 and the crawl log in
// DynamoDB, and hands pages on to the parse and summarize queues.
package fetcher

import (
	"context"
	"net/http"
	"time"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/s3blob"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/web/safedial"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// Needs are the environment variables the function cannot start without.
var Needs = []string{"CANDIDATES_TABLE", "CRAWL_LOG_TABLE", "CONTROL_TABLE", "BUCKET",
	"ENQUEUE_QUEUE_URL", "FETCH_QUEUE_URL", "PARSE_QUEUE_URL", "SUMMARIZE_QUEUE_URL", "DEAD_LETTER_QUEUE_URL"}

// The gate and the robots store are the fetch stage's, in DynamoDB.
var (
	_ fetch.Politeness  = (*dynamo.Gate)(nil)
	_ fetch.RobotsStore = (*dynamo.DB)(nil)
)

// New builds the fetcher's handler: fetch tasks, several at once, each
// host spaced by the gate shared across invocations; a task whose host
// is busy elsewhere is sent again with a delay. Pages by outcome, bytes
// and fetch latency go out as metrics.
func New(ctx context.Context, e handlers.Env) (*handlers.Queue, error) {
	s, c := e.Settings, e.Clients
	db := dynamo.New(c.DynamoDB, s.Tables, dynamo.WithCrawlLogRetention(s.CrawlLogRetention))
	agent, err := s.RegisterAgent(ctx, db, "fetcher")
	if err != nil {
		return nil, err
	}
	self := sqsq.New(c.SQS, s.FetchQueue)
	// The gate's lease outlives the function's 120 s timeout: a holder
	// killed mid-request frees the host when its lease runs out. No
	// request outlives that timeout either (MaxRequest), so the slot
	// passes between an invocation's fetches of a host with no write
	// while the lease left covers one more.
	gate := dynamo.NewGate(db, dynamo.GateConfig{Lease: 3 * time.Minute, MaxRequest: 2 * time.Minute, MaxWait: 5 * time.Second, MaxRemoteWait: time.Second, Log: e.Log})
	// Bodies are packed in WARC files, one PUT for the pages fetched at
	// once in an invocation (docs/aws.md).
	bodies := warc.NewPacker(s3blob.New(c.S3, s.Bucket), warc.PackConfig{Prefix: "warc/", Software: "serverless-crawler fetcher"})
	// What the stage sends goes out once the batch is handled, in
	// SendMessageBatch calls for all its tasks (sqsbatch.Gather).
	stage := fetch.New(db, bodies, fetch.Queues{
		Enqueue:   sqsbatch.Gather(sqsq.New(c.SQS, s.EnqueueQueue)),
		Parse:     sqsbatch.Gather(sqsq.New(c.SQS, s.ParseQueue)),
		Summarize: sqsbatch.Gather(sqsq.New(c.SQS, s.SummarizeQueue)),
	}, HTTPClient(s), gate, Config(s, agent.UUID), e.Log)
	stage.SharedRobots = db
	metrics := emf.New(e.Metrics, "fetcher")
	stage.OnCrawl = func(cr crawl.Crawl) { handlers.RecordCrawlMetrics(metrics, cr) }
	h := handlers.NewStage(stage.Handle, sqsbatch.Processor{
		Queue: "fetch", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue), Requeue: self, Visibility: handlers.Visibility{Queue: self},
		Deferred: handlers.Deferred, Concurrency: 10, Log: e.Log, Members: bodies,
	}, metrics)
	h.Usage = awsmeter.NewReporter(c.Meter, e.Metrics, "fetcher", s.MemoryMB)
	return h, nil
}

// Config is the fetch stage's configuration from the stack's settings.
func Config(s stack.Settings, agentUUID string) fetch.Config {
	c := fetch.DefaultConfig()
	c.AgentUUID, c.UserAgent, c.Delay, c.Timeout = agentUUID, s.UserAgent, s.Delay, s.Timeout
	c.MaxResourceSize, c.RecrawlPeriod = s.MaxResourceSize, s.RecrawlPeriod
	return c
}

// HTTPClient is the fetcher's client: it refuses loopback, private and
// link-local addresses (SSRF) unless AllowPrivate is set. On AWS no seed
// opens them: a crawl of an internal site sets AllowPrivateNetworks.
func HTTPClient(s stack.Settings) *http.Client {
	dialer := safedial.New(s.Timeout)
	dialer.AllowPrivate = s.AllowPrivate
	return &http.Client{Transport: fetch.Transport(dialer.DialContext, s.Timeout)}
}
