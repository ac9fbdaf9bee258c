package sqlite_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

func send(t *testing.T, db *sqlite.DB, queue string, bodies ...string) {
	t.Helper()
	var bs [][]byte
	for _, b := range bodies {
		bs = append(bs, []byte(b))
	}
	if err := db.Send(context.Background(), queue, bs...); err != nil {
		t.Fatalf("send to %s: %v", queue, err)
	}
}

func receive(t *testing.T, db *sqlite.DB, queue string, max int, lease time.Duration) []sqlite.Message {
	t.Helper()
	ms, err := db.Receive(context.Background(), queue, max, lease)
	if err != nil {
		t.Fatalf("receive from %s: %v", queue, err)
	}
	return ms
}

func bodiesOf(ms []sqlite.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, string(m.Body))
	}
	return out
}

func pending(t *testing.T, db *sqlite.DB, queues ...string) int {
	t.Helper()
	n, err := db.Pending(context.Background(), queues...)
	if err != nil {
		t.Fatalf("pending: %v", err)
	}
	return n
}

func TestQueueFIFO(t *testing.T) {
	tests := []struct {
		name    string
		batches [][]string // sent in this order, one Send per batch
		maxes   []int      // successive Receive sizes
		want    [][]string // bodies received by each Receive
	}{
		{"one batch", [][]string{{"a", "b", "c", "d", "e"}}, []int{3, 3, 3}, [][]string{{"a", "b", "c"}, {"d", "e"}, {}}},
		{"several sends", [][]string{{"1"}, {"2", "3"}, {"4"}}, []int{1, 2, 10}, [][]string{{"1"}, {"2", "3"}, {"4"}}},
		{"many at once", [][]string{{"m00", "m01", "m02", "m03", "m04", "m05", "m06", "m07", "m08", "m09", "m10", "m11"}},
			[]int{100}, [][]string{{"m00", "m01", "m02", "m03", "m04", "m05", "m06", "m07", "m08", "m09", "m10", "m11"}}},
		{"nothing sent", nil, []int{5}, [][]string{{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			for _, b := range tt.batches {
				send(t, db, "fetch", b...)
			}
			send(t, db, "other", "not-mine") // another queue's message is never received here
			for i, max := range tt.maxes {
				ms := receive(t, db, "fetch", max, time.Hour)
				if got := bodiesOf(ms); !reflect.DeepEqual(got, tt.want[i]) {
					t.Errorf("receive %d: got %v, want %v", i, got, tt.want[i])
				}
				for _, m := range ms {
					if m.ReceiveCount != 1 || m.ID == "" {
						t.Errorf("message %q: id %q, receive count %d, want 1", m.Body, m.ID, m.ReceiveCount)
					}
				}
			}
		})
	}
}

// TestQueueDeleteNamesTheQueue: a message is deleted from the queue
// named with it; naming another queue deletes nothing.
func TestQueueDeleteNamesTheQueue(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	send(t, db, "q", "a")
	ms := receive(t, db, "q", 1, time.Hour)
	if len(ms) != 1 {
		t.Fatalf("receive: %v", bodiesOf(ms))
	}
	if err := db.Delete(ctx, "other", ms[0].ID); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if n := pending(t, db, "q"); n != 1 {
		t.Errorf("pending = %d, want 1", n)
	}
	if err := db.ReleaseLeases(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	if got := bodiesOf(receive(t, db, "q", 10, time.Hour)); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("after the lease: got %v, want [a]", got)
	}
}

func TestQueueDeadLetter(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	send(t, db, "parse", "bad-1", "good", "bad-2")
	ms := receive(t, db, "parse", 3, time.Hour)
	if len(ms) != 3 {
		t.Fatalf("receive: %v", bodiesOf(ms))
	}
	reasons := map[string]string{"bad-1": "decode: unexpected EOF", "bad-2": "too many receives"}
	for _, m := range ms {
		r, ok := reasons[string(m.Body)]
		if !ok {
			continue
		}
		if err := db.DeadLetter(ctx, "parse", m.ID, r); err != nil {
			t.Fatalf("dead-letter %s: %v", m.Body, err)
		}
	}
	if got := sqlite.DeadLetterQueue("parse"); got != "parse-dlq" {
		t.Errorf("DeadLetterQueue = %q", got)
	}
	tests := []struct {
		name  string
		queue string
		want  int
	}{
		{"source queue keeps the leased good message", "parse", 1},
		{"dead-letter queue", "parse-dlq", 2},
		{"both", "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			qs := []string{tt.queue}
			if tt.queue == "" {
				qs = []string{"parse", "parse-dlq"}
			}
			if n := pending(t, db, qs...); n != tt.want {
				t.Errorf("pending(%v) = %d, want %d", qs, n, tt.want)
			}
		})
	}
	dl, err := db.DeadLetters(ctx, "parse")
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"bad-1", reasons["bad-1"]}, {"bad-2", reasons["bad-2"]}}
	if !reflect.DeepEqual(dl, want) {
		t.Errorf("DeadLetters = %q, want %q", dl, want)
	}
	if err := db.ReleaseLeases(ctx, "parse"); err != nil {
		t.Fatal(err)
	}
	if got := bodiesOf(receive(t, db, "parse", 10, time.Hour)); !reflect.DeepEqual(got, []string{"good"}) {
		t.Errorf("source queue after dead-lettering: %v, want [good]", got)
	}
	// The dead letters can be read (and redriven) from the -dlq queue;
	// they keep their receive count.
	dlq := receive(t, db, "parse-dlq", 10, time.Hour)
	if got := bodiesOf(dlq); !reflect.DeepEqual(got, []string{"bad-1", "bad-2"}) {
		t.Errorf("dlq: %v", got)
	}
	for _, m := range dlq {
		if m.ReceiveCount != 2 {
			t.Errorf("dead letter %s: receive count %d, want 2", m.Body, m.ReceiveCount)
		}
	}
	if dl, err := db.DeadLetters(ctx, "fetch"); err != nil || len(dl) != 0 {
		t.Errorf("DeadLetters of a queue with none = %v, %v", dl, err)
	}
}

func TestQueueReleaseLeases(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	send(t, db, "a", "a1", "a2", "a3")
	send(t, db, "b", "b1")
	send(t, db, "c", "c1")
	for _, q := range []string{"a", "b", "c"} {
		n := 2
		if q != "a" {
			n = 1
		}
		if got := receive(t, db, q, n, time.Hour); len(got) != n {
			t.Fatalf("receive from %s: %v", q, bodiesOf(got))
		}
	}
	if err := db.ReleaseLeases(ctx, "a", "b"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		queue string
		want  []string
		count int // receive count of the first message
	}{
		{"a", []string{"a1", "a2", "a3"}, 2},
		{"b", []string{"b1"}, 2},
		{"c", []string{}, 0}, // not named: its lease still holds
	}
	for _, tt := range tests {
		t.Run(tt.queue, func(t *testing.T) {
			ms := receive(t, db, tt.queue, 10, time.Hour)
			if got := bodiesOf(ms); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("after ReleaseLeases: got %v, want %v", got, tt.want)
			}
			if len(ms) > 0 && ms[0].ReceiveCount != tt.count {
				t.Errorf("receive count = %d, want %d", ms[0].ReceiveCount, tt.count)
			}
		})
	}
}

func TestQueuePending(t *testing.T) {
	db := openDB(t)
	send(t, db, "enqueue", "e1", "e2")
	send(t, db, "fetch", "f1")
	receive(t, db, "enqueue", 1, time.Hour) // leased messages count too
	tests := []struct {
		name   string
		queues []string
		want   int
	}{
		{"none named", nil, 0},
		{"one", []string{"enqueue"}, 2},
		{"two", []string{"enqueue", "fetch"}, 3},
		{"empty queue", []string{"parse"}, 0},
		{"named twice", []string{"fetch", "fetch"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := pending(t, db, tt.queues...); n != tt.want {
				t.Errorf("Pending(%v) = %d, want %d", tt.queues, n, tt.want)
			}
		})
	}
}

// TestQueueWaiting: Waiting tells whether a receive would take a
// message: one sent, not one hidden by a lease or a retry's delay, nor
// one of another queue. A retried message is received after those that
// were visible before it.
func TestQueueWaiting(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	waiting := func(want bool, when string) {
		t.Helper()
		got, err := db.Waiting(ctx, "q")
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: Waiting = %v, want %v", when, got, want)
		}
	}
	waiting(false, "empty")
	send(t, db, "other", "o1")
	waiting(false, "a message in another queue")
	send(t, db, "q", "m1")
	waiting(true, "after a send")
	m1 := receive(t, db, "q", 1, time.Hour)
	waiting(false, "all received")
	if err := db.Retry(ctx, "q", m1[0].ID, time.Hour); err != nil {
		t.Fatal(err)
	}
	waiting(false, "retried later")
	send(t, db, "q", "m2")
	time.Sleep(2 * time.Millisecond) // m1 visible again after m2
	if err := db.Retry(ctx, "q", m1[0].ID, 0); err != nil {
		t.Fatal(err)
	}
	waiting(true, "retried now")
	first, second := bodiesOf(receive(t, db, "q", 1, time.Hour)), bodiesOf(receive(t, db, "q", 1, time.Hour))
	if got := append(first, second...); !reflect.DeepEqual(got, []string{"m2", "m1"}) {
		t.Errorf("received %v, want m2, then m1, visible again after it", got)
	}
}
