// Package politeness spaces requests to each host: one request in flight
// per host, and at least a delay between the starts of two requests;
// and it bounds the requests in flight across hosts.
package politeness

import (
	"context"
	"runtime"
	"sync"
	"time"
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

type hostState struct {
	slot     chan struct{} // one token: the right to send a request
	lastDone time.Time     // when the last request to the host finished
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

// Wait blocks until a request to host may start: no other request to it
// in flight, fewer than the gate's bound in flight across hosts, and at
// least delay since the last one to host finished (so at the
// server, too, two requests start at least delay apart, whatever the
// network's latency). The delay is the caller's, so a Crawl-delay learned
// from robots.txt applies from the robots.txt request on. The caller
// must call done when its request (with any retries, each spaced by the
// caller) has finished: a request waiting to be retried counts as in
// flight, for its host and for the bound.
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
	if g.inFlight != nil {
		select {
		case g.inFlight <- struct{}{}:
		case <-ctx.Done():
			<-h.slot
			return nil, ctx.Err()
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.lastDone = g.now()
			if g.inFlight != nil {
				<-g.inFlight
			}
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
