// Command summarizer is the summarizer Lambda function: it folds each
// crawl into the summary tables of seed 002 (generations, duplicates,
// descriptions, links) in DynamoDB, with text piles in S3. See
// shared/summarize.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/serverless-crawler/crawler/shared/dynamo"
	"github.com/serverless-crawler/crawler/shared/emf"
	"github.com/serverless-crawler/crawler/shared/handlers"
	"github.com/serverless-crawler/crawler/shared/lambdalog"
	"github.com/serverless-crawler/crawler/shared/s3blob"
	"github.com/serverless-crawler/crawler/shared/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/sqsq"
	"github.com/serverless-crawler/crawler/shared/stack"
	"github.com/serverless-crawler/crawler/shared/summarize"
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
	blobs := s3blob.New(c.S3, s.Bucket)
	db := dynamo.New(c.DynamoDB, s.Tables)
	db.SetBlobs(blobs)
	if _, err := s.RegisterAgent(ctx, db, "summarizer"); err != nil {
		stack.Fatal(log, "agent", err)
	}
	stage := summarize.New(db, blobs, summarize.Config{}, log)
	h := handlers.NewStage(stage.Handle, sqsbatch.Processor{
		Queue: "summarize", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue),
		Visibility: handlers.Visibility{Queue: sqsq.New(c.SQS, s.SummarizeQueue)}, Log: log,
	}, emf.New(os.Stdout, "summarizer"))
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		lh.Start(ctx)
		return h.Handle(ctx, ev)
	})
}
