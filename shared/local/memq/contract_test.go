package memq

import (
	"context"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// TestContract runs the queue contract against the in-process queue,
// as against the SQLite queue and SQS.
func TestContract(t *testing.T) {
	contract.Queue(t, func(t *testing.T, visibility time.Duration) contract.MessageQueue {
		return queue{q: New("fetch"), lease: visibility}
	})
}

type queue struct {
	q     *Queue
	lease time.Duration
}

func (q queue) Send(_ context.Context, bodies ...[]byte) error { return q.q.Send(bodies...) }

func (q queue) Receive(_ context.Context, max int) ([]contract.Message, error) {
	ms := q.q.Receive(max, q.lease)
	out := make([]contract.Message, len(ms))
	for i, m := range ms {
		out[i] = contract.Message{ID: m.ID, Handle: m.ID, Body: m.Body, ReceiveCount: m.ReceiveCount}
	}
	return out, nil
}

func (q queue) Delete(_ context.Context, msgs ...contract.Message) error {
	for _, m := range msgs {
		q.q.Delete(m.Handle)
	}
	return nil
}

func (q queue) ChangeVisibility(_ context.Context, m contract.Message, d time.Duration) error {
	q.q.Retry(m.Handle, d)
	return nil
}

func (q queue) Pending(context.Context) (int, error) { return q.q.Pending(), nil }
