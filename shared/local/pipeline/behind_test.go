package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

// TestBehind: a hand-off returns before the page is handled, at most
// its slots are handled at once (the next Send waits for one), the run
// counts them as pending, and one the handler fails on goes to its
// durable queue, as an inline one does.
func TestBehind(t *testing.T) {
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	r := parseRunner(dd)
	release := make(chan struct{})
	var running, most atomic.Int64
	w := worker{queue: QueueParse, batch: 1, lanes: 1, handle: func(ctx context.Context, b []byte) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-release
		if string(b) == "bad" {
			return errors.New("cannot parse")
		}
		return nil
	}}
	b := r.behind(w, 2)

	if err := b.Send(ctx, []byte("good"), []byte("bad")); err != nil {
		t.Fatal(err)
	}
	if n := r.handingOn.Load(); n != 2 {
		t.Errorf("%d hand-offs counted under way, want 2", n)
	}
	third := make(chan error, 1)
	go func() { third <- b.Send(ctx, []byte("good")) }()
	select {
	case <-third:
		t.Fatal("a third hand-off got a slot while two were handled")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-third; err != nil {
		t.Fatal(err)
	}
	r.handOffs.Wait()
	if n := r.handingOn.Load(); n != 0 {
		t.Errorf("%d hand-offs counted under way after all were handled, want none", n)
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d handled at once, want 2 (the slots)", m)
	}
	msgs, err := dd.DB.Receive(ctx, QueueParse, 10, time.Minute)
	if err != nil || len(msgs) != 1 || string(msgs[0].Body) != "bad" {
		t.Errorf("parse queue = %+v, %v; want the one message that failed", msgs, err)
	}
}

// TestBehindFailed: a hand-off that is neither handled nor queued (the
// database is gone) is not only logged: the run gets its error when it
// waits for the hand-offs, and ends with it.
func TestBehindFailed(t *testing.T) {
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r := parseRunner(dd)
	w := worker{queue: QueueParse, batch: 1, lanes: 1, handle: func(context.Context, []byte) error {
		return errors.New("cannot parse")
	}}
	dd.Close() // the failed page cannot be queued either
	if err := r.behind(w, 1).Send(ctx, []byte("bad")); err != nil {
		t.Fatal(err)
	}
	if err := r.waitHandOffs(); err == nil {
		t.Error("a hand-off neither handled nor queued was not reported")
	}
}

// parseRunner is a runner over dd with no stages, for a hand-off to the
// parse queue's worker.
func parseRunner(dd *DataDir) *runner {
	return &runner{d: dd, q: newQueues(dd.DB), log: slog.New(slog.DiscardHandler),
		wake: map[string]chan struct{}{QueueParse: make(chan struct{}, 1)}, driveWake: make(chan struct{}, 1)}
}

// TestPendingWork: the run's pending work counts the fetch tasks in
// memory, the hand-offs under way and the database's messages.
func TestPendingWork(t *testing.T) {
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	r := &runner{d: dd, q: newQueues(dd.DB)}
	if err := r.q.Send(ctx, QueueFetch, []byte(`{"url":"a"}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.q.Send(ctx, QueueSummarize, []byte(`{"url":"b"}`)); err != nil {
		t.Fatal(err)
	}
	r.handingOn.Add(1)
	if n, err := r.pendingWork(ctx); n != 3 || err != nil {
		t.Errorf("pendingWork = %d, %v; want 3 (a fetch task, a hand-off, a summarize task)", n, err)
	}
}
