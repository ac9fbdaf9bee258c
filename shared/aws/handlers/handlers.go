// Package handlers is what every Lambda function has around its stage:
// Start, which reads the settings once, builds the clients and the
// handler once and serves invocations; Queue, an SQS-triggered handler
// over a batch runner; and the metrics of a crawl. Each function's own
// builder (handlers/scheduler, fetcher, parser, summarizer) builds only
// its stage and the adapters it needs, so each binary links only its
// own stage.
package handlers

import (
	"context"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/serverless-crawler/crawler/shared/aws/stack"
)

// Env is what a function's builder gets, once per execution
// environment: the stack's settings, the AWS clients, the logger, and
// where metrics and usage records go (stdout on Lambda).
type Env struct {
	Settings stack.Settings
	Clients  stack.Clients
	Log      *slog.Logger
	Metrics  io.Writer
}

// Logger is a function's logger: lambdacontext's records on stdout
// (JSON when the function's LoggingConfig says so, at its application
// log level), each with the invocation's requestId when logged with the
// invocation's context, and the function's name.
func Logger(function string) *slog.Logger {
	return slog.New(lambdacontext.NewLogHandler()).With("function", function)
}

// Start runs a Lambda function: it reads the settings from the
// environment (need names the variables the function cannot do
// without), builds the clients (DynamoDB, SQS, and those of clients)
// and, with build, the handler, then
// serves invocations, logging through Logger. A function that cannot start logs
// why and exits: Lambda reports the init error and the messages stay in
// their queue.
func Start[E, R any](function string, need []string, build func(context.Context, Env) (func(context.Context, E) (R, error), error), clients ...stack.ClientOption) {
	ctx := context.Background()
	log := Logger(function)
	fatal := func(what string, err error) {
		log.Error("cannot start: "+what, "err", err)
		os.Exit(1)
	}
	s, err := stack.FromEnv(os.Getenv, need...)
	if err != nil {
		fatal("settings", err)
	}
	c, err := stack.NewLambdaClients(s, clients...)
	if err != nil {
		fatal("AWS clients", err)
	}
	h, err := build(ctx, Env{Settings: s, Clients: c, Log: log, Metrics: os.Stdout})
	if err != nil {
		fatal(function, err)
	}
	lambda.Start(h)
}
