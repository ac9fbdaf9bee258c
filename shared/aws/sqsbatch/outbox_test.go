package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// recordingQueue is a Sender that keeps each Send call's bodies; fail,
// if set, makes every Send fail. Check refuses a body "bad".
type recordingQueue struct {
	mu    sync.Mutex
	calls [][]string
	fail  error
}

func (q *recordingQueue) Send(_ context.Context, bodies ...[]byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	var call []string
	for _, b := range bodies {
		call = append(call, string(b))
	}
	q.calls = append(q.calls, call)
	return q.fail
}

func (q *recordingQueue) Check(bodies ...[]byte) error {
	for _, b := range bodies {
		if string(b) == "bad" {
			return crawl.E("send", crawl.KindInvalid, errors.New("SQS refuses it"))
		}
	}
	return nil
}

func (q *recordingQueue) sent() [][]string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.calls)
}

type deadLetterBox struct {
	mu     sync.Mutex
	bodies []string
}

func (d *deadLetterBox) SendWithAttributes(_ context.Context, body []byte, _ map[string]string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bodies = append(d.bodies, string(body))
	return nil
}

// Messages sent through Gather go out after the batch's last handler
// returned, one Send per queue; a record whose messages could not be
// sent is retried, and only such a record.
func TestOutbox(t *testing.T) {
	for _, tc := range []struct {
		name string
		// Each record's body is "a:X,b:Y" (send X to queue a, Y to b),
		// "fail" (the handler fails after sending "f" to a) or
		// "a:bad" (a body SQS refuses).
		records          []string
		failA            bool
		wantA, wantB     [][]string
		wantFailures     []string
		wantDeadLettered []string
	}{
		{name: "gathered per queue",
			records: []string{"a:1,b:x", "a:2", "a:3,b:y"},
			wantA:   [][]string{{"1", "2", "3"}}, wantB: [][]string{{"x", "y"}}},
		{name: "nothing sent, no call",
			records: []string{"", ""}},
		{name: "a failed handler's messages still go out; it alone is retried",
			records: []string{"a:1", "fail"},
			wantA:   [][]string{{"1", "f"}}, wantFailures: []string{"m1"}},
		{name: "a queue that refuses: the records that sent to it are retried",
			records: []string{"a:1", "b:x", "a:2,b:y", "fail"}, failA: true,
			wantA: [][]string{{"1", "2", "f"}}, wantB: [][]string{{"x", "y"}}, wantFailures: []string{"m0", "m2", "m3"}},
		{name: "a body SQS refuses fails its handler at once, as a dead letter",
			records: []string{"a:bad", "a:1"},
			wantA:   [][]string{{"1"}}, wantDeadLettered: []string{"a:bad"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := &recordingQueue{}, &recordingQueue{}
			if tc.failA {
				a.fail = errors.New("SQS is down")
			}
			ga, gb := Gather(a), Gather(b)
			dead := &deadLetterBox{}
			p := Processor{Queue: "test", Concurrency: 1, DeadLetters: dead, Handle: func(ctx context.Context, body []byte) error {
				if n := len(a.sent()) + len(b.sent()); n > 0 {
					t.Errorf("%d sends before the batch was handled", n)
				}
				if string(body) == "fail" {
					if err := ga.Send(ctx, []byte("f")); err != nil {
						return err
					}
					return crawl.E("test", crawl.KindTransient, errors.New("try again"))
				}
				for _, part := range strings.Split(string(body), ",") {
					q, msg, ok := strings.Cut(part, ":")
					if !ok {
						continue
					}
					s := map[string]Sender{"a": ga, "b": gb}[q]
					if err := s.Send(ctx, []byte(msg)); err != nil {
						return err
					}
				}
				return nil
			}}
			var ev events.SQSEvent
			for i, body := range tc.records {
				ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d", i), Body: body,
					Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
			}
			resp, err := p.Process(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			var failures []string
			for _, f := range resp.BatchItemFailures {
				failures = append(failures, f.ItemIdentifier)
			}
			slices.Sort(failures)
			if !slices.Equal(failures, tc.wantFailures) {
				t.Errorf("failures %v, want %v", failures, tc.wantFailures)
			}
			if got := a.sent(); !equalCalls(got, tc.wantA) {
				t.Errorf("queue a got %v, want %v", got, tc.wantA)
			}
			if got := b.sent(); !equalCalls(got, tc.wantB) {
				t.Errorf("queue b got %v, want %v", got, tc.wantB)
			}
			if !slices.Equal(dead.bodies, tc.wantDeadLettered) {
				t.Errorf("dead-lettered %v, want %v", dead.bodies, tc.wantDeadLettered)
			}
		})
	}
}

// Outside a batch, or after it (a goroutine that outlived its handler),
// a gathered sender sends at once.
func TestGatherOutsideBatch(t *testing.T) {
	q := &recordingQueue{}
	g := Gather(q)
	if err := g.Send(context.Background(), []byte("1"), []byte("2")); err != nil {
		t.Fatal(err)
	}
	var late context.Context
	p := Processor{Queue: "test", Handle: func(ctx context.Context, _ []byte) error {
		late = ctx
		return g.Send(ctx, []byte("3"))
	}}
	if _, err := p.Process(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m0", Body: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if err := g.Send(late, []byte("4")); err != nil {
		t.Fatal(err)
	}
	if got := q.sent(); !equalCalls(got, [][]string{{"1", "2"}, {"3"}, {"4"}}) {
		t.Errorf("sent %v, want 1 and 2 at once, 3 after the batch, 4 at once", got)
	}
}

func equalCalls(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
