package politeness

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestGateSpacesStartsAndSerializes: each request starts at least the
// delay after the previous one finished (hence after it started).
func TestGateSpacesStartsAndSerializes(t *testing.T) {
	g := NewGate()
	const delay = 30 * time.Millisecond
	var mu sync.Mutex
	var starts []time.Time
	inFlight, maxInFlight := 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := g.Wait(context.Background(), "example.org", delay)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			starts = append(starts, time.Now())
			inFlight++
			maxInFlight = max(maxInFlight, inFlight)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			inFlight--
			mu.Unlock()
			done()
		}()
	}
	wg.Wait()
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
	g := NewGate()
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
	g := NewGate()
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
	g := NewGate()
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
