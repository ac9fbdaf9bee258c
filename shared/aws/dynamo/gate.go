package dynamo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// A host's gate item (control table, pk "host#"+host, sk "gate"); times
// are Unix milliseconds:
//
//	lease_until   while a request is in flight: when its lease runs out
//	holder        while a request is in flight: the holder's random token
//	last_done     when the last request to the host finished (rounded up)
//	next_allowed  last_done plus the delay its holder asked for
//	took          how long the last request held the slot (its retries
//	              included), when its holder said
//	booked_until  the end of the slots booked for the host's queued tasks
//	              (Book)
//	host          the host, for people reading the table
const (
	gtLeaseUntil  = "lease_until"
	gtHolder      = "holder"
	gtLastDone    = "last_done"
	gtNextAllowed = "next_allowed"
	gtTook        = "took"
	gtBookedUntil = "booked_until"
	gtHost        = "host"

	gtPKPrefix = "host#"
	gtSK       = "gate"
)

// gatePoll is the least time a waiter sleeps before it looks at a
// host's gate again while the host has a request in flight.
const gatePoll = 50 * time.Millisecond

// maxDefer is the longest a deferred task can be put off: SQS's cap on a
// message's delay.
const maxDefer = 15 * time.Minute

// gateRelease bounds the write that gives a host's slot back.
const gateRelease = 10 * time.Second

// GateConfig configures a Gate.
type GateConfig struct {
	// Lease is the longest a request may hold a host's slot: when its
	// holder neither finishes nor gives it back in time (it crashed, or
	// its Lambda timed out), the slot is free again. It must be longer
	// than any request with its retries; the Lambda's timeout is a safe
	// choice. Default 2 minutes.
	Lease time.Duration
	// MaxWait is the longest Wait waits for a host before it gives up
	// with a *BusyError. 0: it does not wait at all.
	MaxWait time.Duration
	// MaxRemoteWait, if set and shorter, bounds the part of that wait
	// spent on a host that another process holds, polling its gate
	// item; and when a waiter gives up so, the others here waiting for
	// the same host give up too, at once. A process whose own fetches
	// keep a host hands it from one to the next under its lease, so a
	// waiter elsewhere rarely gets it before MaxWait: it is better
	// deferred than kept polling (a read each time, a billed write for
	// each refusal, and the Lambda's time). A wait for this process's
	// own turn, the delay between its own requests, is not bounded by
	// it.
	MaxRemoteWait time.Duration
	// MaxRequest is the longest one request (with its retries) holds
	// the slot; in a Lambda function, its timeout. When set, the slot
	// is handed on to the next waiter here with no write: the lease
	// still keeps the other environments out, a holder whose lease left
	// does not cover MaxRequest renews it before its request, and the
	// write that gives the slot back records the last request's end.
	// 0: every hand-on is a write.
	MaxRequest time.Duration
	// Log, if set, reports slots that could not be given back.
	Log *slog.Logger
}

// Gate spaces requests to each host across processes, like
// politeness.Gate does in one: one request in flight per host, and at
// least a delay from the end of a request to a host to the start of the
// next. The state is one control table item per host, changed only by
// conditional writes, so separate Lambda environments, each with its
// own Gate, share it. It implements the fetch stage's Politeness.
//
// Within one process the waiters for a host also take turns (local):
// only one of them at a time asks DynamoDB for the slot, and the next
// one asks once the delay after the last local request has run. Without
// that, the ten fetches of a fetcher invocation that share a host each
// polled the gate, and every refused conditional write is billed (a
// write unit each: about $3.40 per million pages on the documentation
// tree, BENCHMARKS.md).
type Gate struct {
	db  *DB
	cfg GateConfig

	mu    sync.Mutex
	local map[string]*localTurn
}

// localTurn is one host's turn-taking among this process's waiters.
type localTurn struct {
	turn    chan struct{} // holding its one slot: this process's turn at the host
	waiters int           // waiters holding or waiting for the turn (under Gate.mu)
	// Set by a holder as it gives the turn back (read by the next
	// holder, after the channel hands the turn on): when its request
	// ended, and the delay it asked for.
	lastDone  time.Time
	lastDelay time.Duration
	lastTook  time.Duration
	// held is the host's slot in DynamoDB that the last holder handed
	// on to the next one here (under Gate.mu; token "": none).
	held slot
	// elsewhere is when, as a waiter here that gave up found (under
	// Gate.mu; MaxRemoteWait), the host held by another process may be
	// free: the waiters after it give up until then without asking.
	elsewhere time.Time
}

// slot is a host's slot in DynamoDB as held here: the token it is held
// under and when its lease runs out (as written; later in fact).
type slot struct {
	token string
	until time.Time
}

// NewGate returns a gate over the store's control table.
func NewGate(db *DB, cfg GateConfig) *Gate {
	if cfg.Lease <= 0 {
		cfg.Lease = 2 * time.Minute
	}
	return &Gate{db: db, cfg: cfg, local: map[string]*localTurn{}}
}

// BusyError is what Wait returns when the host will not be free within
// the gate's MaxWait: rather than spend the Lambda's time sleeping, the
// caller should put the work back with a delay of RetryAfter (an SQS
// DelaySeconds, at most 15 minutes).
type BusyError struct {
	Host string
	// RetryAfter is when the host is expected to be free: exact when
	// only the delay holds it back, a lower bound while a request is in
	// flight (one delay, or until its lease runs out if that is sooner).
	RetryAfter time.Duration
	// elsewhere: the wait was given up on a request in flight, held by
	// another process (MaxRemoteWait).
	elsewhere bool
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("host %s is busy: retry after %v", e.Host, e.RetryAfter)
}

// Later says when to handle the busy host's work again
// (handlers.Deferred).
func (e *BusyError) Later() time.Duration { return e.RetryAfter }

// Wait takes host's slot once no request to it is in flight and at
// least delay has passed since the last one finished (as asked by that
// request's caller too: the longer of the two delays applies). It waits
// at most the gate's MaxWait, then returns a *BusyError. The caller must
// call done when its request (with any retries) has finished; done
// records the end and frees the slot. A slot not given back is free
// again after the gate's Lease.
//
// A task given up on with a delay gets a slot of its own after those
// booked for the host's other tasks (Book), and its RetryAfter says
// when: sent back for the moment the host looks free, it came in the
// next booked task's slot, and one of the two was deferred again. (With
// no delay nothing is booked: the scheduler spreads tasks only over a
// delay, which the fetcher asks for too.)
func (g *Gate) Wait(ctx context.Context, host string, delay time.Duration) (done func(), err error) {
	done, err = g.take(ctx, host, delay)
	var busy *BusyError
	if errors.As(err, &busy) && delay > 0 {
		// Within SQS's 15-minute cap on a delay: a slot past it would be
		// sent at the cap, early, into another's.
		if first, _, _, berr := g.Book(ctx, host, 1, delay, g.db.now().Add(maxDefer)); berr == nil {
			busy.RetryAfter = max(busy.RetryAfter, first.Sub(g.db.now()))
		} else {
			g.logf(ctx, "politeness gate: book a slot for a deferred task of %s: %v", host, berr)
		}
	}
	return done, err
}

// Sleep waits d between a request to host and its retry. The host's
// item stays taken, as it did before the gate had this method: its
// Lease must outlast a request with its retries (GateConfig.Lease).
// Nothing else is held, since the Lambda home bounds requests across
// hosts by the fetcher's concurrency, not by the gate.
func (g *Gate) Sleep(ctx context.Context, host string, d time.Duration) error {
	return crawl.Sleep(ctx, d)
}

// take is Wait without the slot booked for a task given up on.
func (g *Gate) take(ctx context.Context, host string, delay time.Duration) (done func(), err error) {
	if host == "" {
		return nil, crawl.E("politeness gate", crawl.KindInvalid, errors.New("empty host"))
	}
	delay = max(delay, 0)
	deadline := g.db.now().Add(g.cfg.MaxWait)
	lt, err := g.takeTurn(ctx, host, delay, deadline)
	if err != nil {
		return nil, err
	}
	if wait := g.heldElsewhere(lt); wait > 0 {
		g.giveTurn(host, lt, time.Time{}, 0, 0, slot{})
		return nil, &BusyError{Host: host, RetryAfter: wait}
	}
	held := g.takeHeld(lt)
	if held.token != "" && g.cfg.MaxRequest > 0 && held.until.Before(g.db.now().Add(g.cfg.MaxRequest)) {
		// Handed on with no write, and the lease left does not cover
		// this request: renew it, in one write.
		// (With this request's delay: the gate item's next_allowed less
		// last_done is the delay a booking reads as the host's.)
		next, ok := g.handOn(ctx, host, held.token, delay, 0)
		switch {
		case ok:
			held = next
		case next.token != "":
			g.release(ctx, host, next.token, 0, 0)
			held = slot{}
		default:
			held = slot{}
		}
	}
	if held.token == "" {
		remote := deadline
		if g.cfg.MaxRemoteWait > 0 {
			remote = minTime(deadline, g.db.now().Add(g.cfg.MaxRemoteWait))
		}
		if held, err = g.wait(ctx, host, delay, deadline, remote); err != nil {
			var busy *BusyError
			if errors.As(err, &busy) && busy.elsewhere {
				g.mu.Lock()
				lt.elsewhere = g.db.now().Add(busy.RetryAfter)
				g.mu.Unlock()
			}
			g.giveTurn(host, lt, time.Time{}, 0, 0, slot{})
			return nil, err
		}
	}
	var once sync.Once
	started := g.db.now()
	return func() {
		once.Do(func() {
			end := g.db.now()
			took := end.Sub(started)
			if g.othersWaiting(lt) {
				if g.cfg.MaxRequest > 0 {
					// No write at all: the next holder here starts a
					// delay after this request's end (takeTurn), and
					// renews the lease first if what is left of it
					// does not cover a request.
					g.giveTurn(host, lt, end, delay, took, held)
					return
				}
				// One write instead of a release and the next take: the
				// slot goes to the next waiter here.
				next, ok := g.handOn(ctx, host, held.token, delay, took)
				if ok {
					g.giveTurn(host, lt, end, delay, took, next)
					return
				}
				if next.token == "" {
					g.giveTurn(host, lt, end, delay, took, slot{})
					return
				}
			}
			g.release(ctx, host, held.token, delay, took)
			g.giveTurn(host, lt, end, delay, took, slot{})
		})
	}, nil
}

// othersWaiting reports whether another waiter here wants lt's host.
func (g *Gate) othersWaiting(lt *localTurn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return lt.waiters > 1
}

// heldElsewhere is how long a waiter here that gave up on lt's host
// found it would stay held by another process (0: none did, or that
// time has come).
func (g *Gate) heldElsewhere(lt *localTurn) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return max(lt.elsewhere.Sub(g.db.now()), 0)
}

// takeHeld takes the slot a previous holder handed on, if any.
func (g *Gate) takeHeld(lt *localTurn) slot {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := lt.held
	lt.held = slot{}
	return s
}

// takeTurn waits, until deadline at most, for this process's turn at
// host, and then for the delay after the request of the turn's last
// holder. The turn must be given back (giveTurn).
func (g *Gate) takeTurn(ctx context.Context, host string, delay time.Duration, deadline time.Time) (*localTurn, error) {
	g.mu.Lock()
	lt := g.local[host]
	if lt == nil {
		lt = &localTurn{turn: make(chan struct{}, 1)}
		g.local[host] = lt
	}
	lt.waiters++
	g.mu.Unlock()

	select {
	case lt.turn <- struct{}{}:
	default:
		t := time.NewTimer(max(deadline.Sub(g.db.now()), 0))
		defer t.Stop()
		select {
		case lt.turn <- struct{}{}:
		case <-t.C:
			g.leave(host, lt)
			// Another waiter here holds the host: free, at the soonest,
			// a delay after its request.
			return nil, &BusyError{Host: host, RetryAfter: max(delay, gatePoll)}
		case <-ctx.Done():
			g.leave(host, lt)
			return nil, fmt.Errorf("politeness gate of %s: %w", host, ctx.Err())
		}
	}
	if lt.lastDone.IsZero() {
		return lt, nil
	}
	free := lt.lastDone.Add(max(delay, lt.lastDelay))
	wait := free.Sub(g.db.now())
	if wait <= 0 {
		return lt, nil
	}
	if free.After(deadline) {
		g.giveTurn(host, lt, time.Time{}, 0, 0, slot{})
		return nil, &BusyError{Host: host, RetryAfter: wait}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return lt, nil
	case <-ctx.Done():
		g.giveTurn(host, lt, time.Time{}, 0, 0, slot{})
		return nil, fmt.Errorf("politeness gate of %s: %w", host, ctx.Err())
	}
}

// giveTurn hands host's turn on; a holder whose request ran says when
// it ended, the delay it asked for and how long it took (zero when it
// made none), and the DynamoDB slot it hands on with the turn (token "":
// none).
func (g *Gate) giveTurn(host string, lt *localTurn, done time.Time, delay, took time.Duration, held slot) {
	if !done.IsZero() {
		lt.lastDone, lt.lastDelay, lt.lastTook = done, delay, took
	}
	if held.token != "" {
		g.mu.Lock()
		lt.held = held
		g.mu.Unlock()
	}
	<-lt.turn
	g.leave(host, lt)
}

// leave forgets a host no waiter here holds or waits for. What its last
// holder left (lastDone) goes with it: the next waiter's first ask may
// then be refused, and the refusal says how long to wait. A slot handed
// on to waiters that gave up is given back.
// The release is made before leave returns, not in the background: a
// Lambda environment may be frozen as soon as its handler returns.
func (g *Gate) leave(host string, lt *localTurn) {
	g.mu.Lock()
	var held slot
	var delay, took time.Duration
	if lt.waiters--; lt.waiters == 0 {
		delete(g.local, host)
		held, delay, took = lt.held, lt.lastDelay, lt.lastTook
		lt.held = slot{}
	}
	g.mu.Unlock()
	if held.token != "" {
		g.release(context.Background(), host, held.token, delay, took)
	}
}

// wait takes host's slot in DynamoDB, waiting until deadline at most.
// While a request of another holder is in flight, it waits until
// remote at most (MaxRemoteWait); for the delay after the last request
// alone, until deadline.
func (g *Gate) wait(ctx context.Context, host string, delay time.Duration, deadline, remote time.Time) (slot, error) {
	token := uuid.NewString()
	// A fetch with a delay looks before it takes. The scheduler books a
	// host's tasks a slot apart, but SQS delivers them at whole seconds:
	// at a 1 s delay most came a few milliseconds before the delay after
	// the last request had run, and their first take was refused, 0.6
	// write units a page (BENCHMARKS.md, "#15, 2026-11-28 (later)").
	look := delay > 0
	for {
		var held map[string]types.AttributeValue
		looking := look
		if !look {
			until, refused, err := g.acquire(ctx, host, token, delay)
			if err != nil {
				return slot{}, fmt.Errorf("politeness gate of %s: %w", host, err)
			}
			if !until.IsZero() {
				return slot{token: token, until: until}, nil
			}
			held = refused
		}
		look = false
		// Refused: the write brought the gate back with it (an endpoint
		// that does not send it is asked). Until the gate looks free, it
		// is read again, not written: a refused write is billed a write
		// unit, a strongly consistent read of the small item a fifth of
		// that.
		for {
			if len(held) == 0 {
				var err error
				if held, err = g.read(ctx, host); err != nil {
					return slot{}, fmt.Errorf("politeness gate of %s: %w", host, err)
				}
			}
			wait, inFlight, err := g.freeIn(held, delay)
			if err != nil {
				return slot{}, fmt.Errorf("politeness gate of %s: %w", host, err)
			}
			limit := deadline
			if inFlight {
				limit = remote
			}
			if wait <= 0 && looking {
				break // free at a look: taken now, whatever the deadline
			}
			if g.db.now().Add(wait).After(limit) {
				return slot{}, &BusyError{Host: host, RetryAfter: wait, elsewhere: inFlight && remote.Before(deadline)}
			}
			if wait <= 0 {
				break
			}
			// A little jitter, so that waiters do not all come back at once.
			wait += rand.N(min(wait/10, gatePoll) + 1)
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return slot{}, fmt.Errorf("politeness gate of %s: %w", host, ctx.Err())
			}
			held = nil
		}
	}
}

func gateKey(host string) map[string]types.AttributeValue { return ctlKey(gtPKPrefix+host, gtSK) }

// msFloor and msCeil are t in Unix milliseconds, rounded down and up:
// times compared against "now" are rounded so that the rounding never
// shortens a delay.
func msFloor(t time.Time) int64 { return t.UnixMilli() }

func msCeil(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

func durCeilMS(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }

// acquire takes the host's slot if it is free, and returns when the
// lease it wrote runs out (zero when it did not take the slot); when it
// did not, held is the gate as the refusal found it (nil if the endpoint
// did not return it), so that no second read is needed.
// The slot already held under this token counts as taken: a write that
// succeeded but whose answer was lost (a timeout, then the SDK's retry)
// must not leave the slot held, by us, against ourselves until the lease
// runs out. Seen in make e2e under load: every fetch of the host
// deferred for the lease's three minutes.
func (g *Gate) acquire(ctx context.Context, host, token string, delay time.Duration) (until time.Time, held map[string]types.AttributeValue, err error) {
	now := g.db.now()
	nowMS := msFloor(now)
	lease := msCeil(now.Add(g.cfg.Lease))
	_, err = g.db.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(g.db.t.Control),
		Key:                                 gateKey(host),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		UpdateExpression:                    aws.String("SET #lu = :lu, #h = :tok, #host = :host"),
		ConditionExpression: aws.String("(attribute_not_exists(#lu) OR #lu <= :now)" +
			" AND (attribute_not_exists(#na) OR #na <= :now)" +
			" AND (attribute_not_exists(#ld) OR #ld <= :cut)" +
			" OR #h = :tok"),
		ExpressionAttributeNames: map[string]string{"#lu": gtLeaseUntil, "#h": gtHolder, "#host": gtHost,
			"#na": gtNextAllowed, "#ld": gtLastDone},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":lu":   fxN(lease),
			":tok":  fxS(token),
			":host": fxS(host),
			":now":  fxN(nowMS),
			":cut":  fxN(nowMS - durCeilMS(delay)),
		},
	})
	var refused *types.ConditionalCheckFailedException
	if errors.As(err, &refused) {
		return time.Time{}, refused.Item, nil
	}
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("take slot: %w", err)
	}
	return time.UnixMilli(lease), nil, nil
}

// read returns the host's gate item, read consistently.
func (g *Gate) read(ctx context.Context, host string) (map[string]types.AttributeValue, error) {
	out, err := g.db.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(g.db.t.Control),
		Key:            gateKey(host),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("read gate: %w", err)
	}
	return out.Item, nil
}

// freeIn returns how long until a host's slot, as its gate item says,
// may be free for a request with the given delay, and whether a request
// holds it now (in flight).
func (g *Gate) freeIn(item map[string]types.AttributeValue, delay time.Duration) (time.Duration, bool, error) {
	r := fxReader{m: item}
	lease, next, last := r.optInt(gtLeaseUntil), r.optInt(gtNextAllowed), r.optInt(gtLastDone)
	if r.err != nil {
		return 0, false, fmt.Errorf("read gate: %w", r.err)
	}
	now := g.db.now()
	if lease != nil {
		if until := time.UnixMilli(*lease).Sub(now); until > 0 {
			// In flight: its end and then a delay, unless the lease runs
			// out first.
			return min(until, max(delay, gatePoll)), true, nil
		}
	}
	free := now
	if next != nil {
		free = laterOf(free, time.UnixMilli(*next))
	}
	if last != nil {
		// As acquire compares: in whole milliseconds, the delay rounded up.
		free = laterOf(free, time.UnixMilli(*last+durCeilMS(delay)))
	}
	return free.Sub(now), false, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// release gives back the slot held under token: it records the end of
// the request (and, when took is set, how long it took) and frees the
// host.
func (g *Gate) release(ctx context.Context, host, token string, delay, took time.Duration) {
	switch _, err := g.finish(ctx, host, token, delay, took, ""); {
	case conditionFailed(err):
		// Our lease ran out and another request took the slot:
		// its own release records the end.
		g.logf(ctx, "politeness gate: lease of %s ran out before the request finished", host)
	case err != nil:
		g.logf(ctx, "politeness gate: give back %s (free again when its lease runs out): %v", host, err)
	}
}

// handOn records the end of the request held under token and hands the
// slot to a new token in the same write, for the next waiter in this
// process. ok is false when the write failed: next's token is "" if the
// slot was no longer ours (the lease ran out), else the caller releases
// it.
func (g *Gate) handOn(ctx context.Context, host, token string, delay, took time.Duration) (next slot, ok bool) {
	next.token = uuid.NewString()
	until, err := g.finish(ctx, host, token, delay, took, next.token)
	switch {
	case err == nil:
		next.until = until
		return next, true
	case conditionFailed(err):
		g.logf(ctx, "politeness gate: lease of %s ran out before the request finished", host)
		return slot{}, false
	default:
		g.logf(ctx, "politeness gate: hand %s on: %v", host, err)
		return slot{token: token}, false
	}
}

// finish records the end of the request held under token (last_done,
// and next_allowed a delay later; took, if set) in one write conditional
// on holding the slot, and frees the host or, when next is set, makes
// next its holder, with a lease from the end of the delay the next
// request waits, and returns when that lease runs out.
func (g *Gate) finish(ctx context.Context, host, token string, delay, took time.Duration, next string) (time.Time, error) {
	// The request's context may be over by now; the write is due anyway.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateRelease)
	defer cancel()
	now := g.db.now()
	update := "SET #ld = :ld, #na = :na REMOVE #lu, #h"
	values := map[string]types.AttributeValue{
		":ld":  fxN(msCeil(now)),
		":na":  fxN(msCeil(now.Add(delay))),
		":tok": fxS(token),
	}
	var until time.Time
	if next != "" {
		update = "SET #ld = :ld, #na = :na, #lu = :lu, #h = :next"
		lease := msCeil(now.Add(delay + g.cfg.Lease))
		values[":lu"], values[":next"] = fxN(lease), fxS(next)
		until = time.UnixMilli(lease)
	}
	if took > 0 {
		update = strings.Replace(update, "SET ", "SET #tk = :tk, ", 1)
		values[":tk"] = fxN(durCeilMS(took))
	}
	_, err := g.db.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(g.db.t.Control),
		Key:                       gateKey(host),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String("#h = :tok"),
		ExpressionAttributeNames:  finishNames(took > 0),
		ExpressionAttributeValues: values,
	})
	return until, err
}

// finishNames are finish's attribute names; DynamoDB refuses a name the
// expressions do not use.
func finishNames(took bool) map[string]string {
	names := map[string]string{"#ld": gtLastDone, "#na": gtNextAllowed, "#lu": gtLeaseUntil, "#h": gtHolder}
	if took {
		names["#tk"] = gtTook
	}
	return names
}

func (g *Gate) logf(ctx context.Context, format string, args ...any) {
	if g.cfg.Log != nil {
		g.cfg.Log.WarnContext(ctx, fmt.Sprintf(format, args...))
	}
}
