package stack

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// WorkQueues are the outputs naming the queues that hold a crawl's work
// in progress, in the order the work flows.
var WorkQueues = []string{"EnqueueQueueUrl", "FetchQueueUrl", "ParseQueueUrl", "SummarizeQueueUrl"}

// DeadLetterQueues are the outputs naming their dead-letter queues.
var DeadLetterQueues = []string{"EnqueueDeadLetterQueueUrl", "FetchDeadLetterQueueUrl", "ParseDeadLetterQueueUrl", "SummarizeDeadLetterQueueUrl"}

// Depther reports how many messages a queue holds.
type Depther interface {
	Depth(ctx context.Context) (visible, inFlight, delayed int, err error)
}

// NamedQueue is a queue and the name to report it by.
type NamedQueue struct {
	Name  string
	Queue Depther
}

// Busy describes the queues that hold messages (visible, in flight or
// delayed), "" when none does.
func Busy(ctx context.Context, qs []NamedQueue) (string, error) {
	var busy []string
	for _, q := range qs {
		v, f, d, err := q.Queue.Depth(ctx)
		if err != nil {
			return "", fmt.Errorf("depth of %s: %w", q.Name, err)
		}
		if v+f+d > 0 {
			busy = append(busy, fmt.Sprintf("%s: %d visible, %d in flight, %d delayed", q.Name, v, f, d))
		}
	}
	return strings.Join(busy, "; "), nil
}

// WaitSettled waits until a crawl has settled: every queue empty (SQS
// counts are approximate, so quiet times in a row, every apart). It
// calls progress with each busy description; it returns ctx's error,
// with the last description, when ctx ends first. A crawl that has
// settled may start again when the schedule releases recrawls.
func WaitSettled(ctx context.Context, qs []NamedQueue, every time.Duration, quiet int, progress func(busy string)) error {
	last := "not checked yet"
	for n := 0; n < quiet; {
		select {
		case <-ctx.Done():
			return fmt.Errorf("not settled (%s): %w", last, ctx.Err())
		case <-time.After(every):
		}
		busy, err := Busy(ctx, qs)
		if err != nil {
			return err
		}
		if busy == "" {
			n++
			continue
		}
		n, last = 0, busy
		if progress != nil {
			progress(busy)
		}
	}
	return nil
}
