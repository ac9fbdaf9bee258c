package dynamo

import (
	"context"
	"errors"
	"sort"
	"sync"
	"testing"
	"time"
)

// within reports whether got is want, give or take tol.
func within(got, want, tol time.Duration) bool { return got >= want-tol && got <= want+tol }

// TestGateBook: a host's bookings follow one another, from any
// environment; a slot is the delay, or the longer one the host's last
// request asked for, plus what that request took, and a tenth; and the
// first slot is no sooner than the delay after the last request allows.
func TestGateBook(t *testing.T) {
	ctx := context.Background()
	const tol = 150 * time.Millisecond
	tests := []struct {
		name string
		// before leaves the host's gate in some state (nil: never used).
		before func(t *testing.T, g *Gate, host string)
		delay  time.Duration
		// wantFirst is how long after the call the first slot is, and
		// wantSlot how long a slot is.
		wantFirst, wantSlot time.Duration
	}{
		{name: "a host never seen", delay: time.Second, wantSlot: 1100 * time.Millisecond},
		{
			name: "after a request that took 300 ms",
			before: func(t *testing.T, g *Gate, host string) {
				done := mustWaitHost(t, g, host, 2*time.Second)
				time.Sleep(300 * time.Millisecond)
				done()
			},
			delay:     time.Second,
			wantFirst: 2 * time.Second, // the delay that request asked for
			wantSlot:  (2*time.Second + 300*time.Millisecond) * 11 / 10,
		},
		{
			name: "after a request whose delay was shorter than this one",
			before: func(t *testing.T, g *Gate, host string) {
				mustWaitHost(t, g, host, 100*time.Millisecond)()
			},
			delay:     2 * time.Second,
			wantFirst: 2 * time.Second, // this delay, from the last request's end
			wantSlot:  2200 * time.Millisecond,
		},
		{
			name: "after booking 5 slots",
			before: func(t *testing.T, g *Gate, host string) {
				if _, _, _, err := g.Book(ctx, host, 5, 200*time.Millisecond, time.Time{}); err != nil {
					t.Fatal(err)
				}
			},
			delay:     200 * time.Millisecond,
			wantFirst: 5 * 220 * time.Millisecond,
			wantSlot:  220 * time.Millisecond,
		},
		{
			name: "after slots booked that have passed",
			before: func(t *testing.T, g *Gate, host string) {
				if _, _, _, err := g.Book(ctx, host, 2, 100*time.Millisecond, time.Time{}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(400 * time.Millisecond)
			},
			delay:    time.Second,
			wantSlot: 1100 * time.Millisecond,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testDB(t)
			host := "book.example"
			if tt.before != nil {
				tt.before(t, NewGate(db, GateConfig{Lease: time.Minute}), host)
			}
			// Another environment books.
			g := NewGate(otherEnvironment(t, db), GateConfig{})
			now := time.Now()
			first, slot, _, err := g.Book(ctx, host, 3, tt.delay, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if got := first.Sub(now); !within(got, tt.wantFirst, tol) {
				t.Errorf("first slot in %v, want %v", got, tt.wantFirst)
			}
			if !within(slot, tt.wantSlot, 10*time.Millisecond+tt.wantSlot/50) {
				t.Errorf("slot %v, want %v", slot, tt.wantSlot)
			}
			// The next booking starts where this one ends.
			next, _, _, err := g.Book(ctx, host, 1, tt.delay, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if want := first.Add(3 * slot); !within(next.Sub(want), 0, 2*time.Millisecond) {
				t.Errorf("next booking at %v, want %v", next, want)
			}
		})
	}
}

// TestGateBookConcurrent: environments booking one host at once get
// slots that do not overlap.
func TestGateBookConcurrent(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	const envs, each = 4, 5
	type booking struct{ from, to time.Time }
	var (
		mu  sync.Mutex
		got []booking
		wg  sync.WaitGroup
	)
	for range envs {
		g := NewGate(otherEnvironment(t, db), GateConfig{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				first, slot, _, err := g.Book(ctx, "busy.example", 3, time.Second, time.Time{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, booking{first, first.Add(3 * slot)})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(got) != envs*each {
		t.Fatalf("%d bookings, want %d", len(got), envs*each)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].from.Before(got[j].from) })
	for i := 1; i < len(got); i++ {
		if got[i].from.Before(got[i-1].to) {
			t.Errorf("booking %v-%v overlaps the one before, %v-%v", got[i].from, got[i].to, got[i-1].from, got[i-1].to)
		}
	}
}

// TestGateDefersPastBookedSlots: a task the gate gives up on is to come
// back after the slots booked for the host's other tasks, not into one
// of them.
func TestGateDefersPastBookedSlots(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	srv, _ := loggingServer(t, 0)
	host := hostOf(t, srv.URL)
	holder := mustWaitHost(t, NewGate(db, GateConfig{Lease: time.Minute}), host, 0)
	defer holder()
	g := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 100 * time.Millisecond})
	first, slot, _, err := g.Book(ctx, host, 10, time.Second, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Wait(ctx, host, time.Second)
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("Wait = %v, want a *BusyError", err)
	}
	end := first.Add(10 * slot)
	if want := time.Until(end); !within(busy.RetryAfter, want, 200*time.Millisecond) {
		t.Errorf("retry after %v, want %v: after the booked slots", busy.RetryAfter, want)
	}
	// The deferred task has a slot of its own: the next booking starts
	// after it, not where the deferred task will come.
	next, _, _, err := g.Book(ctx, host, 1, time.Second, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !within(next.Sub(end), slot, 2*time.Millisecond) {
		t.Errorf("the next booking starts %v after the booked slots, want a slot (%v) later", next.Sub(end), slot)
	}
}

// TestGateBookUntil: Book books only the slots that start before until,
// and none, with no write, when the first would not.
func TestGateBookUntil(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	rc := &refusalCounter{API: testClient(t)}
	g := NewGate(New(rc, db.t), GateConfig{})
	now := time.Now()
	first, slot, k, err := g.Book(ctx, "cap.example", 10, time.Second, now.Add(3500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if k != 4 { // slots of 1.1 s from now: 0, 1.1, 2.2, 3.3 s
		t.Errorf("booked %d slots before 3.5 s, want 4", k)
	}
	next, _, k, err := g.Book(ctx, "cap.example", 10, time.Second, now.Add(3500*time.Millisecond))
	if err != nil || k != 0 {
		t.Errorf("a second booking before 3.5 s booked %d (%v), want none", k, err)
	}
	if want := first.Add(4 * slot); !within(next.Sub(want), 0, 2*time.Millisecond) {
		t.Errorf("the first free slot is at %v, want %v", next, want)
	}
	if rc.writes != 1 {
		t.Errorf("%d writes, want 1: a booking of nothing writes nothing", rc.writes)
	}
}

// TestGateLooksBeforeItTakes: a polite fetch that comes while the delay
// after another environment's request is still running reads the gate,
// waits, and takes it with one write, none refused; so does one for a
// free host. (A take refused is a billed write unit: at a 1 s delay SQS's
// whole seconds brought most tasks a little early.)
func TestGateLooksBeforeItTakes(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	mustWaitHost(t, NewGate(db, GateConfig{Lease: time.Minute}), "early.example", 300*time.Millisecond)()
	rc := &refusalCounter{API: testClient(t)}
	g := NewGate(New(rc, db.t), GateConfig{Lease: time.Minute, MaxWait: 5 * time.Second})
	start := time.Now()
	for _, host := range []string{"early.example", "free.example"} {
		done, err := g.Wait(ctx, host, 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		done()
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("took the host after %v: the delay after the last request (300 ms) did not hold", took)
	}
	// Two takes and two releases, none refused.
	if rc.writes != 4 || rc.refused != 0 {
		t.Errorf("%d writes, %d refused; want 4 and none", rc.writes, rc.refused)
	}
}
