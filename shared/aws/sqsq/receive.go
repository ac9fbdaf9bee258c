package sqsq

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Message is a message received from a queue.
type Message struct {
	ID            string
	ReceiptHandle string // names this receipt: Delete and ChangeVisibility need it
	Body          []byte
	ReceiveCount  int               // 1 on the first receipt (ApproximateReceiveCount); 0 if SQS did not say
	SentAt        time.Time         // when SQS took the message (SentTimestamp); the zero time if SQS did not say
	Attributes    map[string]string // the message attributes of type String or Number
}

// Receive takes up to n messages (1 to MaxBatch), waiting up to wait
// (rounded up to whole seconds, at most MaxWait) for the first one. The
// messages stay hidden for the queue's visibility timeout: one not
// deleted by then is received again, with a higher ReceiveCount.
func (q *Queue) Receive(ctx context.Context, n int, wait time.Duration) ([]Message, error) {
	n = min(MaxBatch, max(1, n))
	q.counts.Receives.Add(1)
	out, err := q.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:            aws.String(q.url),
		MaxNumberOfMessages: int32(n),
		WaitTimeSeconds:     seconds(wait, MaxWait),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount,
			types.MessageSystemAttributeNameSentTimestamp},
		MessageAttributeNames: []string{"All"},
	})
	if err != nil {
		q.counts.bill(0)
		return nil, fmt.Errorf("receive from %s: %w", q.name, err)
	}
	msgs := make([]Message, len(out.Messages))
	size := 0
	for i, m := range out.Messages {
		msgs[i] = Message{
			ID:            aws.ToString(m.MessageId),
			ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body:          []byte(aws.ToString(m.Body)),
		}
		size += len(msgs[i].Body)
		if s, ok := m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)]; ok {
			if msgs[i].ReceiveCount, err = strconv.Atoi(s); err != nil {
				return nil, fmt.Errorf("receive from %s: message %s: receive count %q: %w", q.name, msgs[i].ID, s, err)
			}
		}
		if ms, err := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil && ms > 0 {
			msgs[i].SentAt = time.UnixMilli(ms)
		}
		for k, v := range m.MessageAttributes {
			if v.StringValue == nil {
				continue // a Binary attribute; the crawler sends none
			}
			if msgs[i].Attributes == nil {
				msgs[i].Attributes = make(map[string]string, len(m.MessageAttributes))
			}
			msgs[i].Attributes[k] = *v.StringValue
			size += len(k) + len(aws.ToString(v.DataType)) + len(*v.StringValue)
		}
	}
	q.counts.bill(size)
	q.counts.Received.Add(int64(len(msgs)))
	if len(msgs) == 0 {
		q.counts.EmptyReceives.Add(1)
	}
	return msgs, nil
}

// Delete deletes received messages (they have been handled), in batch
// calls of at most MaxBatch. An error says how many were not deleted and
// why; they will be received again.
func (q *Queue) Delete(ctx context.Context, msgs ...Message) error {
	deleted := 0
	for start := 0; start < len(msgs); start += MaxBatch {
		batch := msgs[start:min(start+MaxBatch, len(msgs))]
		n, err := q.retryBatch(ctx, len(batch), func(ids []int) ([]string, []types.BatchResultErrorEntry, error) {
			in := &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.url), Entries: make([]types.DeleteMessageBatchRequestEntry, len(ids))}
			for j, i := range ids {
				in.Entries[j] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(batch[i].ReceiptHandle)}
			}
			q.counts.Deletes.Add(1)
			q.counts.bill(0)
			out, err := q.api.DeleteMessageBatch(ctx, in)
			if err != nil {
				return nil, nil, err
			}
			ok := make([]string, len(out.Successful))
			for j, e := range out.Successful {
				ok[j] = aws.ToString(e.Id)
			}
			q.counts.Deleted.Add(int64(len(ok)))
			return ok, out.Failed, nil
		})
		deleted += n
		if err != nil {
			return wrapKind(err, "delete from %s: %d of %d messages not deleted", q.name, len(msgs)-deleted, len(msgs))
		}
	}
	return nil
}

// ChangeVisibility hides a received message for d from now (rounded up
// to whole seconds, at most MaxVisibility): 0 makes it visible at once, a
// longer lease keeps it while it is still being handled.
func (q *Queue) ChangeVisibility(ctx context.Context, m Message, d time.Duration) error {
	q.counts.VisibilityChanges.Add(1)
	q.counts.bill(0)
	if _, err := q.api.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          aws.String(q.url),
		ReceiptHandle:     aws.String(m.ReceiptHandle),
		VisibilityTimeout: seconds(d, MaxVisibility),
	}); err != nil {
		return fmt.Errorf("change visibility of message %s in %s: %w", m.ID, q.name, err)
	}
	return nil
}
