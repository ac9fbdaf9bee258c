// Command summarizer is the summarizer Lambda function: it folds
// each crawl into the summary tables of seed 002 (generations,
// duplicates, descriptions, links) in DynamoDB, with text piles in S3.
// See shared/aws/handlers and shared/stage/summarize.
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
	log, lh := lambdalog.New(os.Stderr, 0, "summarizer")
	s, err := stack.FromEnv(os.Getenv, "CRAWL_LOG_TABLE", "GENERATIONS_TABLE", "CONTROL_TABLE", "BUCKET",
		"SUMMARIZE_QUEUE_URL", "DEAD_LETTER_QUEUE_URL")
	if err != nil {
		stack.Fatal(log, "settings", err)
	}
	log, lh = lambdalog.New(os.Stderr, s.LogLevel, "summarizer")
	c, err := stack.NewClients(ctx)
	if err != nil {
		stack.Fatal(log, "AWS clients", err)
	}
	h, err := handlers.NewSummarizerFunction(ctx, s, c, log, os.Stdout)
	if err != nil {
		stack.Fatal(log, "summarizer", err)
	}
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		lh.Start(ctx)
		return h.Handle(ctx, ev)
	})
}
