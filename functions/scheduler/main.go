// Command scheduler is the scheduler Lambda function. Triggered by the
// enqueue queue, it admits enqueue events (what users send, and the
// links the parser finds) as candidates and releases due ones to the
// fetch queue; triggered by the recrawl schedule, it releases what has
// come due and re-releases fetches that were lost. See shared/schedule.
package main

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/serverless-crawler/crawler/shared/dynamo"
	"github.com/serverless-crawler/crawler/shared/emf"
	"github.com/serverless-crawler/crawler/shared/handlers"
	"github.com/serverless-crawler/crawler/shared/lambdalog"
	"github.com/serverless-crawler/crawler/shared/schedule"
	"github.com/serverless-crawler/crawler/shared/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/sqsq"
	"github.com/serverless-crawler/crawler/shared/stack"
)

func main() {
	ctx := context.Background()
	log, lh := lambdalog.New(os.Stderr, 0, "scheduler")
	s, err := stack.FromEnv(os.Getenv, "CANDIDATES_TABLE", "CONTROL_TABLE", "ENQUEUE_QUEUE_URL", "FETCH_QUEUE_URL",
		"DEAD_LETTER_QUEUE_URL")
	if err != nil {
		stack.Fatal(log, "settings", err)
	}
	log, lh = lambdalog.New(os.Stderr, s.LogLevel, "scheduler")
	c, err := stack.NewClients(ctx)
	if err != nil {
		stack.Fatal(log, "AWS clients", err)
	}
	db := dynamo.New(c.DynamoDB, s.Tables)
	if _, err := s.RegisterAgent(ctx, db, "scheduler"); err != nil {
		stack.Fatal(log, "agent", err)
	}
	fetchQ := handlers.SpreadingSender{Queue: sqsq.New(c.SQS, s.FetchQueue), Delay: s.Delay}
	h := &handlers.Scheduler{
		Sched:  schedule.New(db, fetchQ, schedule.Policy{MaxDepth: s.MaxDepth}, log),
		Status: db,
		Batch: sqsbatch.Processor{Queue: "enqueue", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue),
			Visibility: handlers.Visibility{Queue: sqsq.New(c.SQS, s.EnqueueQueue)}, Log: log},
		Metrics:      emf.New(os.Stdout, "scheduler"),
		Log:          log,
		ReleaseLimit: 1000,
		// Longer than the longest spread delay (15 min) plus a fetch.
		StaleAfter: 30 * time.Minute,
	}
	h.Init()
	lambda.Start(func(ctx context.Context, ev json.RawMessage) (any, error) {
		lh.Start(ctx)
		return h.Handle(ctx, ev)
	})
}
