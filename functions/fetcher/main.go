// Command fetcher is the fetcher Lambda function: it fetches the URLs
// of the fetch queue's tasks, politely across all its invocations, stores
// bodies in S3 and the crawl log in DynamoDB, and hands pages on to the
// parse and summarize queues.
// See shared/aws/handlers and shared/stage/fetch.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/lambdalog"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
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
	h, err := handlers.NewFetcherFunction(ctx, s, c, log, os.Stdout)
	if err != nil {
		stack.Fatal(log, "fetcher", err)
	}
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		lh.Start(ctx)
		return h.Handle(ctx, ev)
	})
}
