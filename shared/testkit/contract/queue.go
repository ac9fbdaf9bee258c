package contract

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
	"github.com/serverless-crawler/crawler/shared/stage/schedule"
)

// MessageQueue is one queue: the Sender the stages send to, and the
// receiving side their runner uses (the embedded home's worker loop;
// sqsbatch and Lambda's event source on AWS).
//
// Neither home's queue has this shape as it is: the SQLite queue is
// addressed by name on the database (Send(ctx, queue, bodies...),
// Receive(ctx, queue, max, lease), Delete(ctx, queue, id), Retry) and
// gives each Receive its lease; an SQS queue (sqsq.Queue) is one value
// per queue, its lease is the queue's visibility timeout, and it
// deletes and changes visibility by receipt handle. Each adapter's
// contract_test.go wraps its queue in this interface.
type MessageQueue interface {
	schedule.Sender
	fetch.Sender
	parse.Sender

	// Receive takes up to max visible messages (max <= 10: SQS's limit),
	// hiding each for the queue's visibility timeout; it may return fewer
	// than are visible. A message not deleted by the end of its
	// visibility timeout is received again, its ReceiveCount one higher.
	Receive(ctx context.Context, max int) ([]Message, error)
	// Delete deletes received messages: they have been handled. (SQS
	// deletes up to 10 a call; the SQLite queue one a statement.)
	Delete(ctx context.Context, msgs ...Message) error
	// ChangeVisibility hides a received message for d from now (whole
	// seconds on SQS): 0 gives it back at once, a longer time extends
	// the lease of a message still being handled or delays its retry.
	ChangeVisibility(ctx context.Context, m Message, d time.Duration) error
	// Pending counts the messages in the queue, visible, received or
	// delayed.
	Pending(ctx context.Context) (int, error)
}

// Message is a received message.
type Message struct {
	ID           string // the same on every receipt of the message
	Handle       string // what Delete and ChangeVisibility need (SQS's receipt handle; the SQLite queue's id)
	Body         []byte
	ReceiveCount int // 1 on the first receipt
}

// DelayedSender is a queue that can send a message hidden for a while
// (sqsq.Queue: SQS's DelaySeconds; the fetcher defers a task for a busy
// host with it). The SQLite queue has none: the embedded fetcher waits
// for the host in process.
type DelayedSender interface {
	SendDelayed(ctx context.Context, delay time.Duration, bodies ...[]byte) error
}

// AtLeastOnce is a queue that may deliver a message more than once, as
// an SQS standard queue does: an SDK's retry of a send whose answer was
// lost makes a copy, and of a receive whose answer was lost counts a
// receipt the consumer never saw (the stages are idempotent for this).
// With such a queue the bulk cases accept copies and receive counts
// above 1, but every message sent must still arrive. The SQLite queue
// delivers each message exactly once.
type AtLeastOnce interface {
	AtLeastOnce()
}

// QueueOpener returns a new, empty queue whose messages stay hidden for
// visibility once received; t cleans it up.
type QueueOpener func(t *testing.T, visibility time.Duration) MessageQueue

// visibility is the visibility timeout of the suite's queues: SQS's
// smallest but 0.
const visibility = time.Second

// Queue runs the queue contract: every message sent is received, once
// per visibility timeout, until it is deleted; sends of any number of
// bodies up to 256 KiB each go through, split as the queue must.
func Queue(t *testing.T, open QueueOpener) {
	run(t, []testCase{
		{"SendNothing", func(t *testing.T) {
			q := open(t, visibility)
			if err := q.Send(t.Context()); err != nil {
				t.Fatalf("send of no bodies: %v", err)
			}
			wantPending(t, q, 0)
		}},
		{"RefusesWhatSQSRefuses", func(t *testing.T) {
			// A body SQS would refuse is refused by every queue, before
			// anything of the call is sent, so that a stage that would
			// overflow SQS fails in the embedded home too.
			for _, tc := range []struct {
				name   string
				bodies [][]byte
			}{
				{"a body over 256 KiB", [][]byte{[]byte("ok"), make([]byte, 256<<10+1)}},
				{"an empty body", [][]byte{[]byte("ok"), {}}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					q := open(t, visibility)
					err := q.Send(t.Context(), tc.bodies...)
					if err == nil || crawl.KindOf(err) != crawl.KindInvalid {
						t.Fatalf("send: %v, want an invalid-input error", err)
					}
					wantNone(t, q, "after a refused send")
				})
			}
		}},
		{"DeliversAll", func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				bodies [][]byte
			}{
				{"25 small bodies (SQS: 3 batches of at most 10)", Bodies(25, 100)},
				{"10 bodies of 30 KiB (SQS: split by size, 8+2)", Bodies(10, 30<<10)},
				{"5 bodies of 100 KiB (SQS: 2+2+1)", Bodies(5, 100<<10)},
				{"one body of exactly 256 KiB", Bodies(1, 256<<10)},
				{"bodies of any characters SQS takes", [][]byte{[]byte(`{"url":"http://example.com/ä?q=\u00e9"}`), []byte("tab\tand\nnewline"), []byte("😀 €")}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					q := open(t, visibility)
					_, loose := q.(AtLeastOnce)
					if err := q.Send(t.Context(), tc.bodies...); err != nil {
						t.Fatal(err)
					}
					if !loose {
						wantPending(t, q, len(tc.bodies))
					}
					got := receiveBodies(t, q, 10, tc.bodies, 10*time.Second)
					if err := q.Delete(t.Context(), got...); err != nil {
						t.Fatal(err)
					}
					if !loose {
						wantPending(t, q, 0)
						wantNone(t, q, "after delete")
					}
				})
			}
		}},
		{"Receive", func(t *testing.T) {
			q := open(t, visibility)
			if err := q.Send(t.Context(), Bodies(5, 10)...); err != nil {
				t.Fatal(err)
			}
			receiveBodies(t, q, 2, Bodies(5, 10), 5*time.Second)
		}},
		{"Redelivery", func(t *testing.T) {
			q := open(t, visibility)
			if err := q.Send(t.Context(), []byte("again")); err != nil {
				t.Fatal(err)
			}
			first := receiveN(t, q, 1, 5*time.Second)[0]
			wantNone(t, q, "while received")
			wantPending(t, q, 1)
			// Not deleted: back after the visibility timeout, the same
			// message with a higher receive count: 2, or more on a queue
			// that counts a receive whose answer was lost (AtLeastOnce).
			second := receiveN(t, q, 1, 5*time.Second)[0]
			_, loose := q.(AtLeastOnce)
			count := second.ReceiveCount == 2 || loose && second.ReceiveCount > 2
			if second.ID != first.ID || string(second.Body) != "again" || !count {
				t.Fatalf("redelivered: id %s body %q count %d; want id %s, count 2 (more only on an at-least-once queue: %v)",
					second.ID, second.Body, second.ReceiveCount, first.ID, loose)
			}
			if err := q.Delete(t.Context(), second); err != nil {
				t.Fatal(err)
			}
			wantPending(t, q, 0)
			time.Sleep(visibility + 500*time.Millisecond)
			wantNone(t, q, "after the deleted message's visibility timeout")
		}},
		{"ChangeVisibility", func(t *testing.T) {
			q := open(t, visibility)
			if err := q.Send(t.Context(), []byte("lease")); err != nil {
				t.Fatal(err)
			}
			m := receiveN(t, q, 1, 5*time.Second)[0]
			// A longer lease keeps it hidden past the visibility timeout...
			if err := q.ChangeVisibility(t.Context(), m, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			time.Sleep(visibility + 500*time.Millisecond)
			wantNone(t, q, "during an extended lease")
			wantPending(t, q, 1)
			// ... 0 gives it back at once...
			if err := q.ChangeVisibility(t.Context(), m, 0); err != nil {
				t.Fatal(err)
			}
			// (Counts are SQS's ApproximateReceiveCount: a receive whose
			// response was lost and retried by the SDK, as on a loaded
			// machine, counts too; so "at least", and rising. "At once"
			// is within 5 s, far short of the 30 s lease it ends: ministack
			// under the race detector in CI once took longer than 1 s.)
			m = receiveN(t, q, 1, 5*time.Second)[0]
			if m.ReceiveCount < 2 {
				t.Errorf("after ChangeVisibility(0): receive count %d, want 2 or more", m.ReceiveCount)
			}
			count := m.ReceiveCount
			// ... and a retry's backoff delays it.
			start := time.Now()
			if err := q.ChangeVisibility(t.Context(), m, 2*time.Second); err != nil {
				t.Fatal(err)
			}
			wantNone(t, q, "during the retry's backoff")
			m = receiveN(t, q, 1, 5*time.Second)[0]
			if waited := time.Since(start); waited < 1900*time.Millisecond || m.ReceiveCount <= count {
				t.Errorf("retried after %v with receive count %d, want at least 2 s and a count over %d", waited, m.ReceiveCount, count)
			}
		}},
		{"DeleteOne", func(t *testing.T) {
			q := open(t, visibility)
			if err := q.Send(t.Context(), []byte("a"), []byte("b")); err != nil {
				t.Fatal(err)
			}
			ms := receiveN(t, q, 2, 5*time.Second)
			for _, m := range ms {
				var err error
				if string(m.Body) == "a" {
					err = q.Delete(t.Context(), m)
				} else {
					err = q.ChangeVisibility(t.Context(), m, 0)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			wantPending(t, q, 1)
			if got := receiveN(t, q, 1, 5*time.Second); string(got[0].Body) != "b" || got[0].ReceiveCount != 2 {
				t.Errorf("after deleting a: %q (count %d), want b again", got[0].Body, got[0].ReceiveCount)
			}
		}},
		{"SendDelayed", func(t *testing.T) {
			q := open(t, visibility)
			d, ok := q.(DelayedSender)
			if !ok {
				t.Skip("this queue has no delayed send")
			}
			start := time.Now()
			if err := d.SendDelayed(t.Context(), 1500*time.Millisecond, []byte("later")); err != nil { // SQS: 2 s
				t.Fatal(err)
			}
			wantNone(t, q, "before the delay")
			wantPending(t, q, 1)
			m := receiveN(t, q, 1, 6*time.Second)[0]
			if waited := time.Since(start); string(m.Body) != "later" || waited < 1400*time.Millisecond {
				t.Errorf("received %q after %v, want the delayed message after at least 1.5 s", m.Body, waited)
			}
		}},
	})
}

// Bodies returns n bodies of size bytes, each starting with its number
// (the queue suites' messages, exported for the queues' own tests).
func Bodies(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		b := []byte(fmt.Sprintf("%04d:", i))
		out[i] = append(b, bytes.Repeat([]byte{'x'}, max(0, size-len(b)))...)
	}
	return out
}

// receiveN receives until want messages arrived or within passed,
// failing on a message received twice and on fewer than want.
func receiveN(t *testing.T, q MessageQueue, want int, within time.Duration) []Message {
	t.Helper()
	var got []Message
	seen := map[string]bool{}
	for end := time.Now().Add(within); len(got) < want; {
		if time.Now().After(end) {
			t.Fatalf("received %d messages in %v, want %d", len(got), within, want)
		}
		ms, err := q.Receive(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > 10 {
			t.Fatalf("Receive(10) returned %d messages", len(ms))
		}
		for _, m := range ms {
			if seen[m.ID] {
				t.Fatalf("message %s received twice (count %d)", m.ID, m.ReceiveCount)
			}
			seen[m.ID] = true
			got = append(got, m)
		}
		if len(ms) == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return got
}

// wantNone checks that nothing is visible.
func wantNone(t *testing.T, q MessageQueue, when string) {
	t.Helper()
	if ms, err := q.Receive(t.Context(), 10); err != nil || len(ms) != 0 {
		t.Fatalf("receive %s: %d messages, %v; want none", when, len(ms), err)
	}
}

func wantPending(t *testing.T, q MessageQueue, want int) {
	t.Helper()
	if n, err := q.Pending(t.Context()); err != nil || n != want {
		t.Errorf("Pending = %d, %v; want %d", n, err, want)
	}
}

// receiveBodies receives, max at a time, until every body of want has
// arrived (failing if within passes first), and returns what it
// received. From a queue that delivers exactly once, each message must
// arrive once, on its first receipt, and nothing else; an AtLeastOnce
// queue may deliver copies.
func receiveBodies(t *testing.T, q MessageQueue, max int, want [][]byte, within time.Duration) []Message {
	t.Helper()
	_, loose := q.(AtLeastOnce)
	missing := map[string]int{} // body: copies sent and not yet received
	for _, b := range want {
		missing[string(b)]++
	}
	var got []Message
	seen := map[string]bool{}
	for end := time.Now().Add(within); len(missing) > 0; {
		if time.Now().After(end) {
			t.Fatalf("received %d messages in %v; %d of the %d bodies sent did not arrive", len(got), within, len(missing), len(want))
		}
		ms, err := q.Receive(t.Context(), max)
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) > max {
			t.Fatalf("Receive(%d) returned %d messages", max, len(ms))
		}
		for _, m := range ms {
			if m.ID == "" || m.Handle == "" {
				t.Errorf("message %.10q: id %q, handle %q; want both", m.Body, m.ID, m.Handle)
			}
			if !loose && (seen[m.ID] || m.ReceiveCount != 1) {
				t.Errorf("message %s (%.10q): received again or receive count %d; want each once, count 1", m.ID, m.Body, m.ReceiveCount)
			}
			seen[m.ID] = true
			got = append(got, m)
			switch n := missing[string(m.Body)]; {
			case n > 1:
				missing[string(m.Body)] = n - 1
			case n == 1:
				delete(missing, string(m.Body))
			case !loose:
				t.Errorf("received %.20q, which was not sent, or not that often", m.Body)
			}
		}
		if len(ms) == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	return got
}
