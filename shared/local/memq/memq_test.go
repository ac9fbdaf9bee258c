package memq

import (
	"testing"
	"time"
)

// TestQueue: what the contract does not check of the queue the pipeline
// uses: a message is visible again when its lease runs out or is
// released, Get reads a message (for the dead-letter queue), and
// a retried message comes after those visible before it.
func TestQueue(t *testing.T) {
	now := time.Unix(1000, 0)
	q := New("q")
	q.now = func() time.Time { return now }
	if err := q.Send([]byte("a"), []byte("b"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	bodies := func(ms []Message) (out []string) {
		for _, m := range ms {
			out = append(out, string(m.Body))
		}
		return out
	}
	steps := []struct {
		name    string
		do      func()
		max     int
		want    []string
		waiting bool // before the receive
		pending int
	}{
		{"first two", nil, 2, []string{"a", "b"}, true, 3},
		{"the third", nil, 5, []string{"c"}, true, 3},
		{"nothing visible while leased", nil, 5, nil, false, 3},
		{"a retried now, its lease given back", func() { q.Retry("1", 0) }, 5, []string{"a"}, true, 3},
		{"b read for the dead letters, then deleted", func() {
			if m, ok := q.Get("2"); !ok || string(m.Body) != "b" || m.ReceiveCount != 1 {
				t.Errorf("Get = %+v, %v; want b, received once", m, ok)
			}
			q.Delete("2")
			if _, ok := q.Get("2"); ok {
				t.Error("Get of a message deleted found it")
			}
		}, 5, nil, false, 2},
		{"leases run out", func() { now = now.Add(time.Hour) }, 5, []string{"a", "c"}, true, 2},
		{"released leases", func() { q.ReleaseLeases() }, 5, []string{"a", "c"}, true, 2},
		{"deleted", func() { q.Delete("1", "3", "missing") }, 5, nil, false, 0},
	}
	for _, s := range steps {
		if s.do != nil {
			s.do()
		}
		if got := q.Waiting(); got != s.waiting {
			t.Errorf("%s: Waiting = %v, want %v", s.name, got, s.waiting)
		}
		if got := q.Pending(); got != s.pending {
			t.Errorf("%s: Pending = %d, want %d", s.name, got, s.pending)
		}
		got := bodies(q.Receive(s.max, time.Minute))
		if len(got) != len(s.want) || len(got) > 0 && (got[0] != s.want[0] || got[len(got)-1] != s.want[len(s.want)-1]) {
			t.Errorf("%s: received %q, want %q", s.name, got, s.want)
		}
	}
}

// TestQueueVisibleFirst: of the visible messages, those visible first
// are received first, whatever their order of sending.
func TestQueueVisibleFirst(t *testing.T) {
	now := time.Unix(1000, 0)
	q := New("q")
	q.now = func() time.Time { return now }
	q.Send([]byte("old"), []byte("new"))
	for _, m := range q.Receive(2, time.Minute) {
		delay := map[string]time.Duration{"old": 20 * time.Second, "new": 10 * time.Second}[string(m.Body)]
		q.Retry(m.ID, delay)
	}
	now = now.Add(30 * time.Second)
	if got := q.Receive(1, time.Minute); len(got) != 1 || string(got[0].Body) != "new" || got[0].ReceiveCount != 2 {
		t.Errorf("received %+v, want new (visible first), its second receipt", got)
	}
}
