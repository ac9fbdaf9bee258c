package pipeline

import (
	"context"
	"time"

	"github.com/serverless-crawler/crawler/shared/local/memq"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// queues are the pipeline's queues by name: the database's, durable,
// and the fetch queue, in memory. A fetch task needs no durability of
// its own: the candidate it fetches stays queued in the database until
// its crawl is recorded, and a run re-releases what a killed run left
// queued (resume), so a task lost with the process is sent again. Kept
// in the database, each task was three of the one writer's writes (its
// send, its receive and its delete); in memory, a free fetch worker
// takes the next at once (BENCHMARKS.md, "The fetch queue in memory").
// Dead letters of every queue are kept in the database, where the run's
// report and the next runs read them.
type queues struct {
	db  *sqlite.DB
	mem map[string]*memq.Queue
}

func newQueues(db *sqlite.DB) *queues {
	return &queues{db: db, mem: map[string]*memq.Queue{QueueFetch: memq.New(QueueFetch)}}
}

func (q *queues) Send(ctx context.Context, name string, bodies ...[]byte) error {
	if m := q.mem[name]; m != nil {
		return m.Send(bodies...)
	}
	return q.db.Send(ctx, name, bodies...)
}

func (q *queues) Receive(ctx context.Context, name string, max int, lease time.Duration) ([]sqlite.Message, error) {
	m := q.mem[name]
	if m == nil {
		return q.db.Receive(ctx, name, max, lease)
	}
	var out []sqlite.Message
	for _, r := range m.Receive(max, lease) {
		out = append(out, sqlite.Message{ID: r.ID, Body: r.Body, ReceiveCount: r.ReceiveCount})
	}
	return out, nil
}

func (q *queues) Waiting(ctx context.Context, name string) (bool, error) {
	if m := q.mem[name]; m != nil {
		return m.Waiting(), nil
	}
	return q.db.Waiting(ctx, name)
}

func (q *queues) Delete(ctx context.Context, name string, ids ...string) error {
	if m := q.mem[name]; m != nil {
		m.Delete(ids...)
		return nil
	}
	return q.db.Delete(ctx, name, ids...)
}

// Retry makes a received message visible again after delay.
func (q *queues) Retry(ctx context.Context, name, id string, delay time.Duration) error {
	if m := q.mem[name]; m != nil {
		m.Retry(id, delay)
		return nil
	}
	return q.db.Retry(ctx, name, id, delay)
}

// DeadLetter moves a message to its queue's dead-letter queue, in the
// database, with the reason it could not be handled.
func (q *queues) DeadLetter(ctx context.Context, name, id, reason string) error {
	m := q.mem[name]
	if m == nil {
		return q.db.DeadLetter(ctx, name, id, reason)
	}
	msg, ok := m.Get(id)
	if !ok {
		return nil
	}
	// Written before it leaves memory: should the write fail, the
	// message is still in the queue, received, and comes back when its
	// lease runs out, as in the database's queues.
	if err := q.db.AddDeadLetter(ctx, name, msg.Body, msg.ReceiveCount, reason); err != nil {
		return err
	}
	m.Delete(id)
	return nil
}

// Pending counts the messages in the named queues, visible, received
// or delayed.
func (q *queues) Pending(ctx context.Context, names ...string) (int, error) {
	var inDB []string
	n := 0
	for _, name := range names {
		if m := q.mem[name]; m != nil {
			n += m.Pending()
		} else {
			inDB = append(inDB, name)
		}
	}
	k, err := q.db.Pending(ctx, inDB...)
	return n + k, err
}

// ReleaseLeases makes every leased message of the named queues in the
// database visible now: the process that held the leases is gone. (The
// queues in memory are this process's own.)
func (q *queues) ReleaseLeases(ctx context.Context, names ...string) error {
	var inDB []string
	for _, name := range names {
		if q.mem[name] == nil {
			inDB = append(inDB, name)
		}
	}
	return q.db.ReleaseLeases(ctx, inDB...)
}
