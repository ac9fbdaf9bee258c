package sqsbatch

import (
	"context"
	"log/slog"
	"sync"
)

// The outbox: the messages a batch's handlers send, gathered per queue
// and sent once every handler of the batch has returned, in
// SendMessageBatch calls of up to ten messages (sqsq.Queue.Send splits
// them), instead of a call per handler. A fetcher invocation of nine
// pages sent nine parse tasks in nine requests; it now sends them in one.
//
// Why after the handlers, not as soon as all of them wait: a handler
// that waits on the others (the fetcher's WARC packer puts one file for
// the pages fetched at once) would then wait on the outbox too, and the
// outbox on it. After the last handler returns, nothing waits.
//
// Nothing is lost. A message is as good as sent for its handler: the
// outbox sends whatever a handler added, whether the handler then
// succeeded or failed, as an immediate send would have. A record whose
// handler succeeded but whose messages could not be sent is reported
// for retry: every stage hands a task it already did on again when
// it is delivered twice (the fetcher's forward, the parser's sends).
// Lambda killed before the flush (a timeout) retries the whole batch,
// which is the same case.

// Sender is a queue messages can be sent to; *sqsq.Queue is one.
type Sender interface {
	Send(ctx context.Context, bodies ...[]byte) error
	// Check returns the error Send would return for a body SQS would
	// refuse (crawl.KindInvalid), without sending.
	Check(bodies ...[]byte) error
}

// Gather returns a sender that, inside Process, adds the bodies to the
// batch's outbox (after checking them, so a handler still learns of a
// body SQS would refuse) and, outside it, sends at once.
func Gather(q Sender) Sender { return gathered{q} }

type gathered struct{ q Sender }

func (g gathered) Send(ctx context.Context, bodies ...[]byte) error {
	ob, _ := ctx.Value(outboxKey{}).(*outboxRef)
	if ob == nil {
		return g.q.Send(ctx, bodies...)
	}
	if err := g.q.Check(bodies...); err != nil {
		return err
	}
	if !ob.box.add(g.q, ob.record, bodies) {
		// Sent after the batch was flushed (by a goroutine that outlived
		// its handler): at once, then.
		return g.q.Send(ctx, bodies...)
	}
	return nil
}

func (g gathered) Check(bodies ...[]byte) error { return g.q.Check(bodies...) }

type outboxKey struct{}

// outboxRef is what a record's context carries: the batch's outbox and
// the record the bodies are sent for.
type outboxRef struct {
	box    *outbox
	record string
}

func withOutbox(ctx context.Context, box *outbox, record string) context.Context {
	return context.WithValue(ctx, outboxKey{}, &outboxRef{box: box, record: record})
}

// outbox holds a batch's messages per queue, in the order they were
// added, and which records added them.
type outbox struct {
	mu      sync.Mutex
	queues  []*outQueue
	flushed bool // no more adds: flush has taken the messages
}

type outQueue struct {
	q       Sender
	bodies  [][]byte
	records map[string]bool
}

// add adds bodies sent to q for record, unless the outbox was flushed
// (it then returns false).
func (o *outbox) add(q Sender, record string, bodies [][]byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.flushed {
		return false
	}
	if len(bodies) == 0 {
		return true
	}
	var oq *outQueue
	for _, x := range o.queues {
		if x.q == q {
			oq = x
			break
		}
	}
	if oq == nil {
		oq = &outQueue{q: q, records: map[string]bool{}}
		o.queues = append(o.queues, oq)
	}
	oq.bodies = append(oq.bodies, bodies...)
	oq.records[record] = true
	return true
}

// flush sends each queue's messages and returns the records with a
// message that may not have been sent (a queue's send failed: the
// messages before the failure were sent, which a retry sends again).
func (o *outbox) flush(ctx context.Context, log *slog.Logger) map[string]bool {
	o.mu.Lock()
	o.flushed = true
	queues := o.queues
	o.mu.Unlock()
	failed := map[string]bool{}
	for _, oq := range queues {
		if err := oq.q.Send(ctx, oq.bodies...); err != nil {
			log.ErrorContext(ctx, "sending the batch's messages failed; their records will be retried", "messages", len(oq.bodies), "records", len(oq.records), "err", err)
			for r := range oq.records {
				failed[r] = true
			}
		}
	}
	return failed
}
