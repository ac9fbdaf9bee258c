package handlers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Every invocation of a queue function writes one usage record (the
// first one after its environment's init record) with its batch, its
// failures and its duration.
func TestQueueWritesUsageRecords(t *testing.T) {
	var out bytes.Buffer
	q := &queue{}
	h := handlers.NewStage(func(ctx context.Context, task struct {
		URL string `json:"url"`
	}) error {
		if task.URL == "fail" {
			return crawl.E("test", crawl.KindTransient, errors.New("try later"))
		}
		return nil
	}, sqsbatch.Processor{Queue: "parse", DeadLetters: q, Log: slog.New(slog.DiscardHandler)}, emf.New(io.Discard, "parser"))
	h.Usage = awsmeter.NewReporter(awsmeter.New(), &out, "parser", 256)

	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "r1"})
	resp, err := h.Handle(ctx, sqsEvent(`{"url":"ok"}`, `{"url":"fail"}`))
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("Handle: %+v, %v", resp, err)
	}
	var recs []awsmeter.Record
	dec := json.NewDecoder(&out)
	for dec.More() {
		var r awsmeter.Record
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 2 || recs[0].Phase != awsmeter.PhaseInit || recs[1].Phase != awsmeter.PhaseInvoke {
		t.Fatalf("records %+v, want init then invoke", recs)
	}
	inv := recs[1]
	if inv.Function != "parser" || inv.RequestID != "r1" || inv.MemoryMB != 256 || inv.Messages != 2 ||
		inv.MessageBytes != len(`{"url":"ok"}{"url":"fail"}`) || inv.Failed != 1 || inv.DurationMS <= 0 {
		t.Errorf("invoke record %+v", inv)
	}
}
