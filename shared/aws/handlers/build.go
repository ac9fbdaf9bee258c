package handlers

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/s3blob"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
	"github.com/serverless-crawler/crawler/shared/stage/schedule"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
)

// The builders below are what each function's main.go calls once per
// execution environment, and what the tests call to run the same
// functions in-process. metrics is where EMF records go (stdout on
// Lambda), and the usage records of c.Meter (awsmeter.Record), one per
// invocation, when c.Meter is set.

// NewSchedulerFunction builds the scheduler function.
func NewSchedulerFunction(ctx context.Context, s stack.Settings, c stack.Clients, log *slog.Logger, metrics io.Writer) (*Scheduler, error) {
	db := dynamo.New(c.DynamoDB, s.Tables)
	if _, err := s.RegisterAgent(ctx, db, "scheduler"); err != nil {
		return nil, err
	}
	fetchQ := SpreadingSender{Queue: sqsq.New(c.SQS, s.FetchQueue), Delay: s.Delay}
	h := &Scheduler{
		Sched:  schedule.New(db, fetchQ, schedule.Policy{MaxDepth: s.MaxDepth}, log),
		Status: db,
		Batch: sqsbatch.Processor{Queue: "enqueue", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue),
			Visibility: Visibility{Queue: sqsq.New(c.SQS, s.EnqueueQueue)}, Log: log},
		Metrics:      emf.New(metrics, "scheduler"),
		Log:          log,
		Usage:        awsmeter.NewReporter(c.Meter, metrics, "scheduler", s.MemoryMB),
		ReleaseLimit: 1000,
		// Longer than the longest spread delay (15 min) plus a fetch.
		StaleAfter: 30 * time.Minute,
	}
	h.Init()
	return h, nil
}

// NewFetcherFunction builds the fetcher function.
func NewFetcherFunction(ctx context.Context, s stack.Settings, c stack.Clients, log *slog.Logger, metrics io.Writer) (*Queue, error) {
	db := dynamo.New(c.DynamoDB, s.Tables, dynamo.WithCrawlLogRetention(s.CrawlLogRetention))
	agent, err := s.RegisterAgent(ctx, db, "fetcher")
	if err != nil {
		return nil, err
	}
	self := sqsq.New(c.SQS, s.FetchQueue)
	// The gate's lease outlives the function's 120 s timeout: a holder
	// killed mid-request frees the host when its lease runs out.
	gate := dynamo.NewGate(db, dynamo.GateConfig{Lease: 3 * time.Minute, MaxWait: 5 * time.Second, Log: log})
	stage := fetch.New(db, s3blob.New(c.S3, s.Bucket), fetch.Queues{
		Enqueue: sqsq.New(c.SQS, s.EnqueueQueue), Parse: sqsq.New(c.SQS, s.ParseQueue), Summarize: sqsq.New(c.SQS, s.SummarizeQueue),
	}, s.HTTPClient(), gate, s.FetchConfig(agent.UUID), log)
	stage.SharedRobots = db
	h := NewFetcher(stage, sqsbatch.Processor{
		Queue: "fetch", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue), Requeue: self, Visibility: Visibility{Queue: self},
		Concurrency: 10, Log: log,
	}, emf.New(metrics, "fetcher"))
	h.Usage = awsmeter.NewReporter(c.Meter, metrics, "fetcher", s.MemoryMB)
	return h, nil
}

// NewParserFunction builds the parser function.
func NewParserFunction(ctx context.Context, s stack.Settings, c stack.Clients, log *slog.Logger, metrics io.Writer) (*Queue, error) {
	db := dynamo.New(c.DynamoDB, s.Tables)
	if _, err := s.RegisterAgent(ctx, db, "parser"); err != nil {
		return nil, err
	}
	stage := parse.New(s3blob.New(c.S3, s.Bucket), db, sqsq.New(c.SQS, s.EnqueueQueue), sqsq.New(c.SQS, s.SummarizeQueue),
		parse.Config{MaxURLsFromPage: 5000}, log)
	h := NewStage(stage.Handle, sqsbatch.Processor{
		Queue: "parse", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue), Visibility: Visibility{Queue: sqsq.New(c.SQS, s.ParseQueue)},
		Concurrency: 4, Log: log,
	}, emf.New(metrics, "parser"))
	h.Usage = awsmeter.NewReporter(c.Meter, metrics, "parser", s.MemoryMB)
	return h, nil
}

// NewSummarizerFunction builds the summarizer function.
func NewSummarizerFunction(ctx context.Context, s stack.Settings, c stack.Clients, log *slog.Logger, metrics io.Writer) (*Queue, error) {
	blobs := s3blob.New(c.S3, s.Bucket)
	db := dynamo.New(c.DynamoDB, s.Tables, dynamo.WithBlobs(blobs))
	if _, err := s.RegisterAgent(ctx, db, "summarizer"); err != nil {
		return nil, err
	}
	stage := summarize.New(db, blobs, summarize.Config{}, log)
	h := NewStage(stage.Handle, sqsbatch.Processor{
		Queue: "summarize", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue),
		Visibility: Visibility{Queue: sqsq.New(c.SQS, s.SummarizeQueue)}, Log: log,
	}, emf.New(metrics, "summarizer"))
	h.Usage = awsmeter.NewReporter(c.Meter, metrics, "summarizer", s.MemoryMB)
	return h, nil
}
