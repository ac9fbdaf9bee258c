package sqlite_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/sqlite"
)

const lease = 50 * time.Millisecond

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

func TestQueueSendNothing(t *testing.T) {
	db := openDB(t)
	if err := db.Send(context.Background(), "fetch"); err != nil {
		t.Fatalf("send of no bodies: %v", err)
	}
	if n := pending(t, db, "fetch"); n != 0 {
		t.Errorf("pending = %d, want 0", n)
	}
}

func TestQueueLease(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	send(t, db, "q", "x")
	first := receive(t, db, "q", 10, lease)
	if len(first) != 1 || first[0].ReceiveCount != 1 {
		t.Fatalf("first receive: %+v", first)
	}
	if got := receive(t, db, "q", 10, lease); len(got) != 0 {
		t.Fatalf("leased message received again before its lease ended: %v", bodiesOf(got))
	}
	if n := pending(t, db, "q"); n != 1 {
		t.Errorf("pending while leased = %d, want 1", n)
	}
	time.Sleep(lease + 30*time.Millisecond)
	second := receive(t, db, "q", 10, time.Hour)
	if len(second) != 1 || string(second[0].Body) != "x" || second[0].ID != first[0].ID {
		t.Fatalf("after lease: %+v, want the same message again", second)
	}
	if second[0].ReceiveCount != 2 {
		t.Errorf("receive count = %d, want 2", second[0].ReceiveCount)
	}
	if err := db.Delete(ctx, "q", second[0].ID); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, db, "q"); n != 0 {
		t.Errorf("pending after delete = %d, want 0", n)
	}
}

func TestQueueDelete(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		deleteQueue string // the queue named in Delete
		wantPending int
	}{
		{"from its queue", "q", 1},
		{"naming another queue deletes nothing", "other", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			send(t, db, "q", "a", "b")
			ms := receive(t, db, "q", 1, lease)
			if len(ms) != 1 || string(ms[0].Body) != "a" {
				t.Fatalf("receive: %v", bodiesOf(ms))
			}
			if err := db.Delete(ctx, tt.deleteQueue, ms[0].ID); err != nil {
				t.Fatalf("delete: %v", err)
			}
			if n := pending(t, db, "q"); n != tt.wantPending {
				t.Errorf("pending = %d, want %d", n, tt.wantPending)
			}
			time.Sleep(lease + 30*time.Millisecond)
			got := bodiesOf(receive(t, db, "q", 10, time.Hour))
			want := []string{"b"}
			if tt.wantPending == 2 {
				want = []string{"a", "b"}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after lease: got %v, want %v", got, want)
			}
		})
	}
}

func TestQueueRetry(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		delay       time.Duration
		visibleNow  bool
		visibleWait time.Duration // after this much more, it must be visible
	}{
		{"no delay", 0, true, 0},
		{"short delay", 60 * time.Millisecond, false, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			send(t, db, "q", "r")
			ms := receive(t, db, "q", 1, time.Hour)
			if len(ms) != 1 {
				t.Fatalf("receive: %v", bodiesOf(ms))
			}
			if err := db.Retry(ctx, "q", ms[0].ID, tt.delay); err != nil {
				t.Fatalf("retry: %v", err)
			}
			got := receive(t, db, "q", 1, time.Hour)
			if (len(got) == 1) != tt.visibleNow {
				t.Fatalf("right after Retry(%v): received %v, want visible=%v", tt.delay, bodiesOf(got), tt.visibleNow)
			}
			if !tt.visibleNow {
				if n := pending(t, db, "q"); n != 1 {
					t.Errorf("pending while delayed = %d, want 1", n)
				}
				time.Sleep(tt.visibleWait)
				got = receive(t, db, "q", 1, time.Hour)
				if len(got) != 1 {
					t.Fatalf("after the delay: received %v, want the message", bodiesOf(got))
				}
			}
			if got[0].ID != ms[0].ID || got[0].ReceiveCount != 2 {
				t.Errorf("retried message: id %s count %d, want id %s count 2", got[0].ID, got[0].ReceiveCount, ms[0].ID)
			}
		})
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
