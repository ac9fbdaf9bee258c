package crawl

import (
	"context"
	"testing"
)

// TestRoom: reservations wait for room; one larger than the room takes
// all of it and works alone; a nil room has no bound; a caller whose
// context ended gets none.
func TestRoom(t *testing.T) {
	r := NewRoom(10)
	ctx := context.Background()
	left := func() int64 { // the room left, probed without waiting
		for n := int64(10); n > 0; n-- {
			if r.sem.TryAcquire(n) {
				r.sem.Release(n)
				return n
			}
		}
		return 0
	}
	tests := []struct {
		body, left int64
	}{
		{8, 2},
		{10, 0},
		{100, 0}, // past the bound: all the room
		{0, 10},
	}
	for _, tt := range tests {
		release, err := r.Reserve(ctx, int(tt.body))
		if err != nil {
			t.Fatalf("%d bytes: %v", tt.body, err)
		}
		if got := left(); got != tt.left {
			t.Errorf("%d bytes left %d of 10, want %d", tt.body, got, tt.left)
		}
		release()
		if got := left(); got != 10 {
			t.Errorf("after %d bytes the room is %d, want 10", tt.body, got)
		}
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Reserve(gone, 1); err == nil {
		t.Error("a caller whose context ended still got room")
	}
	if NewRoom(0) != nil {
		t.Error("a room of 0 bytes is a bound")
	}
	var none *Room
	release, err := none.Reserve(gone, 1<<30)
	if err != nil {
		t.Fatalf("no room: %v", err)
	}
	release()
}
