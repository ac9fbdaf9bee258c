package crawl

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// Room bounds the bytes a process works on at once: the bodies its
// parsers read (ParseRoom), the documents its summarizers decode. Each
// caller reserves what it holds and gives it back when done; one larger
// than the room takes all of it and works alone. A nil Room has no
// bound.
type Room struct {
	size int64
	sem  *semaphore.Weighted
}

// NewRoom returns a room of size bytes, or nil (no bound) when size is 0
// or less.
func NewRoom(size int64) *Room {
	if size <= 0 {
		return nil
	}
	return &Room{size: size, sem: semaphore.NewWeighted(size)}
}

// Reserve waits until n bytes fit in the room, or ctx ends; the caller
// calls the function it returns when done.
func (r *Room) Reserve(ctx context.Context, n int) (release func(), err error) {
	if r == nil {
		return func() {}, nil
	}
	w := min(int64(max(n, 0)), r.size)
	if err := r.sem.Acquire(ctx, w); err != nil {
		return nil, err
	}
	return func() { r.sem.Release(w) }, nil
}
