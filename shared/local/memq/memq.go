// Package memq is an in-process message queue with the embedded
// queues' semantics (shared/local/sqlite's, and so SQS's): a received
// message is hidden for its lease and is received again, its receive
// count one higher, unless it is deleted by then; a retried message
// comes back after its delay.
//
// Nothing in it outlives the process. The embedded pipeline keeps in it
// only messages that a restarted run rebuilds from the database: the
// fetch tasks, which a run re-releases from the candidates left queued
// (pipeline's resume). Kept in SQLite, each fetch task was three writes
// through the one writer (its send, its receive, its delete), which set
// the crawl's time (BENCHMARKS.md, "The fetch queue in memory").
//
// Why not a channel: a message must be received again when its lease
// runs out, retried after a delay, and counted (Pending), as in the
// other queues, so that the runner treats every queue alike.
package memq

import (
	"cmp"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Message is a received message.
type Message struct {
	ID           string
	Body         []byte
	ReceiveCount int
}

// Queue is one in-process queue. Its zero value is not usable: New.
type Queue struct {
	name string // for errors
	mu   sync.Mutex
	seq  int64
	msgs map[string]*entry
	now  func() time.Time
}

type entry struct {
	seq      int64
	body     []byte
	visible  time.Time
	receives int
}

// New returns an empty queue, named name in its errors.
func New(name string) *Queue { return &Queue{name: name, msgs: map[string]*entry{}, now: time.Now} }

// Send appends messages, visible at once. An empty body or one over
// crawl.MaxMessageBytes is refused (crawl.CheckMessages), and then
// nothing of the call is sent.
func (q *Queue) Send(bodies ...[]byte) error {
	if err := crawl.CheckMessages(q.name, bodies); err != nil {
		return err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for _, b := range bodies {
		q.seq++
		q.msgs[strconv.FormatInt(q.seq, 10)] = &entry{seq: q.seq, body: b, visible: now}
	}
	return nil
}

// Receive takes up to max visible messages, those visible first first
// (then the oldest), hides them for the lease, and returns them oldest
// first.
//
// It looks at every message: the pipeline keeps a few dozen fetch tasks
// queued at a time (two per fetch worker, and the retries), so a scan
// costs less than keeping an order.
func (q *Queue) Receive(max int, lease time.Duration) []Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	var due []*entry
	for _, e := range q.msgs {
		if !e.visible.After(now) {
			due = append(due, e)
		}
	}
	slices.SortFunc(due, func(a, b *entry) int {
		return cmp.Or(a.visible.Compare(b.visible), cmp.Compare(a.seq, b.seq))
	})
	due = due[:min(len(due), max)]
	slices.SortFunc(due, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	out := make([]Message, len(due))
	for i, e := range due {
		e.visible, e.receives = now.Add(lease), e.receives+1
		out[i] = Message{ID: strconv.FormatInt(e.seq, 10), Body: e.body, ReceiveCount: e.receives}
	}
	return out
}

// Waiting reports whether a message is visible.
func (q *Queue) Waiting() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for _, e := range q.msgs {
		if !e.visible.After(now) {
			return true
		}
	}
	return false
}

// Delete removes received messages: they have been handled. An id
// not in the queue (deleted already) is no error.
func (q *Queue) Delete(ids ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, id := range ids {
		delete(q.msgs, id)
	}
}

// Retry makes a received message visible again after delay (0: now);
// also what extends the lease of a message still being handled.
func (q *Queue) Retry(id string, delay time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, ok := q.msgs[id]; ok {
		e.visible = q.now().Add(delay)
	}
}

// Get returns a message without receiving it (false: not in the
// queue): what the caller keeps elsewhere before it deletes it, as a
// dead letter goes to the database.
func (q *Queue) Get(id string) (Message, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.msgs[id]
	if !ok {
		return Message{}, false
	}
	return Message{ID: id, Body: e.body, ReceiveCount: e.receives}, true
}

// Pending counts the messages in the queue, visible, received or
// delayed.
func (q *Queue) Pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.msgs)
}

// ReleaseLeases makes every message visible now.
func (q *Queue) ReleaseLeases() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	for _, e := range q.msgs {
		e.visible = now
	}
}
