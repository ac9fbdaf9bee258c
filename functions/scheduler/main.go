// Command scheduler is the scheduler Lambda function: triggered by the
// enqueue queue, it admits enqueue events (what users send, and the links
// the parser finds) as candidates and releases due ones to the fetch
// queue; triggered by the recrawl schedule, it releases what has come due
// and re-releases fetches that were lost.
// See shared/aws/handlers and shared/stage/schedule.
package main

import (
	"context"
	"encoding/json"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/lambdalog"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
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
	h, err := handlers.NewSchedulerFunction(ctx, s, c, log, os.Stdout)
	if err != nil {
		stack.Fatal(log, "scheduler", err)
	}
	lambda.Start(func(ctx context.Context, ev json.RawMessage) (any, error) {
		lh.Start(ctx)
		return h.Handle(ctx, ev)
	})
}
