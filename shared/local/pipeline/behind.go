package pipeline

import (
	"context"
	"fmt"
)

// behind hands messages to the next stage inline (see inline), but in
// goroutines of their own, and returns as soon as each has one: the
// fetch worker that recorded a page goes on to its next fetch while the
// page is parsed, its links admitted and its summary written. At most
// cap(slots) messages are handled at once; past that, Send waits for a
// slot, so fetches never run far ahead of what the writer keeps up with.
//
// Nothing is lost by not waiting: a message the handler fails on goes
// to its durable queue (inline), and a page whose hand-off a stop cuts
// short is recorded without a summary, which the next run hands on
// (runner.handOn). The run counts the hand-offs under way as pending
// work (runner.handingOn, read by runner.pendingWork), so it does not
// end before they do, and waits for them (runner.handOffs) before it
// releases anything at resume and before it closes the database. A
// hand-off neither handled nor queued (the database failed) is kept
// (runner.handOffFailed): the run then ends with that error, and the
// next run hands the page on.
type behind struct {
	inline
	slots chan struct{}
}

func (r *runner) behind(w worker, n int) behind {
	return behind{inline: r.inline(w), slots: make(chan struct{}, n)}
}

func (s behind) Send(ctx context.Context, bodies ...[]byte) error {
	for _, b := range bodies {
		select {
		case s.slots <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		s.r.handingOn.Add(1)
		s.r.handOffs.Add(1)
		go func() {
			defer func() {
				s.r.handingOn.Add(-1)
				<-s.slots
				s.r.handOffs.Done()
				s.r.wakeDrive()
			}()
			if err := s.inline.Send(ctx, b); err != nil && ctx.Err() == nil {
				// Neither handled nor queued (the database failed): the
				// crawl stays recorded without its summary, and the next
				// run hands it on.
				s.r.log.ErrorContext(ctx, "handing a page on failed; the next run hands it on", "queue", s.w.queue, "err", err)
				s.r.handOffFailed(err)
			}
		}()
	}
	return nil
}

// handOffFailed keeps the first hand-off error of the run (behind).
func (r *runner) handOffFailed(err error) {
	r.handOffMu.Lock()
	defer r.handOffMu.Unlock()
	if r.handOffErr == nil {
		r.handOffErr = fmt.Errorf("hand a fetched page on (the next run hands it on): %w", err)
	}
	r.stopIfUnwritable(err)
}

// waitHandOffs waits for the hand-offs under way and returns the first
// that failed, if any did.
func (r *runner) waitHandOffs() error {
	r.handOffs.Wait()
	r.handOffMu.Lock()
	defer r.handOffMu.Unlock()
	return r.handOffErr
}
