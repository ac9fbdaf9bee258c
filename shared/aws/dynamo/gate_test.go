package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// otherEnvironment is a store over db's tables with a client of its own,
// as a separate Lambda execution environment has.
func otherEnvironment(t *testing.T, db *DB) *DB {
	return New(testClient(t), db.t)
}

// visit is one request as the server saw it.
type visit struct{ start, end time.Time }

// loggingServer answers every request after hold, logging when each
// started and ended.
func loggingServer(t *testing.T, hold time.Duration) (*httptest.Server, func() []visit) {
	var mu sync.Mutex
	var log []visit
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		time.Sleep(hold)
		mu.Lock()
		log = append(log, visit{start, time.Now()})
		mu.Unlock()
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, func() []visit {
		mu.Lock()
		defer mu.Unlock()
		out := append([]visit(nil), log...)
		sort.Slice(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
		return out
	}
}

func TestGateSpacesRequestsAcrossEnvironments(t *testing.T) {
	db := testDB(t)
	const (
		workers  = 5
		requests = 3
		delay    = 60 * time.Millisecond
		hold     = 15 * time.Millisecond
	)
	srv, visits := loggingServer(t, hold)
	host := hostOf(t, srv.URL)
	var wg sync.WaitGroup
	errs := make(chan error, workers*requests)
	for w := range workers {
		g := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 30 * time.Second})
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range requests {
				done, err := g.Wait(context.Background(), host, delay)
				if err != nil {
					errs <- fmt.Errorf("worker %d request %d: %w", w, i, err)
					return
				}
				resp, err := http.Get(srv.URL)
				if err == nil {
					resp.Body.Close()
				}
				done()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v := visits()
	if len(v) != workers*requests {
		t.Fatalf("server saw %d requests, want %d", len(v), workers*requests)
	}
	for i := 1; i < len(v); i++ {
		if v[i].start.Before(v[i-1].end) {
			t.Errorf("request %d started %v before request %d ended: two in flight", i, v[i-1].end.Sub(v[i].start), i-1)
		} else if gap := v[i].start.Sub(v[i-1].end); gap < delay {
			t.Errorf("request %d started %v after request %d ended, want at least %v", i, gap, i-1, delay)
		}
	}
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

func TestGateBusy(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		holder      func(t *testing.T, g *Gate) // leaves the host in some state
		delay       time.Duration
		maxWait     time.Duration
		wantBusy    bool
		retryFrom   time.Duration // RetryAfter within [retryFrom, retryTo]
		retryTo     time.Duration
		waitAtLeast time.Duration // when not busy
	}{
		{
			name:   "in flight, and the delay alone exceeds MaxWait",
			holder: func(t *testing.T, g *Gate) { mustWait(t, g, 0) },
			delay:  time.Second, maxWait: 100 * time.Millisecond,
			wantBusy: true, retryFrom: 900 * time.Millisecond, retryTo: time.Second,
		},
		{
			name:   "in flight, MaxWait zero",
			holder: func(t *testing.T, g *Gate) { mustWait(t, g, 0) },
			delay:  0, maxWait: 0,
			wantBusy: true, retryFrom: time.Millisecond, retryTo: gatePoll,
		},
		{
			name:   "finished, the holder's delay still running",
			holder: func(t *testing.T, g *Gate) { mustWait(t, g, 3*time.Second)() },
			delay:  0, maxWait: 100 * time.Millisecond,
			wantBusy: true, retryFrom: 2500 * time.Millisecond, retryTo: 3 * time.Second,
		},
		{
			name:   "finished, the waiter's own delay still running",
			holder: func(t *testing.T, g *Gate) { mustWait(t, g, 0)() },
			delay:  2 * time.Second, maxWait: 100 * time.Millisecond,
			wantBusy: true, retryFrom: 1500 * time.Millisecond, retryTo: 2 * time.Second,
		},
		{
			name:   "finished, the delay runs out within MaxWait",
			holder: func(t *testing.T, g *Gate) { mustWait(t, g, 300*time.Millisecond)() },
			delay:  0, maxWait: 2 * time.Second,
			waitAtLeast: 250 * time.Millisecond,
		},
		{
			name: "in flight, finished within MaxWait",
			holder: func(t *testing.T, g *Gate) {
				done := mustWait(t, g, 0)
				time.AfterFunc(200*time.Millisecond, done)
			},
			delay: 100 * time.Millisecond, maxWait: 3 * time.Second,
			waitAtLeast: 300 * time.Millisecond,
		},
		{
			name:   "free host",
			holder: func(t *testing.T, g *Gate) {},
			delay:  time.Second, maxWait: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testDB(t)
			tt.holder(t, NewGate(db, GateConfig{Lease: time.Minute}))
			g := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: tt.maxWait})
			start := time.Now()
			done, err := g.Wait(ctx, "example.com", tt.delay)
			took := time.Since(start)
			var busy *BusyError
			if tt.wantBusy {
				if !errors.As(err, &busy) {
					t.Fatalf("Wait = %v, want a *BusyError", err)
				}
				if busy.Host != "example.com" || busy.RetryAfter < tt.retryFrom || busy.RetryAfter > tt.retryTo {
					t.Errorf("BusyError %+v, want host example.com and RetryAfter in [%v, %v]", busy, tt.retryFrom, tt.retryTo)
				}
				if took > tt.maxWait+time.Second {
					t.Errorf("gave up after %v, MaxWait is %v", took, tt.maxWait)
				}
				return
			}
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			done()
			if took < tt.waitAtLeast {
				t.Errorf("Wait took %v, want at least %v", took, tt.waitAtLeast)
			}
		})
	}
}

// TestGateRemoteWaitBounded: waiters give up on a host another process
// holds after MaxRemoteWait, not MaxWait, all of this process's at once
// (not each after the one before); a waiter for its own process's turn
// still waits out the delay between its requests.
func TestGateRemoteWaitBounded(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	holder := mustWait(t, NewGate(db, GateConfig{Lease: time.Minute}), 0)
	defer holder()
	g := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 5 * time.Second, MaxRemoteWait: 300 * time.Millisecond})
	start := time.Now()
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := g.Wait(ctx, "example.com", 0)
			errs <- err
		}()
	}
	for range 8 {
		var busy *BusyError
		if err := <-errs; !errors.As(err, &busy) {
			t.Errorf("Wait on a host held elsewhere = %v, want a *BusyError", err)
		}
	}
	// One after the other, they would take 8 x 300ms at least.
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("eight waiters gave up after %v; MaxRemoteWait is 300ms, MaxWait 5s", took)
	}

	// The delay after this process's own request, once no waiter here
	// remembers it (the host's turn is forgotten), is still waited out:
	// no request is in flight.
	own := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 5 * time.Second, MaxRemoteWait: 100 * time.Millisecond})
	mustWaitHost(t, own, "own.example", 0)()
	start = time.Now()
	done, err := own.Wait(ctx, "own.example", 1500*time.Millisecond)
	if err != nil {
		t.Fatalf("the delay after this process's own last request: %v, want it waited out", err)
	}
	done()
	if took := time.Since(start); took < time.Second {
		t.Errorf("took the slot after %v, want the 1.5s delay", took)
	}

	local := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 5 * time.Second, MaxRemoteWait: 100 * time.Millisecond, MaxRequest: time.Minute})
	first, err := local.Wait(ctx, "local.example", 600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		done, err := local.Wait(ctx, "local.example", 600*time.Millisecond)
		if err == nil {
			done()
		}
		second <- err
	}()
	time.Sleep(50 * time.Millisecond)
	first()
	if err := <-second; err != nil {
		t.Errorf("a waiter for its own process's turn, 600ms after the last request: %v, want the slot", err)
	}
}

// mustWait takes example.com's slot with the given delay.
func mustWait(t *testing.T, g *Gate, delay time.Duration) func() {
	t.Helper()
	return mustWaitHost(t, g, "example.com", delay)
}

// mustWaitHost takes host's slot with the given delay.
func mustWaitHost(t *testing.T, g *Gate, host string, delay time.Duration) func() {
	t.Helper()
	done, err := g.Wait(context.Background(), host, delay)
	if err != nil {
		t.Fatalf("holder's Wait: %v", err)
	}
	return done
}

func TestGateTakesOverExpiredLease(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	crashed := NewGate(db, GateConfig{Lease: 300 * time.Millisecond})
	lateDone := mustWait(t, crashed, 0) // and never gives it back in time

	g := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 5 * time.Second})
	start := time.Now()
	done, err := g.Wait(ctx, "example.com", 0)
	if err != nil {
		t.Fatalf("Wait after the holder crashed: %v", err)
	}
	if took := time.Since(start); took < 250*time.Millisecond {
		t.Errorf("took the slot after %v, before the lease ran out", took)
	}

	// The crashed holder coming back must not free the new holder's slot.
	lateDone()
	third := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute})
	var busy *BusyError
	if _, err := third.Wait(ctx, "example.com", 0); !errors.As(err, &busy) {
		t.Fatalf("Wait while the new holder has the slot = %v, want a *BusyError", err)
	}
	done()
	// The slot is free again from the next whole millisecond (the gate
	// rounds last_done up), so this waiter may wait that long, no more.
	fourth := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 50 * time.Millisecond})
	d4, err := fourth.Wait(ctx, "example.com", 0)
	if err != nil {
		t.Fatalf("Wait after the new holder finished: %v", err)
	}
	d4()
}

func TestGateHostsAreIndependent(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	g := NewGate(db, GateConfig{MaxWait: 0})
	done, err := g.Wait(ctx, "a.example", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	d2, err := g.Wait(ctx, "b.example", time.Hour)
	if err != nil {
		t.Fatalf("a busy a.example held up b.example: %v", err)
	}
	d2()
	d2() // done twice is harmless
}

func TestGateWaitEndsWithContext(t *testing.T) {
	db := testDB(t)
	// MaxWait well past the minute's wait: the gate rounds the release up
	// to the next millisecond, so a MaxWait of exactly a minute could
	// answer busy instead of waiting.
	g := NewGate(db, GateConfig{MaxWait: 2 * time.Minute})
	mustWait(t, g, time.Minute)()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := g.Wait(ctx, "example.com", 0)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait = %v, want the context's error", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Wait returned %v after its context ended", took)
	}
}

// retriedAPI sends the first gate UpdateItem twice, as the SDK does when
// a write succeeded but its answer was lost: the caller sees the second
// answer.
type retriedAPI struct {
	API
	once sync.Once
}

func (r *retriedAPI) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	retried := false
	r.once.Do(func() { retried = true })
	if retried {
		if _, err := r.API.UpdateItem(ctx, in, opts...); err != nil {
			return nil, err
		}
	}
	return r.API.UpdateItem(ctx, in, opts...)
}

// TestGateSurvivesALostAnswer: taking the slot whose answer was lost and
// retried takes it, instead of finding it held (by ourselves) and
// deferring every fetch of the host until the lease runs out.
func TestGateSurvivesALostAnswer(t *testing.T) {
	db := testDB(t)
	lossy := New(&retriedAPI{API: db.api}, db.t)
	g := NewGate(lossy, GateConfig{Lease: time.Minute, MaxWait: 200 * time.Millisecond})
	done, err := g.Wait(context.Background(), "example.com", 0)
	if err != nil {
		t.Fatalf("Wait with a retried write: %v", err)
	}
	done()
	other := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 200 * time.Millisecond})
	d2, err := other.Wait(context.Background(), "example.com", 0)
	if err != nil {
		t.Fatalf("the slot is not free after done: %v", err)
	}
	d2()
}

// TestGateRefusalBringsTheGate: a refused take returns the gate as it
// found it (ReturnValuesOnConditionCheckFailure), the same item a read
// would give, so a waiter needs no second request to know how long to
// wait.
func TestGateRefusalBringsTheGate(t *testing.T) {
	db := testDB(t)
	g := NewGate(db, GateConfig{})
	if until, _, err := g.acquire(t.Context(), "held.example", "first", time.Second); until.IsZero() || err != nil {
		t.Fatalf("first take: lease until %v, %v", until, err)
	}
	until, held, err := g.acquire(t.Context(), "held.example", "second", time.Second)
	if !until.IsZero() || err != nil {
		t.Fatalf("second take of a held slot: lease until %v, %v", until, err)
	}
	read, err := g.read(t.Context(), "held.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(held) == 0 || !reflect.DeepEqual(held, read) {
		t.Errorf("the refusal brought %v, a read gives %v", held, read)
	}
}

// refusalCounter counts the gate's writes, and those DynamoDB refused.
type refusalCounter struct {
	API
	mu              sync.Mutex
	writes, refused int
}

func (r *refusalCounter) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := r.API.UpdateItem(ctx, in, opts...)
	r.mu.Lock()
	r.writes++
	if conditionFailed(err) {
		r.refused++
	}
	r.mu.Unlock()
	return out, err
}

// TestGateWaitersInOneProcessTakeTurns: the fetches of one invocation
// that share a host ask DynamoDB one at a time, a delay after the last
// one, so they are neither refused (a billed write each) nor let two
// requests overlap or start within the delay; each hands the slot to the
// next in the write that records its end, so n requests take n+1
// writes, not 2n. Against two environments the refusals are races of
// the two, a few, not one per poll of every waiter. While
// the lease left covers the next request (MaxRequest), the hand-on is
// not even a write: n requests take two.
func TestGateWaitersInOneProcessTakeTurns(t *testing.T) {
	const (
		waiters = 8
		delay   = 40 * time.Millisecond
		hold    = 10 * time.Millisecond
	)
	tests := []struct {
		name         string
		environments int
		maxRequest   time.Duration
		maxRefused   int
		maxWrites    int
	}{
		// A waiter refused once reads the gate until it looks free,
		// rather than writing again: refusals are races between the two
		// environments' pollers, a few (7 or 8 when every poll was a
		// write).
		{"one environment", 1, 0, 0, waiters + 1},
		{"two environments", 2, 0, 6, 2*(waiters+1) + 8},
		// The lease (a minute) outlasts every request: the take and the
		// give back are the only writes.
		{"one environment, lease covers the requests", 1, 10 * time.Second, 0, 2},
		// It never covers them: a write each, as without MaxRequest.
		{"one environment, lease too short", 1, 2 * time.Minute, 0, waiters + 1},
		{"two environments, lease covers the requests", 2, 10 * time.Second, 6, 2 * waiters},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := testDB(t)
			srv, visits := loggingServer(t, hold)
			host := hostOf(t, srv.URL)
			var counters []*refusalCounter
			var wg sync.WaitGroup
			errs := make(chan error, tt.environments*waiters)
			for range tt.environments {
				rc := &refusalCounter{API: testClient(t)}
				counters = append(counters, rc)
				g := NewGate(New(rc, db.t), GateConfig{Lease: time.Minute, MaxWait: 30 * time.Second, MaxRequest: tt.maxRequest})
				for range waiters {
					wg.Add(1)
					go func() {
						defer wg.Done()
						done, err := g.Wait(t.Context(), host, delay)
						if err != nil {
							errs <- err
							return
						}
						defer done()
						resp, err := http.Get(srv.URL)
						if err != nil {
							errs <- err
							return
						}
						resp.Body.Close()
					}()
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			refused, writes := 0, 0
			for _, rc := range counters {
				refused += rc.refused
				writes += rc.writes
			}
			if refused > tt.maxRefused {
				t.Errorf("%d refused takes for %d requests, want at most %d", refused, tt.environments*waiters, tt.maxRefused)
			}
			if writes > tt.maxWrites {
				t.Errorf("%d gate writes for %d requests, want at most %d", writes, tt.environments*waiters, tt.maxWrites)
			}
			v := visits()
			if len(v) != tt.environments*waiters {
				t.Fatalf("server saw %d requests, want %d", len(v), tt.environments*waiters)
			}
			for i := 1; i < len(v); i++ {
				if gap := v[i].start.Sub(v[i-1].end); gap < delay {
					t.Errorf("request %d started %v after request %d ended, want at least %v", i, gap, i-1, delay)
				}
			}
			t.Logf("%d gate writes, %d refused, for %d requests", writes, refused, tt.environments*waiters)
		})
	}
}

// TestGateHandedSlotGivenBackWhenNobodyTakesIt: a slot handed on to a
// waiter here that then gives up (its delay runs past MaxWait) is given
// back, not held until its lease runs out.
func TestGateHandedSlotGivenBackWhenNobodyTakesIt(t *testing.T) {
	db := testDB(t)
	g := NewGate(db, GateConfig{Lease: time.Minute, MaxWait: 300 * time.Millisecond})
	done, err := g.Wait(t.Context(), "example.com", 0)
	if err != nil {
		t.Fatal(err)
	}
	busy := make(chan error, 1)
	go func() {
		// Waits for the turn, gets the slot handed on, and then finds
		// its own delay too long to wait.
		_, err := g.Wait(t.Context(), "example.com", 5*time.Second)
		busy <- err
	}()
	time.Sleep(100 * time.Millisecond)
	done()
	var be *BusyError
	if err := <-busy; !errors.As(err, &be) {
		t.Fatalf("the second waiter: %v, want a *BusyError", err)
	}
	other := NewGate(otherEnvironment(t, db), GateConfig{Lease: time.Minute, MaxWait: 3 * time.Second})
	d2, err := other.Wait(t.Context(), "example.com", 0)
	if err != nil {
		t.Fatalf("another environment after the handed slot was left: %v (held until its lease runs out?)", err)
	}
	d2()
}

// TestGateRenewsAShortLease: a slot handed on with no write whose lease
// left no longer covers a request (MaxRequest) is renewed before the
// request, so that another environment, polling all along, never finds
// the lease run out while a request of this one is in flight.
func TestGateRenewsAShortLease(t *testing.T) {
	const (
		waiters = 6
		hold    = 100 * time.Millisecond
	)
	db := testDB(t)
	srv, visits := loggingServer(t, hold)
	host := hostOf(t, srv.URL)
	rc := &refusalCounter{API: testClient(t)}
	// The lease covers about two requests: each hand-on after the
	// second finds too little of it left.
	g := NewGate(New(rc, db.t), GateConfig{Lease: 500 * time.Millisecond, MaxRequest: 300 * time.Millisecond, MaxWait: 30 * time.Second})
	other := NewGate(otherEnvironment(t, db), GateConfig{Lease: 500 * time.Millisecond, MaxWait: 30 * time.Second})
	get := func(g *Gate) error {
		done, err := g.Wait(t.Context(), host, 0)
		if err != nil {
			return err
		}
		defer done()
		resp, err := http.Get(srv.URL)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	var wg sync.WaitGroup
	errs := make(chan error, waiters+1)
	for range waiters {
		wg.Go(func() { errs <- get(g) })
	}
	// The other environment asks while the first holds the host.
	time.Sleep(50 * time.Millisecond)
	wg.Go(func() { errs <- get(other) })
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	v := visits()
	if len(v) != waiters+1 {
		t.Fatalf("server saw %d requests, want %d", len(v), waiters+1)
	}
	for i := 1; i < len(v); i++ {
		if v[i].start.Before(v[i-1].end) {
			t.Errorf("request %d started before request %d ended: two in flight", i, i-1)
		}
	}
	// A take, the renewals, a give-back: more than two writes.
	if rc.writes <= 2 {
		t.Errorf("%d gate writes for %d requests under a short lease, want renewals", rc.writes, waiters)
	}
	t.Logf("%d gate writes, %d refused, for %d requests", rc.writes, rc.refused, waiters)
}
