package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestInlineFailuresQueued: an inline sender hands every body to the
// handler; the ones it fails on go to the durable queue (for its worker
// to retry and, in the end, dead-letter), the others never touch it.
func TestInlineFailuresQueued(t *testing.T) {
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	r := &runner{d: dd, q: newQueues(dd.DB), log: slog.New(slog.DiscardHandler), wake: map[string]chan struct{}{"q": make(chan struct{}, 1)}}
	var mu sync.Mutex
	var handled []string
	s := r.inline(worker{queue: "q", lanes: 3, handle: func(_ context.Context, b []byte) error {
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, string(b))
		if string(b) == "bad" || string(b) == "worse" {
			return errors.New("cannot handle " + string(b))
		}
		return nil
	}})
	if err := s.Send(ctx, []byte("a"), []byte("bad"), []byte("b"), []byte("worse"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	slices.Sort(handled)
	if want := []string{"a", "b", "bad", "c", "worse"}; !slices.Equal(handled, want) {
		t.Errorf("handled %q, want %q", handled, want)
	}
	msgs, err := dd.DB.Receive(ctx, "q", 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var queued []string
	for _, m := range msgs {
		queued = append(queued, string(m.Body))
	}
	slices.Sort(queued)
	if want := []string{"bad", "worse"}; !slices.Equal(queued, want) {
		t.Errorf("queued %q, want the failed bodies %q", queued, want)
	}
}

// TestInlineCancelled: when the context is done, Send says so, and the
// caller's own message is left to be handled again (nothing is queued
// for the bodies not handled).
func TestInlineCancelled(t *testing.T) {
	dd, err := OpenDataDir(context.Background(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	r := &runner{d: dd, q: newQueues(dd.DB), log: slog.New(slog.DiscardHandler), wake: map[string]chan struct{}{"q": make(chan struct{}, 1)}}
	ctx, cancel := context.WithCancel(context.Background())
	s := r.inline(worker{queue: "q", lanes: 1, handle: func(ctx context.Context, b []byte) error {
		cancel()
		return ctx.Err()
	}})
	if err := s.Send(ctx, []byte("a"), []byte("b")); !errors.Is(err, context.Canceled) {
		t.Errorf("Send = %v, want context.Canceled", err)
	}
	if n, err := dd.DB.Pending(context.Background(), "q"); n != 0 || err != nil {
		t.Errorf("%d messages queued (%v), want none", n, err)
	}
}

// TestInlineEventFailuresQueued: events handed over as they are go to the
// scheduler; the ones it fails on are queued encoded, and decode to the
// same event for the enqueue worker.
func TestInlineEventFailuresQueued(t *testing.T) {
	ctx := context.Background()
	dd, err := OpenDataDir(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	r := &runner{d: dd, q: newQueues(dd.DB), log: slog.New(slog.DiscardHandler), wake: map[string]chan struct{}{"q": make(chan struct{}, 1)},
		driveWake: make(chan struct{}, 1)}
	var admitted []string
	s := eventInline{inline: r.inline(worker{queue: "q", lanes: 1}), admit: func(_ context.Context, ev crawl.EnqueueEvent) error {
		if ev.URL == "http://example.com/bad?a=1&b=2" {
			return errors.New("cannot admit")
		}
		admitted = append(admitted, ev.URL+strings.Join(ev.URLs, ","))
		return nil
	}}
	bad := crawl.EnqueueEvent{URL: "http://example.com/bad?a=1&b=2", Hops: 2, Parent: "http://example.com/"}
	evs := []crawl.EnqueueEvent{
		{URLs: []string{"http://example.com/a", "http://example.com/b"}, Hops: 2, Parent: "http://example.com/"},
		bad,
	}
	if err := s.SendEvents(ctx, evs...); err != nil {
		t.Fatal(err)
	}
	if want := []string{"http://example.com/a,http://example.com/b"}; !slices.Equal(admitted, want) {
		t.Errorf("admitted %q, want %q", admitted, want)
	}
	msgs, err := dd.DB.Receive(ctx, "q", 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("%d messages queued, want the failed event alone", len(msgs))
	}
	got, err := crawl.ParseEnqueueEvent(msgs[0].Body)
	if err != nil || got.URL != bad.URL || got.Hops != bad.Hops || got.Parent != bad.Parent || len(got.URLs) != 0 {
		t.Errorf("queued %s: decodes to %+v (%v), want %+v", msgs[0].Body, got, err, bad)
	}
}
