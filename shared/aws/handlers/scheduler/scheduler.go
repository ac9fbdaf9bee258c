// Package scheduler builds the scheduler function: it admits the
// enqueue events of SQS batches, releases due candidates to the fetch
// queue, and on the recrawl schedule releases what is due again.
package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/schedule"
)

// Needs are the environment variables the function cannot start without.
var Needs = []string{"CANDIDATES_TABLE", "CONTROL_TABLE", "ENQUEUE_QUEUE_URL", "FETCH_QUEUE_URL", "DEAD_LETTER_QUEUE_URL"}

// New builds the scheduler's handler.
func New(ctx context.Context, e handlers.Env) (*Scheduler, error) {
	s, c := e.Settings, e.Clients
	db := dynamo.New(c.DynamoDB, s.Tables)
	if _, err := s.RegisterAgent(ctx, db, "scheduler"); err != nil {
		return nil, err
	}
	// The tasks that admissions release (ReleaseOnAdmit) go out once the
	// batch is handled, in one spread for the whole batch
	// (sqsbatch.Gather); a release outside a batch sends at once.
	spread := &SpreadingSender{Queue: sqsq.New(c.SQS, s.FetchQueue), Delay: s.Delay,
		Slots: dynamo.NewGate(db, dynamo.GateConfig{}), Log: e.Log}
	h := &Scheduler{
		Sched: schedule.New(db, sqsbatch.Gather(spread), schedule.Policy{MaxDepth: s.MaxDepth, KillOutOfScope: !s.RecordOutOfScope,
			ReleaseOnAdmit: true, Room: spread}, e.Log),
		Status: db,
		Batch: sqsbatch.Processor{Queue: "enqueue", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue),
			Visibility: handlers.Visibility{Queue: sqsq.New(c.SQS, s.EnqueueQueue)}, Log: e.Log},
		Metrics:      emf.New(e.Metrics, "scheduler"),
		Log:          e.Log,
		Usage:        awsmeter.NewReporter(c.Meter, e.Metrics, "scheduler", s.MemoryMB),
		ReleaseLimit: 1000,
		// Longer than the longest spread delay (15 min) plus a fetch.
		StaleAfter: 30 * time.Minute,
	}
	// Sites (seed 001): their events come on the enqueue queue, and their
	// rules decide admission and release (docs/sites.md).
	if err := h.Sched.UseSites(ctx, db); err != nil {
		return nil, err
	}
	h.Init()
	return h, nil
}

// Handler is New's handler, for handlers.Start.
func Handler(ctx context.Context, e handlers.Env) (func(context.Context, json.RawMessage) (any, error), error) {
	h, err := New(ctx, e)
	if err != nil {
		return nil, err
	}
	return h.Handle, nil
}

// StatusReader answers enqueue_type status events.
type StatusReader interface {
	Status(ctx context.Context, url string) (crawl.URLStatus, error)
}

// Scheduler is the scheduler function: it admits the enqueue events of
// an SQS batch, then releases due candidates to the fetch queue; on the
// recrawl schedule it releases what is due (recrawls included) and
// re-releases candidates whose fetch message was lost.
type Scheduler struct {
	Sched   *schedule.Scheduler
	Status  StatusReader
	Batch   sqsbatch.Processor // its Handle is set by Init
	Metrics *emf.Recorder
	Log     *slog.Logger
	// Usage, if set, writes what each invocation asked of AWS.
	Usage *awsmeter.Reporter
	// ReleaseLimit caps the candidates one invocation releases.
	ReleaseLimit int

	sitesRead time.Time // see refreshSites
	// StaleAfter is how long a released candidate may go without a
	// recorded crawl before it is released again.
	StaleAfter time.Duration
}

// Init sets the batch handler; call it once before Handle.
func (h *Scheduler) Init() {
	h.Batch.HandleSent = h.admit
}

// admit handles an enqueue queue message that SQS took at sent.
func (h *Scheduler) admit(ctx context.Context, body []byte, sent time.Time) error {
	if crawl.MessageType(body) == crawl.SiteEventType {
		return h.manageSite(ctx, body)
	}
	ev, err := crawl.ParseEnqueueEvent(body)
	if err != nil {
		return err
	}
	if ev.RequestedAt == 0 && !sent.IsZero() {
		// The first send's time, on every delivery: a forced event
		// delivered again after its crawl is met by it (MetBy).
		ev.RequestedAt = sent.Unix()
	}
	var statusErr error
	err = h.Sched.AdmitEach(ctx, ev, func(ev crawl.EnqueueEvent, out schedule.Outcome) {
		h.Metrics.Add("Admissions", emf.Count, 1, "Outcome", string(out))
		if out == schedule.StatusAsk && h.Status != nil && statusErr == nil {
			st, err := h.Status.Status(ctx, ev.URL)
			switch {
			case errors.Is(err, crawl.ErrNotFound):
				// An answer, not a failure: a question about a URL the
				// crawl does not know is no message to dead-letter.
				h.Log.InfoContext(ctx, "url status", "url", ev.URL, "status", "not known to the crawl")
			case err != nil:
				statusErr = err
			default:
				h.Log.InfoContext(ctx, "url status", "url", ev.URL, "status", st)
			}
		}
	})
	if err != nil {
		return err
	}
	return statusErr
}

// manageSite carries out a site event; one that cannot be (malformed,
// an unknown site, an ID taken) is an invalid message: dead-lettered
// with its reason.
func (h *Scheduler) manageSite(ctx context.Context, body []byte) error {
	ev, err := crawl.ParseSiteEvent(body)
	if err != nil {
		return err
	}
	site, err := h.Sched.ManageSite(ctx, ev)
	if err != nil {
		return err
	}
	h.Metrics.Add("SiteEvents", emf.Count, 1, "Op", string(ev.Op))
	h.Log.InfoContext(ctx, "site event", "op", ev.Op, "site", site.ID, "state", site.State.String(), "roots", len(site.Roots))
	return nil
}

// refreshSites reads the sites again at most every
// schedule.SiteRefreshEvery in an environment: a change made by another
// invocation takes effect within that.
func (h *Scheduler) refreshSites(ctx context.Context) error {
	if time.Since(h.sitesRead) < schedule.SiteRefreshEvery {
		return nil
	}
	if err := h.Sched.RefreshSites(ctx); err != nil {
		return err
	}
	h.sitesRead = time.Now()
	return nil
}

// ScheduleEvent is the Input of the recrawl schedule.
type ScheduleEvent struct {
	Source string `json:"source"`
	Action string `json:"action"`
}

// Handle takes an SQS batch of enqueue events or a schedule event.
func (h *Scheduler) Handle(ctx context.Context, raw json.RawMessage) (out any, err error) {
	inv := h.Usage.Start(ctx)
	defer func() {
		resp, _ := out.(events.SQSEventResponse)
		inv.End(len(resp.BatchItemFailures), err)
	}()
	defer h.Metrics.Flush()
	var probe struct {
		Records []json.RawMessage `json:"Records"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("scheduler: event is not JSON: %w", err)
	}
	if err := h.refreshSites(ctx); err != nil {
		return nil, err
	}
	if probe.Records != nil {
		var ev events.SQSEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, fmt.Errorf("scheduler: decode SQS event: %w", err)
		}
		inv.Batch(ev)
		resp, err := h.Batch.Process(ctx, ev)
		if err != nil {
			return resp, err
		}
		// Admitted URLs are due now: release them without waiting for
		// the schedule. A failure here loses nothing (the schedule
		// releases them later), so the batch's outcome stands.
		if _, err := h.release(ctx); err != nil {
			h.Log.ErrorContext(ctx, "releasing after admission failed; the schedule will", "err", err)
		}
		return resp, nil
	}
	var se ScheduleEvent
	if err := json.Unmarshal(raw, &se); err != nil || se.Action != "release" {
		return nil, fmt.Errorf("scheduler: not an SQS batch nor a schedule event {\"action\":\"release\"}: %s", crawl.Truncate(string(raw), 200))
	}
	// Sites whose RecrawlDate has come: their roots are due now.
	if _, err := h.Sched.RecrawlSites(ctx); err != nil {
		return nil, err
	}
	requeued, err := h.Sched.Requeue(ctx, h.StaleAfter, h.ReleaseLimit)
	if err != nil {
		return nil, err
	}
	released, err := h.release(ctx)
	if err != nil {
		return nil, err
	}
	h.Log.InfoContext(ctx, "schedule run", "released", released, "requeued", requeued)
	return map[string]int{"released": released, "requeued": requeued}, nil
}

// release sends due candidates to fetch, in rounds, until none is left,
// the limit is reached or the invocation is near its deadline.
func (h *Scheduler) release(ctx context.Context) (int, error) {
	total := 0
	for total < h.ReleaseLimit {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 10*time.Second {
			break
		}
		n, err := h.Sched.Release(ctx, min(100, h.ReleaseLimit-total))
		total += n
		if err != nil {
			return total, err
		}
		if n == 0 {
			break
		}
	}
	h.Metrics.Add("Released", emf.Count, float64(total))
	return total, nil
}

// DelayedSender sends messages, each with a delay of its own.
type DelayedSender interface {
	SendEach(ctx context.Context, msgs ...sqsq.Delayed) error
}

// SpreadingSender sends fetch tasks spaced per host: each task of a
// host is sent to be visible in a slot of its own, so tasks reach the
// fetcher about when the host's politeness lets them through, instead
// of all at once to be deferred again and again. The slots are booked
// in the host's gate item (Slots, dynamo.Gate.Book), which every
// scheduler environment's sends and the fetchers' requests share: a
// host's tasks continue after those sent before, by this environment or
// another, and a slot is as long as the host's last request took with
// its delay, and a tenth. Without Slots, or when a booking fails, the sender
// spaces a host's tasks a delay apart after the last one it sent itself.
// SQS caps a message delay at 15 minutes, and rounds it up to whole
// seconds; so the sender is also the scheduler's HostRoom, which
// releases a host's tasks only as far as spreadHorizon ahead.
type SpreadingSender struct {
	Queue DelayedSender
	Delay time.Duration
	Slots Booker
	Log   *slog.Logger

	mu    sync.Mutex
	hosts map[string]*spread
}

// spread is what a SpreadingSender knows of one host's slots.
type spread struct {
	end    time.Time     // when the slots booked last end
	slot   time.Duration // how long the last booking's slots were
	booked bool          // a booking in the gate item said end and slot
	taken  int           // tasks released (Take) and not yet sent
	since  time.Time     // when the last of those was taken
}

// spreadHorizon is how far ahead a host's tasks are released: below SQS's
// 15-minute cap on a message's delay, and well below the scheduler's
// StaleAfter, after which a queued task not yet fetched is released
// again.
const spreadHorizon = 10 * time.Minute

// takenFor is how long tasks taken but never sent (their batch failed,
// or their candidate's write) count against their host's room, after
// the last was taken.
const takenFor = 2 * time.Minute

// firstTake bounds the tasks of a host released before a booking has
// said where its slots end and how long they are: other environments
// may have booked it far ahead, and its requests or its robots.txt
// Crawl-delay may make a slot much longer than the delay.
const firstTake = 10

// Take implements schedule.HostRoom: whether one more task of host fits
// before spreadHorizon, after the slots booked and the tasks taken. A
// site's request delay, when longer than the sender's, spaces them.
func (s *SpreadingSender) Take(host string, delay time.Duration) bool {
	delay = max(delay, s.Delay)
	if delay <= 0 || host == "" {
		return true
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.host(host, now)
	if h.taken > 0 && now.Sub(h.since) > takenFor {
		h.taken = 0
	}
	if s.Slots != nil && !h.booked && h.taken >= firstTake {
		return false
	}
	slot := max(h.slot, delay)
	if h.from(now).Add(time.Duration(h.taken+1) * slot).After(now.Add(spreadHorizon)) {
		return false
	}
	h.taken++
	h.since = now
	return true
}

// host is host's spread, made if new (under s.mu).
func (s *SpreadingSender) host(host string, now time.Time) *spread {
	if s.hosts == nil || len(s.hosts) > maxSpreadHosts {
		s.hosts = s.pruned(now)
	}
	h := s.hosts[host]
	if h == nil {
		h = &spread{}
		s.hosts[host] = h
	}
	return h
}

// Booker books a host's slots for up to n tasks, those that start before
// until, and says when the first is, how far apart they are and how many
// it booked (dynamo.Gate.Book).
type Booker interface {
	Book(ctx context.Context, host string, n int, delay time.Duration, until time.Time) (first time.Time, slot time.Duration, booked int, err error)
}

// Check returns the error Send would return for a body the queue would
// refuse (sqsbatch.Sender), when the queue can tell.
func (s *SpreadingSender) Check(bodies ...[]byte) error {
	if c, ok := s.Queue.(interface{ Check(...[]byte) error }); ok {
		return c.Check(bodies...)
	}
	return nil
}

// Send implements the scheduler's Sender. The tasks go ten to a
// SendMessageBatch call whatever their delays (SQS takes a delay per
// entry): sent a call per delay, a polite crawl of one host paid a
// request per task. A host's delay is the sender's, or its site's
// request delay (the task's) where that is longer. A task whose slot
// would start past SQS's cap on a delay is not sent: it would come at
// the cap, early, into another task's slot. Its candidate, released
// (queued) without a message as after a failed send, is released again
// once it is stale (the scheduler's StaleAfter); Take keeps this rare.
func (s *SpreadingSender) Send(ctx context.Context, bodies ...[]byte) error {
	var hosts []string
	tasks := map[string][]int{}
	delays := map[string]time.Duration{}
	for i, b := range bodies {
		var t crawl.FetchTask
		host := ""
		if json.Unmarshal(b, &t) == nil {
			if u, err := url.Parse(t.URL); err == nil {
				host = u.Host
			}
		}
		if _, ok := tasks[host]; !ok {
			hosts = append(hosts, host)
		}
		tasks[host] = append(tasks[host], i)
		delays[host] = max(delays[host], s.Delay, time.Duration(t.DelayMS)*time.Millisecond)
	}
	delayOf := make([]time.Duration, len(bodies))
	now := time.Now()
	for _, host := range hosts {
		first, slot, n := now, time.Duration(0), len(tasks[host])
		if d := delays[host]; d > 0 {
			first, slot, n = s.book(ctx, host, n, d, now)
		}
		for k, i := range tasks[host] {
			if k >= n {
				delayOf[i] = -1 // not sent
				continue
			}
			delayOf[i] = min(max(first.Add(time.Duration(k)*slot).Sub(now), 0), sqsq.MaxDelay)
		}
		if left := len(tasks[host]) - n; left > 0 && s.Log != nil {
			s.Log.InfoContext(ctx, "spread fetch tasks: slots past SQS's 15 minutes left unsent, released again when stale",
				"host", host, "tasks", left)
		}
	}
	msgs := make([]sqsq.Delayed, 0, len(bodies))
	for i, d := range delayOf {
		if d >= 0 {
			msgs = append(msgs, sqsq.Delayed{Body: bodies[i], Delay: d})
		}
	}
	return s.Queue.SendEach(ctx, msgs...)
}

// book books up to n slots of host, those that start within SQS's cap:
// in its gate item, or in this sender's memory; either way it remembers
// where they end, for Take. It returns the first slot, the slot's length
// and how many it booked.
func (s *SpreadingSender) book(ctx context.Context, host string, n int, delay time.Duration, now time.Time) (time.Time, time.Duration, int) {
	first, slot, k, err := time.Time{}, time.Duration(0), 0, error(nil)
	if s.Slots != nil && host != "" {
		if first, slot, k, err = s.Slots.Book(ctx, host, n, delay, now.Add(sqsq.MaxDelay)); err != nil && s.Log != nil {
			s.Log.WarnContext(ctx, "spread fetch tasks: booking failed, spaced from this environment's memory", "host", host, "error", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.host(host, now)
	h.taken = max(h.taken-n, 0)
	if s.Slots != nil && host != "" && err == nil {
		// Where the host's slots end, for every environment: Take
		// measures the room from there.
		h.end, h.slot, h.booked = first.Add(time.Duration(k)*slot), slot, true
		return first, slot, k
	}
	first, slot = h.from(now), delay
	// Past SQS's cap the tasks all come at the cap: the next slot stays a
	// delay after it, not further on.
	h.end, h.slot = first.Add(time.Duration(n)*slot), slot
	if reach := now.Add(sqsq.MaxDelay + slot); h.end.After(reach) {
		h.end = reach
	}
	return first, slot, n
}

// from is when the host's next slot may start: now, or the end of its
// slots booked if that is later.
func (h *spread) from(now time.Time) time.Time {
	if h.end.After(now) {
		return h.end
	}
	return now
}

// maxSpreadHosts bounds the hosts a SpreadingSender remembers: past it,
// those whose slots have passed, with no task taken, are forgotten.
const maxSpreadHosts = 10000

// pruned is s.hosts without the hosts whose slots have passed and that
// have no task taken.
func (s *SpreadingSender) pruned(now time.Time) map[string]*spread {
	out := map[string]*spread{}
	for host, h := range s.hosts {
		if h.end.After(now) || h.taken > 0 {
			out[host] = h
		}
	}
	return out
}
