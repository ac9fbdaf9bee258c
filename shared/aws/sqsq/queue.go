// Package sqsq is the SQS home of the crawler's queues: the same send,
// receive, delete and lease operations the SQLite adapter provides on one
// machine, over one Amazon SQS standard queue.
//
// Sends are batched (at most 10 messages and 256 KiB of payload per
// call); batch entries that fail through no fault of the sender are
// retried, and whatever still fails is returned as an error that says how
// many messages were not sent and why. Every API call is counted (see
// Counts) for the cost model.
package sqsq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// API is the part of the SQS client the queue uses.
type API interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var _ API = (*sqs.Client)(nil)

// SQS limits the queue works within.
const (
	MaxBatch      = 10               // messages per batch call
	MaxPayload    = 256 << 10        // bytes per message, and per batch call (SQS allows 1 MiB since 2025; 256 KiB works everywhere)
	MaxDelay      = 15 * time.Minute // longest DelaySeconds
	MaxWait       = 20 * time.Second // longest long poll
	MaxVisibility = 12 * time.Hour   // longest visibility timeout
	billingChunk  = 64 << 10         // SQS bills one request per started 64 KiB of payload
)

// Queue is one SQS queue.
type Queue struct {
	api      API
	url      string
	name     string
	counts   Counts
	attempts int           // tries per batch entry that fails through no fault of ours
	backoff  time.Duration // wait before the second try; doubles after
	maxBody  int           // the largest body sent: MaxPayload, or less (ReadLimit)
}

// New returns the queue at queueURL.
func New(api API, queueURL string) *Queue {
	name := queueURL
	if i := strings.LastIndexByte(queueURL, '/'); i >= 0 {
		name = queueURL[i+1:]
	}
	return &Queue{api: api, url: queueURL, name: name, attempts: 4, backoff: 100 * time.Millisecond, maxBody: MaxPayload}
}

// URL returns the queue's URL.
func (q *Queue) URL() string { return q.url }

// Counts returns the queue's request counters.
func (q *Queue) Counts() *Counts { return &q.counts }

// Counts tallies the SQS API calls a Queue made (each call once, however
// often the SDK retried it underneath) and the messages they carried.
type Counts struct {
	Sends             atomic.Int64 // SendMessageBatch and SendMessage calls
	Receives          atomic.Int64 // ReceiveMessage calls
	EmptyReceives     atomic.Int64 // ReceiveMessage calls that returned no message
	Deletes           atomic.Int64 // DeleteMessageBatch calls
	VisibilityChanges atomic.Int64 // ChangeMessageVisibility calls
	AttributeReads    atomic.Int64 // GetQueueAttributes calls
	Billed            atomic.Int64 // requests as SQS bills them: one per started 64 KiB of each call's payload

	Sent     atomic.Int64 // messages accepted by SQS
	Received atomic.Int64 // messages received (a redelivery counts again)
	Deleted  atomic.Int64 // messages deleted
}

// Calls returns the number of API calls made.
func (c *Counts) Calls() int64 {
	return c.Sends.Load() + c.Receives.Load() + c.Deletes.Load() + c.VisibilityChanges.Load() + c.AttributeReads.Load()
}

// String formats the counters for a log line.
func (c *Counts) String() string {
	return fmt.Sprintf("sends=%d receives=%d (empty %d) deletes=%d visibility=%d attributes=%d billed=%d sent=%d received=%d deleted=%d",
		c.Sends.Load(), c.Receives.Load(), c.EmptyReceives.Load(), c.Deletes.Load(), c.VisibilityChanges.Load(),
		c.AttributeReads.Load(), c.Billed.Load(), c.Sent.Load(), c.Received.Load(), c.Deleted.Load())
}

// bill counts one call carrying payload bytes.
func (c *Counts) bill(payload int) {
	n := int64(1)
	if payload > billingChunk {
		n = int64((payload + billingChunk - 1) / billingChunk)
	}
	c.Billed.Add(n)
}

// Depth returns the approximate numbers of messages in the queue that are
// visible, in flight (received, not yet deleted) and delayed.
func (q *Queue) Depth(ctx context.Context) (visible, inFlight, delayed int, err error) {
	q.counts.AttributeReads.Add(1)
	q.counts.bill(0)
	out, err := q.api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	})
	if err != nil {
		return 0, 0, 0, fmt.Errorf("depth of %s: %w", q.name, err)
	}
	var n [3]int
	for i, a := range []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
	} {
		s, ok := out.Attributes[string(a)]
		if !ok {
			return 0, 0, 0, fmt.Errorf("depth of %s: no %s in the answer", q.name, a)
		}
		if n[i], err = strconv.Atoi(s); err != nil {
			return 0, 0, 0, fmt.Errorf("depth of %s: %s is %q: %w", q.name, a, s, err)
		}
	}
	return n[0], n[1], n[2], nil
}

// ReadLimit reads the queue's MaximumMessageSize and, from then on,
// refuses before sending a body larger than it (as SQS would, and as an
// emulator may not). It returns the limit in force: the smaller of it
// and MaxPayload. A command that sends what a user wrote calls it once.
func (q *Queue) ReadLimit(ctx context.Context) (int, error) {
	q.counts.AttributeReads.Add(1)
	q.counts.bill(0)
	out, err := q.api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       aws.String(q.url),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameMaximumMessageSize},
	})
	if err != nil {
		return 0, fmt.Errorf("read the message size limit of %s: %w", q.name, err)
	}
	if s, ok := out.Attributes[string(types.QueueAttributeNameMaximumMessageSize)]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("read the message size limit of %s: MaximumMessageSize is %q", q.name, s)
		}
		q.maxBody = min(n, MaxPayload)
	}
	return q.maxBody, nil
}

// seconds rounds d up to whole seconds within [0, max].
func seconds(d, max time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	if d > max {
		d = max
	}
	return int32((d + time.Second - 1) / time.Second)
}
