// Package politeness spaces requests to each host: one request in flight
// per host, and at least a delay between the starts of two requests;
// and it bounds the requests in flight across hosts.
package politeness

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Gate is the in-process politeness mechanism, for one crawler process.
// The Lambda home keeps the same contract across invocations elsewhere.
type Gate struct {
	mu       sync.Mutex
	hosts    map[string]*hostState
	inFlight chan struct{} // a token per request in flight, any host; nil: no bound
	now      func() time.Time
	created  time.Time
}

// hostState is a host's slot. Its other fields belong to whoever holds
// the slot.
type hostState struct {
	slot     chan struct{} // one token: the right to send a request
	lastDone time.Time     // when the last request to the host finished
	share    bool          // the holder holds a share of the bound across hosts
}

// NewGate returns an empty gate that lets at most maxInFlight requests
// be in flight at once across hosts (0: no bound). It knows nothing of
// requests sent before it was made (by a crawl that was killed and is
// now resumed), so the first request to a host waits until one delay
// after its creation.
func NewGate(maxInFlight int) *Gate {
	g := &Gate{hosts: map[string]*hostState{}, now: time.Now, created: time.Now()}
	if maxInFlight > 0 {
		g.inFlight = make(chan struct{}, maxInFlight)
	}
	return g
}

// Sleep waits d (or until ctx is done) between a request to host and
// its retry, with the host's slot, which the caller holds (from Wait):
// the host asked us to back off, so its slot stays taken. The request's
// share of the bound across hosts is let go meanwhile, so that a host
// answering 503 with Retry-After does not keep a request of another
// host waiting, and taken back before Sleep returns. Should ctx end
// first, Sleep returns its error without the share, and done still
// frees the slot.
func (g *Gate) Sleep(ctx context.Context, host string, d time.Duration) error {
	g.mu.Lock()
	h := g.hosts[host]
	g.mu.Unlock()
	if h == nil {
		return fmt.Errorf("politeness: sleep for %s, whose slot is not held", host)
	}
	g.giveShare(h)
	if err := crawl.Sleep(ctx, d); err != nil {
		return err
	}
	return g.takeShare(ctx, h)
}

// takeShare takes a share of the bound across hosts for the holder of
// h's slot.
func (g *Gate) takeShare(ctx context.Context, h *hostState) error {
	if g.inFlight == nil {
		return nil
	}
	select {
	case g.inFlight <- struct{}{}:
		h.share = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// giveShare lets go of the share the holder of h's slot holds, if any.
func (g *Gate) giveShare(h *hostState) {
	if h.share {
		<-g.inFlight
		h.share = false
	}
}

// Wait blocks until a request to host may start: no other request to it
// in flight, fewer than the gate's bound in flight across hosts, and at
// least delay since the last one to host finished (so at the
// server, too, two requests start at least delay apart, whatever the
// network's latency). The delay is the caller's, so a Crawl-delay learned
// from robots.txt applies from the robots.txt request on. The caller
// must call done when its request (with any retries, each spaced by the
// caller) has finished: a request waiting to be retried (Sleep) keeps
// its host's slot, and counts against the bound only once it is sent
// again.
func (g *Gate) Wait(ctx context.Context, host string, delay time.Duration) (done func(), err error) {
	g.mu.Lock()
	h, ok := g.hosts[host]
	if !ok {
		h = &hostState{slot: make(chan struct{}, 1), lastDone: g.created}
		g.hosts[host] = h
	}
	g.mu.Unlock()

	select {
	case h.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// We hold the host's slot; lastDone is ours to read and write.
	if wait := h.lastDone.Add(delay).Sub(g.now()); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			<-h.slot
			return nil, ctx.Err()
		}
	}
	// The host's turn has come; the bound across hosts is taken last, so
	// that a request waiting for its host's delay holds no other host's
	// room.
	if err := g.takeShare(ctx, h); err != nil {
		<-h.slot
		return nil, err
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.lastDone = g.now()
			g.giveShare(h)
			<-h.slot
			// A worker waiting for the slot was just woken, to run
			// when this goroutine next blocks (it is next on this
			// core): let it send its request now. A host's requests
			// are one at a time, the crawl's one chain of waits, and
			// this goroutine has a page to store and hand on first
			// (BENCHMARKS.md, "Link rows a row per page, and GOGC=400").
			runtime.Gosched()
		})
	}, nil
}
