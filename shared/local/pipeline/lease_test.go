package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLeaseExtendedWhileHandling: a handler that runs longer than the
// lease (a worker waiting its turn at a slow host) keeps its message; no
// second worker receives it.
func TestLeaseExtendedWhileHandling(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	r := &runner{d: dd, q: newQueues(dd.DB), log: slog.New(slog.DiscardHandler), wake: map[string]chan struct{}{"q": make(chan struct{}, 1)}, lease: 60 * time.Millisecond}
	if err := dd.DB.Send(ctx, "q", []byte("slow")); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	h := func(ctx context.Context, b []byte) error {
		calls.Add(1)
		time.Sleep(300 * time.Millisecond) // five leases long
		return nil
	}
	wctx, stop := context.WithTimeout(ctx, 600*time.Millisecond)
	defer stop()
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); r.work(wctx, worker{queue: "q", batch: 1, lanes: 1, handle: h}) }()
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Errorf("the message was handled %d times, want once", n)
	}
	if n, _ := dd.DB.Pending(ctx, "q"); n != 0 {
		t.Errorf("%d messages left, want the handled one deleted", n)
	}
}
