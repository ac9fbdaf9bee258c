// Command parser is the parser Lambda function: it reads fetched HTML
// bodies from S3, writes the parsed documents back, enqueues the links
// it finds and hands each crawl on to the summarize queue. See
// shared/parse.
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
	"github.com/serverless-crawler/crawler/shared/parse"
	"github.com/serverless-crawler/crawler/shared/s3blob"
	"github.com/serverless-crawler/crawler/shared/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/sqsq"
	"github.com/serverless-crawler/crawler/shared/stack"
)

func main() {
	ctx := context.Background()
	log, lh := lambdalog.New(os.Stderr, 0, "parser")
	s, err := stack.FromEnv(os.Getenv, "CRAWL_LOG_TABLE", "CONTROL_TABLE", "BUCKET", "ENQUEUE_QUEUE_URL",
		"SUMMARIZE_QUEUE_URL", "DEAD_LETTER_QUEUE_URL")
	if err != nil {
		stack.Fatal(log, "settings", err)
	}
	log, lh = lambdalog.New(os.Stderr, s.LogLevel, "parser")
	c, err := stack.NewClients(ctx)
	if err != nil {
		stack.Fatal(log, "AWS clients", err)
	}
	db := dynamo.New(c.DynamoDB, s.Tables)
	if _, err := s.RegisterAgent(ctx, db, "parser"); err != nil {
		stack.Fatal(log, "agent", err)
	}
	stage := parse.New(s3blob.New(c.S3, s.Bucket), db, sqsq.New(c.SQS, s.EnqueueQueue), sqsq.New(c.SQS, s.SummarizeQueue),
		parse.Config{}, log)
	h := handlers.NewStage(stage.Handle, sqsbatch.Processor{
		Queue: "parse", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue), Visibility: handlers.Visibility{Queue: sqsq.New(c.SQS, s.ParseQueue)},
		Concurrency: 4, Log: log,
	}, emf.New(os.Stdout, "parser"))
	lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		lh.Start(ctx)
		return h.Handle(ctx, ev)
	})
}
