package politeness

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestGateSpacesStartsAndSerializes: each request starts at least the
// delay after the previous one finished (hence after it started).
func TestGateSpacesStartsAndSerializes(t *testing.T) {
	const delay = 30 * time.Millisecond
	starts, maxInFlight := requests(t, NewGate(0), slices.Repeat([]string{"example.org"}, 5), delay, 2*time.Millisecond)
	if maxInFlight != 1 {
		t.Errorf("max in flight = %d, want 1", maxInFlight)
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < delay {
			t.Errorf("start %d came %v after the previous one, want >= %v", i, gap, delay)
		}
	}
}

func TestGateHostsIndependent(t *testing.T) {
	g := NewGate(0)
	g.created = time.Now().Add(-2 * time.Hour)
	doneA, err := g.Wait(context.Background(), "a.example", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer doneA()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	doneB, err := g.Wait(ctx, "b.example", time.Hour)
	if err != nil {
		t.Fatalf("b.example waited on a.example: %v", err)
	}
	doneB()
}

func TestGateWaitHonoursContext(t *testing.T) {
	g := NewGate(0)
	done, _ := g.Wait(context.Background(), "h", 0)
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Wait(ctx, "h", 0); err == nil {
		t.Fatal("Wait succeeded while the host's slot was held")
	}
}

func TestGateWaitsOneDelayAfterCreation(t *testing.T) {
	// A resumed crawl does not know when the killed one last sent a
	// request, so its first request to a host waits one delay.
	g := NewGate(0)
	const delay = 40 * time.Millisecond
	done, err := g.Wait(context.Background(), "h", delay)
	if err != nil {
		t.Fatal(err)
	}
	done()
	if since := time.Since(g.created); since < delay {
		t.Errorf("first request started %v after the gate was made, want >= %v", since, delay)
	}
}

// TestGateBoundsRequestsAcrossHosts: with a bound of n, at most n
// requests are in flight at once, each to its own host, and a request
// waiting for the bound gives up when its context is done.
func TestGateBoundsRequestsAcrossHosts(t *testing.T) {
	for _, n := range []int{1, 3} {
		var hosts []string
		for i := range 4*n + 2 {
			hosts = append(hosts, fmt.Sprintf("h%d.example", i))
		}
		_, maxInFlight := requests(t, NewGate(n), hosts, 0, 5*time.Millisecond)
		if maxInFlight != n {
			t.Errorf("bound %d: at most %d requests were in flight at once, want %d", n, maxInFlight, n)
		}
	}

	g := NewGate(1)
	done, err := g.Wait(context.Background(), "a.example", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.Wait(ctx, "b.example", 0); err == nil {
		t.Fatal("a second request started past a bound of 1")
	}
	done()
	// b.example's slot was given back when its wait gave up.
	doneB, err := g.Wait(context.Background(), "b.example", 0)
	if err != nil {
		t.Fatal(err)
	}
	doneB()
}

// requests sends a request to each of hosts at once through g, each
// taking hold once it may start, and returns when each started (in
// order) and how many were in flight at most at once.
func requests(t *testing.T, g *Gate, hosts []string, delay, hold time.Duration) (starts []time.Time, most int) {
	t.Helper()
	var mu sync.Mutex
	inFlight := 0
	var wg sync.WaitGroup
	for _, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := g.Wait(context.Background(), h, delay)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			starts = append(starts, time.Now())
			inFlight++
			most = max(most, inFlight)
			mu.Unlock()
			time.Sleep(hold)
			mu.Lock()
			inFlight--
			mu.Unlock()
			done()
		}()
	}
	wg.Wait()
	return starts, most
}

// TestSleepLetsShareGo: a request waiting to be retried keeps its
// host's slot but not its share of the bound across hosts, which it
// takes back before it is sent again; and when its wait for the share
// is cut short, done frees its host without taking another's share.
func TestSleepLetsShareGo(t *testing.T) {
	ctx := context.Background()
	g := NewGate(1)
	doneA, err := g.Wait(ctx, "a.example", 0)
	if err != nil {
		t.Fatal(err)
	}
	slept := make(chan error, 1)
	go func() { slept <- g.Sleep(ctx, "a.example", 200*time.Millisecond) }()

	// Another host's request goes while a.example's waits to be retried.
	short, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
	defer cancel()
	doneB, err := g.Wait(short, "b.example", 0)
	if err != nil {
		t.Fatalf("b.example waited for a.example's retry: %v", err)
	}
	// a.example's slot stays taken.
	if _, err := g.Wait(short, "a.example", 0); err == nil {
		t.Fatal("a second request to a.example started while the first waited to be retried")
	}
	// The retry waits for the share b.example holds.
	select {
	case err := <-slept:
		t.Fatalf("Sleep returned (%v) while the only share was held by b.example", err)
	case <-time.After(150 * time.Millisecond):
	}
	doneB()
	if err := <-slept; err != nil {
		t.Fatal(err)
	}
	// Retried, a.example holds the share again.
	if _, err := g.Wait(timeout(t, 30*time.Millisecond), "c.example", 0); err == nil {
		t.Fatal("c.example started while a.example's retry held the only share")
	}
	doneA()

	// A Sleep cut short while waiting for the share returns without it:
	// done then frees the host and gives back no share it does not hold.
	doneA, err = g.Wait(ctx, "a.example", 0)
	if err != nil {
		t.Fatal(err)
	}
	sleepCtx, stop := context.WithCancel(ctx)
	go func() { slept <- g.Sleep(sleepCtx, "a.example", time.Millisecond) }()
	doneB, err = g.Wait(timeout(t, time.Second), "b.example", 0)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a.example now waits for b.example's share
	stop()
	if err := <-slept; err == nil {
		t.Fatal("Sleep cut short returned no error")
	}
	doneA()
	if _, err := g.Wait(timeout(t, 30*time.Millisecond), "c.example", 0); err == nil {
		t.Fatal("c.example started while b.example held the only share: a.example's done gave back b.example's")
	}
	doneB()
	doneA, err = g.Wait(timeout(t, time.Second), "a.example", 0)
	if err != nil {
		t.Fatalf("a.example's slot was not freed: %v", err)
	}
	doneA()
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
