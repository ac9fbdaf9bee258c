// Command fetcher is the fetcher Lambda function.
//
// It is not deployable yet: the AWS adapters (DynamoDB, SQS, S3) that
// let it run the shared fetcher stage arrive with issue #5. Until then it
// answers every invocation with an error, so that nothing deployed by
// mistake acknowledges messages it did not handle.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

func main() {
	log := lambdacontext.NewLogger()
	lambda.Start(func(ctx context.Context, ev json.RawMessage) error {
		log.ErrorContext(ctx, "the fetcher function is not wired to AWS adapters yet", slog.Int("event_bytes", len(ev)))
		return errors.New("fetcher: not wired to AWS adapters yet (issue #5)")
	})
}
