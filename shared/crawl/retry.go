package crawl

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// RetryPolicy is the one rule both homes apply to a message whose
// handler failed (the SQS batch runner on AWS, the in-process runner on
// one machine): a transient failure is retried after an exponential
// backoff until MaxReceives tries, then dead-lettered with its last
// error; any other failure is bad input, dead-lettered at once with its
// reason. Nothing is dropped.
type RetryPolicy struct {
	// MaxReceives is how many tries a transiently failing message gets.
	MaxReceives int
	// Base is the wait after the first failed try; each further try
	// doubles it, up to Max.
	Base, Max time.Duration
}

// DefaultMaxReceives is the tries a message gets in either home; the
// SQS queues' maxReceiveCount (template.yaml) stays above it, as the
// backstop for a handler that crashes its process.
const DefaultMaxReceives = 5

// RetryAction is what becomes of a failed message.
type RetryAction int

// The retry actions.
const (
	Retry      RetryAction = iota // hand it out again after Verdict.Delay
	DeadLetter                    // move it to the dead-letter queue with Verdict.Reason
)

// Verdict is a RetryPolicy's decision on one failed try.
type Verdict struct {
	Action RetryAction
	Delay  time.Duration // with Retry: how long the message stays hidden
	Reason string        // with DeadLetter: why, for the dead letter's record
}

// Decide rules on the tries-th try (counted from 1) of a message whose
// handler returned err.
func (p RetryPolicy) Decide(err error, tries int) Verdict {
	maxTries := p.MaxReceives
	if maxTries <= 0 {
		maxTries = DefaultMaxReceives
	}
	switch {
	case !IsTransient(err):
		return Verdict{Action: DeadLetter, Reason: err.Error()}
	case tries >= maxTries:
		return Verdict{Action: DeadLetter, Reason: fmt.Sprintf("failed %d times, last: %v", tries, err)}
	}
	d := p.Base
	for i := 0; i < tries && d < p.Max; i++ {
		d *= 2
	}
	return Verdict{Action: Retry, Delay: min(d, p.Max)}
}

// TaskHandler adapts a stage's typed Handle to a message handler: a body
// that is not the task's JSON is bad input, dead-lettered with the
// reason by either home's runner.
func TaskHandler[T any](h func(context.Context, T) error) func(context.Context, []byte) error {
	return func(ctx context.Context, b []byte) error {
		var t T
		if err := json.Unmarshal(b, &t); err != nil {
			return E("decode message", KindInvalid, err)
		}
		return h(ctx, t)
	}
}

// Sleep waits d, or until ctx ends, and then returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
