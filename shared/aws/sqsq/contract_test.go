package sqsq

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// TestContract runs the adapter contract against SQS on the emulator,
// each case on a fresh queue whose visibility timeout the case asks for.
func TestContract(t *testing.T) {
	contract.Queue(t, func(t *testing.T, visibility time.Duration) contract.MessageQueue {
		return contractQueue{testQueue(t, map[string]string{"VisibilityTimeout": strconv.Itoa(int(visibility / time.Second))})}
	})
}

// contractQueue is a Queue as the contract sees queues: Receive does not
// wait (a short poll), and a message is named by its receipt handle.
type contractQueue struct{ *Queue }

func (q contractQueue) Receive(ctx context.Context, max int) ([]contract.Message, error) {
	ms, err := q.Queue.Receive(ctx, max, 0)
	out := make([]contract.Message, len(ms))
	for i, m := range ms {
		out[i] = contract.Message{ID: m.ID, Handle: m.ReceiptHandle, Body: m.Body, ReceiveCount: m.ReceiveCount}
	}
	return out, err
}

// AtLeastOnce marks SQS's delivery: a message may come more than once.
func (contractQueue) AtLeastOnce() {}

// Delete deletes the messages. A delete that SQS refuses as
// ReceiptHandleIsInvalid is taken as done: that is ministack 1.5.33
// refusing the SDK's retry of a delete whose first answer was lost on
// the way (it honoured the first), where AWS accepts a stale handle.
// (TestDeleteStaleReceipt checks that a bad handle is reported.)
func (q contractQueue) Delete(ctx context.Context, msgs ...contract.Message) error {
	ms := make([]Message, len(msgs))
	for i, m := range msgs {
		ms[i] = Message{ID: m.ID, ReceiptHandle: m.Handle}
	}
	err := q.Queue.Delete(ctx, ms...)
	if err != nil && strings.Contains(err.Error(), "ReceiptHandleIsInvalid") {
		return nil
	}
	return err
}

func (q contractQueue) ChangeVisibility(ctx context.Context, m contract.Message, d time.Duration) error {
	return q.Queue.ChangeVisibility(ctx, Message{ID: m.ID, ReceiptHandle: m.Handle}, d)
}

func (q contractQueue) Pending(ctx context.Context) (int, error) {
	visible, inFlight, delayed, err := q.Depth(ctx)
	return visible + inFlight + delayed, err
}
