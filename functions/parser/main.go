// Command parser is the parser Lambda function: it reads fetched
// HTML bodies from S3, writes the parsed documents back, enqueues the
// links it finds and hands each crawl on to the summarize queue.
// See shared/aws/handlers and shared/stage/parse.
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
	log, lh := lambdalog.New(os.Stderr, 0, "parser")
	s, err := stack.FromEnv(os.Getenv, "CRAWL_LOG_TABLE", "CONTROL_TABLE", "BUCKET", "ENQUEUE_QUEUE_URL",
		"PARSE_QUEUE_URL", "SUMMARIZE_QUEUE_URL", "DEAD_LETTER_QUEUE_URL")
	if err != nil {
		stack.Fatal(log, "settings", err)
	}
	log, lh = lambdalog.New(os.Stderr, s.LogLevel, "parser")
	c, err := stack.NewClients(ctx)
	if err != nil {
		stack.Fatal(log, "AWS clients", err)
	}
	h, err := handlers.NewParserFunction(ctx, s, c, log, os.Stdout)
	if err != nil {
		stack.Fatal(log, "parser", err)
	}
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		lh.Start(ctx)
		return h.Handle(ctx, ev)
	})
}
