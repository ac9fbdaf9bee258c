package handlers

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Queue is an SQS-triggered function over one stage.
type Queue struct {
	Batch   sqsbatch.Processor
	Metrics *emf.Recorder
	// Usage, if set, writes what each invocation asked of AWS.
	Usage *awsmeter.Reporter
}

// Queued turns the builder of a Queue into a builder of its handler,
// for Start.
func Queued(build func(context.Context, Env) (*Queue, error)) func(context.Context, Env) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	return func(ctx context.Context, e Env) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
		q, err := build(ctx, e)
		if err != nil {
			return nil, err
		}
		return q.Handle, nil
	}
}

// Handle processes one SQS batch.
func (h *Queue) Handle(ctx context.Context, ev events.SQSEvent) (resp events.SQSEventResponse, err error) {
	inv := h.Usage.Start(ctx)
	inv.Batch(ev)
	defer func() { inv.End(len(resp.BatchItemFailures), err) }()
	defer h.Metrics.Flush()
	return h.Batch.Process(ctx, ev)
}

// RecordCrawlMetrics adds a recorded crawl to the metrics: pages by
// outcome, whether it failed (1) or not (0), body bytes, and each
// request's latency. Failed's average over a period is the share of
// crawls that failed: the stack's error-rate alarm, which needs no
// metric math.
func RecordCrawlMetrics(m *emf.Recorder, cr crawl.Crawl) {
	m.Add("Pages", emf.Count, 1, "Outcome", cr.Log.ExitCode.String())
	failed := 0.0
	if cr.Log.ExitCode.Failed() {
		failed = 1
	}
	m.Add("Failed", emf.Count, failed)
	if cr.File != nil && cr.File.FileSize != nil {
		m.Add("Bytes", emf.Bytes, float64(*cr.File.FileSize))
	}
	for _, r := range cr.Requests {
		if r.DurationMS != nil {
			m.Add("FetchLatency", emf.Milliseconds, float64(*r.DurationMS))
		}
	}
}

// NewStage returns the handler of a function over a stage's typed
// Handle: each record's task decoded and handled, and each record's
// outcome counted in the Messages metric.
func NewStage[T any](handle func(context.Context, T) error, batch sqsbatch.Processor, metrics *emf.Recorder) *Queue {
	batch.Handle = crawl.TaskHandler(handle)
	batch.OnOutcome = func(o string) { metrics.Add("Messages", emf.Count, 1, "Outcome", o) }
	return &Queue{Batch: batch, Metrics: metrics}
}

// Visibility adapts an SQS queue to sqsbatch.Visibility.
type Visibility struct {
	Queue interface {
		ChangeVisibility(ctx context.Context, m sqsq.Message, d time.Duration) error
	}
}

// ChangeVisibility implements sqsbatch.Visibility.
func (v Visibility) ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error {
	return v.Queue.ChangeVisibility(ctx, sqsq.Message{ReceiptHandle: receiptHandle}, d)
}

// Deferred is the functions' sqsbatch.Processor.Deferred: an error that
// asks for its message to be handled again later, not retried (a Later
// method: the gate's busy host, dynamo.BusyError; a first generation
// another crawl is opening, dynamo.PendingError), says after how long,
// a second at least.
func Deferred(err error) (time.Duration, bool) {
	var l interface{ Later() time.Duration }
	if errors.As(err, &l) {
		return max(l.Later(), time.Second), true
	}
	return 0, false
}
