// Package sqsbatch runs a stage's handler over an SQS batch delivered to
// Lambda and reports partial batch failures (ReportBatchItemFailures):
//
//   - handled: acknowledged (left out of the failures, so SQS deletes it);
//   - deferred (the host is busy elsewhere): sent again with a delay, then
//     acknowledged, so waiting costs neither Lambda time nor a receive;
//   - transient failure: reported for retry, after a backoff set on its
//     visibility; after Retry.MaxReceives tries it is dead-lettered;
//   - permanent failure (bad input): moved to the dead-letter queue with
//     the reason as message attributes, logged, and acknowledged.
//
// What the handlers send through Gather goes out once the whole batch is
// handled, in SendMessageBatch calls per queue (outbox.go); a handled
// record whose messages could not be sent is reported for retry.
//
// SQS's own redrive (maxReceiveCount) stays as the backstop for a
// handler that crashes the process; only it loses the reason.
package sqsbatch

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// MaxReasonBytes is the most of a dead letter's reason its "reason"
// attribute holds (cut at a character's start). An error's text can
// carry URLs of 8 KiB, and the attributes count toward the message's
// size; the log line has it all.
const MaxReasonBytes = 2 << 10

// DeadLetters is the dead-letter queue of the batch's source queue.
type DeadLetters interface {
	SendWithAttributes(ctx context.Context, body []byte, attrs map[string]string) error
}

// Requeue sends messages again, each with its own delay: the source
// queue itself. A batch's deferred messages are sent together, once
// every handler has returned.
type Requeue interface {
	SendEach(ctx context.Context, msgs ...sqsq.Delayed) error
}

// Visibility sets how long a failed message stays hidden before SQS
// delivers it again.
type Visibility interface {
	ChangeVisibility(ctx context.Context, receiptHandle string, d time.Duration) error
}

// Processor handles SQS batches for one queue.
type Processor struct {
	Queue  string // the source queue's name, for logs and dead letters
	Handle func(ctx context.Context, body []byte) error
	// HandleSent, if set, is called instead of Handle and is also told
	// when SQS took the message (its SentTimestamp; the zero time when
	// SQS did not say). A redelivery carries the first send's time.
	HandleSent  func(ctx context.Context, body []byte, sent time.Time) error
	DeadLetters DeadLetters
	Requeue     Requeue    // nil: deferred messages are retried like transient failures
	Visibility  Visibility // nil: failed messages wait out the queue's visibility timeout
	// Deferred reports whether err asks for the message to be handled
	// later, and when.
	Deferred func(err error) (time.Duration, bool)
	// Concurrency is how many records are handled at once (default 1).
	Concurrency int
	// Retry decides between a retry and the dead-letter queue (its
	// MaxReceives stays below the queue's maxReceiveCount). The zero
	// value is DefaultRetry.
	Retry crawl.RetryPolicy
	Log   *slog.Logger
	// OnOutcome, if set, is called once per record with what happened:
	// "ok", "deferred", "retry" or "dead-letter".
	OnOutcome func(outcome string)
	// Members, if set, is told of each record before its handler starts
	// (Enter) and after it ends (Leave), and of every record a first
	// round of handlers will take before any of them starts. A
	// warc.Packer then writes the bodies of a batch's records in one
	// file: a handler that entered from its own goroutine could find its
	// body ready before its peers had entered, and have it written alone.
	Members Members
	// ReadAhead, if set, is given every record's body before any handler
	// starts: the parser reads the batch's bodies from S3 together
	// (warc.ReadAhead).
	ReadAhead func(ctx context.Context, bodies [][]byte)
}

// Members is told which records are being handled (warc.Packer).
type Members interface {
	Enter()
	Leave()
}

// DefaultRetry is the functions' retry policy: a try every 2, 4, 8 and
// 16 s (set on the message's visibility), then the dead-letter queue.
var DefaultRetry = crawl.RetryPolicy{MaxReceives: crawl.DefaultMaxReceives, Base: time.Second, Max: 256 * time.Second}

// stopBefore is how long before the invocation's deadline the handlers
// are stopped: a tenth of the time left, between 1 and 5 s.
func stopBefore(left time.Duration) time.Duration {
	return max(time.Second, min(5*time.Second, left/10))
}

// Process handles a batch and returns the records to retry. Handlers
// still running shortly before ctx's deadline (Lambda's timeout) are
// stopped and their records reported for retry, so that what the batch
// finished is acknowledged rather than all of it coming back with the
// timeout.
func (p *Processor) Process(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	hctx := ctx // the handlers'
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		hctx, cancel = context.WithDeadline(ctx, d.Add(-stopBefore(time.Until(d))))
		defer cancel()
	}
	n := max(p.Concurrency, 1)
	sem := make(chan struct{}, n)
	var mu sync.Mutex
	// An empty list, not null, when every record succeeded: Lambda takes
	// either as success, but ministack 1.5.33's event source mapping
	// crashes on null and never deletes the batch.
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	box := &outbox{}
	later := &deferrals{}
	handled := map[string]bool{} // records handled and to be deleted
	var wg sync.WaitGroup
	// The records the first handlers take are entered before any starts;
	// a later one is entered as it takes the slot of one that has left.
	first := min(len(ev.Records), n)
	if p.ReadAhead != nil {
		bodies := make([][]byte, len(ev.Records))
		for i, r := range ev.Records {
			bodies[i] = []byte(r.Body)
		}
		p.ReadAhead(ctx, bodies)
	}
	if p.Members != nil {
		for range first {
			p.Members.Enter()
		}
	}
	for i, r := range ev.Records {
		sem <- struct{}{}
		if p.Members != nil && i >= first {
			p.Members.Enter()
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if p.Members != nil {
				defer p.Members.Leave()
			}
			o := p.one(ctx, withOutbox(hctx, box, r.MessageId), r, later)
			mu.Lock()
			defer mu.Unlock()
			if o == "retry" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			} else if o == "ok" {
				handled[r.MessageId] = true
			}
		}()
	}
	wg.Wait()
	// What the handlers sent through Gather (see outbox.go). A record
	// deferred or dead-lettered is settled as it is: its messages are
	// sent, or not, as an immediate send's would have been.
	unsent := box.flush(ctx, p.log().With("queue", p.Queue))
	for _, r := range ev.Records {
		if handled[r.MessageId] && unsent[r.MessageId] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
		}
	}
	for _, id := range p.requeue(ctx, later) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	return resp, nil
}

// deferrals are the messages of a batch to send again, delayed.
type deferrals struct {
	mu   sync.Mutex
	ids  []string
	msgs []sqsq.Delayed
}

func (d *deferrals) add(id string, body []byte, delay time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ids = append(d.ids, id)
	d.msgs = append(d.msgs, sqsq.Delayed{Body: body, Delay: delay})
}

// requeue sends the batch's deferred messages again, ten to a call
// whatever their delays, and returns the records to retry: all of them
// when the send failed (those sent before the failure come back twice,
// which every stage takes).
func (p *Processor) requeue(ctx context.Context, d *deferrals) []string {
	if len(d.msgs) == 0 {
		return nil
	}
	if err := p.Requeue.SendEach(ctx, d.msgs...); err != nil {
		p.log().ErrorContext(ctx, "re-sending deferred messages failed; they will be retried", "queue", p.Queue, "messages", len(d.msgs), "err", err)
		for range d.ids {
			p.outcome("retry")
		}
		return d.ids
	}
	for range d.ids {
		p.outcome("deferred")
	}
	return nil
}

// one handles a record in hctx and says what became of it: "ok",
// "dead-letter" (both deleted), "retry", or "deferred": added to later,
// which Process sends again after the batch (requeue), deleting the
// record unless that send fails. What it sends itself (a backoff, a dead
// letter) is sent in ctx, which outlives a handler stopped at hctx's
// deadline.
func (p *Processor) one(ctx, hctx context.Context, r events.SQSMessage, later *deferrals) string {
	log := p.log().With("queue", p.Queue, "message_id", r.MessageId)
	body := []byte(r.Body)
	var err error
	if p.HandleSent != nil {
		err = p.HandleSent(hctx, body, sentAt(r))
	} else {
		err = p.Handle(hctx, body)
	}
	if err == nil {
		return p.outcome("ok")
	}
	if d, ok := p.deferred(err); ok && p.Requeue != nil {
		// Sent again once the batch is handled (requeue); its outcome is
		// counted then.
		later.add(r.MessageId, body, d)
		log.DebugContext(ctx, "message deferred", "after", d, "reason", err)
		return "deferred"
	}
	tries := receiveCount(r)
	v := p.retry().Decide(err, tries)
	if v.Action == crawl.Retry {
		if p.Visibility != nil {
			if verr := p.Visibility.ChangeVisibility(ctx, r.ReceiptHandle, v.Delay); verr != nil {
				log.WarnContext(ctx, "setting the retry backoff failed", "err", verr)
			}
		}
		log.WarnContext(ctx, "message failed; will retry", "try", tries, "retry_in", v.Delay, "err", err)
		return p.outcome("retry")
	}
	reason := v.Reason
	attrs := map[string]string{"reason": sqsq.AttributeValue(reason, MaxReasonBytes), "source_queue": p.Queue, "message_id": r.MessageId,
		"receive_count": strconv.Itoa(tries), "dead_lettered_at": time.Now().UTC().Format(time.RFC3339)}
	derr := p.DeadLetters.SendWithAttributes(ctx, body, attrs)
	if crawl.KindOf(derr) == crawl.KindInvalid {
		// A body near SQS's limit leaves no room for the attributes: it
		// goes without them, its reason in the log line below.
		derr = p.DeadLetters.SendWithAttributes(ctx, body, nil)
	}
	if derr != nil {
		log.ErrorContext(ctx, "dead-lettering a message failed; it will be retried", "reason", reason, "err", derr)
		return p.outcome("retry")
	}
	log.WarnContext(ctx, "message cannot be handled; moved to the dead-letter queue", "reason", reason, "body", crawl.Truncate(r.Body, 512))
	return p.outcome("dead-letter")
}

func (p *Processor) retry() crawl.RetryPolicy {
	if p.Retry == (crawl.RetryPolicy{}) {
		return DefaultRetry
	}
	return p.Retry
}

func (p *Processor) deferred(err error) (time.Duration, bool) {
	if p.Deferred == nil {
		return 0, false
	}
	return p.Deferred(err)
}

// outcome counts what became of a record, and returns it.
func (p *Processor) outcome(o string) string {
	if p.OnOutcome != nil {
		p.OnOutcome(o)
	}
	return o
}

func (p *Processor) log() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}

// sentAt is when SQS took the message (SentTimestamp, Unix
// milliseconds), or the zero time.
func sentAt(r events.SQSMessage) time.Time {
	ms, err := strconv.ParseInt(r.Attributes["SentTimestamp"], 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func receiveCount(r events.SQSMessage) int {
	n, err := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}
