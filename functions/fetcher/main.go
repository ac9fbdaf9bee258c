// Command fetcher is the fetcher Lambda function: it fetches the URLs of
// the fetch queue's tasks, politely across all its invocations, stores
// bodies in S3 and the crawl log in DynamoDB, and hands pages on to the
// parse and summarize queues. See shared/fetch and shared/handlers.
package main

import (
	"context"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/serverless-crawler/crawler/shared/dynamo"
	"github.com/serverless-crawler/crawler/shared/emf"
	"github.com/serverless-crawler/crawler/shared/fetch"
	"github.com/serverless-crawler/crawler/shared/handlers"
	"github.com/serverless-crawler/crawler/shared/lambdalog"
	"github.com/serverless-crawler/crawler/shared/s3blob"
	"github.com/serverless-crawler/crawler/shared/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/sqsq"
	"github.com/serverless-crawler/crawler/shared/stack"
)

func main() {
	ctx := context.Background()
	log, lh := lambdalog.New(os.Stderr, 0, "fetcher")
	s, err := stack.FromEnv(os.Getenv, "CANDIDATES_TABLE", "CRAWL_LOG_TABLE", "CONTROL_TABLE", "BUCKET",
		"ENQUEUE_QUEUE_URL", "FETCH_QUEUE_URL", "PARSE_QUEUE_URL", "SUMMARIZE_QUEUE_URL", "DEAD_LETTER_QUEUE_URL")
	if err != nil {
		stack.Fatal(log, "settings", err)
	}
	log, lh = lambdalog.New(os.Stderr, s.LogLevel, "fetcher")
	c, err := stack.NewClients(ctx)
	if err != nil {
		stack.Fatal(log, "AWS clients", err)
	}
	db := dynamo.New(c.DynamoDB, s.Tables, dynamo.WithCrawlLogRetention(s.CrawlLogRetention))
	agent, err := s.RegisterAgent(ctx, db, "fetcher")
	if err != nil {
		stack.Fatal(log, "agent", err)
	}
	self := sqsq.New(c.SQS, s.FetchQueue)
	// The gate's lease outlives the function's 120 s timeout: a holder
	// killed mid-request frees the host when its lease runs out.
	gate := dynamo.NewGate(db, dynamo.GateConfig{Lease: 3 * time.Minute, MaxWait: 5 * time.Second})
	stage := fetch.New(db, s3blob.New(c.S3, s.Bucket), fetch.Queues{
		Enqueue: sqsq.New(c.SQS, s.EnqueueQueue), Parse: sqsq.New(c.SQS, s.ParseQueue), Summarize: sqsq.New(c.SQS, s.SummarizeQueue),
	}, s.HTTPClient(), gate, s.FetchConfig(agent.UUID), log)
	h := handlers.NewFetcher(stage, sqsbatch.Processor{
		Queue: "fetch", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue), Requeue: self, Visibility: handlers.Visibility{Queue: self},
		Concurrency: 10, Log: log,
	}, emf.New(os.Stdout, "fetcher"))
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		lh.Start(ctx)
		return h.Handle(ctx, ev)
	})
}
