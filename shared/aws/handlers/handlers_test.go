package handlers_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/scheduler"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/stage/schedule"
)

// queue records what the handlers send, as SQS would receive it.
type queue struct {
	mu         sync.Mutex
	sent       []sent
	visibility map[string]time.Duration
	calls      int   // SendEach calls
	fail       error // what SendEach returns, having sent nothing
}

type sent struct {
	body  string
	delay time.Duration
	attrs map[string]string
}

func (q *queue) SendEach(_ context.Context, msgs ...sqsq.Delayed) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.calls++
	if q.fail != nil {
		return q.fail
	}
	for _, m := range msgs {
		q.sent = append(q.sent, sent{body: string(m.Body), delay: m.Delay})
	}
	return nil
}

func (q *queue) SendWithAttributes(_ context.Context, b []byte, attrs map[string]string) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, sent{body: string(b), attrs: attrs})
	return nil
}

func (q *queue) ChangeVisibility(_ context.Context, handle string, d time.Duration) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.visibility == nil {
		q.visibility = map[string]time.Duration{}
	}
	q.visibility[handle] = d
	return nil
}

func sqsEvent(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d", i), ReceiptHandle: fmt.Sprintf("h%d", i),
			Body: b, Attributes: map[string]string{"ApproximateReceiveCount": "1"}, EventSource: "aws:sqs"})
	}
	return ev
}

func newScheduler(t *testing.T) (*scheduler.Scheduler, *sqlite.DB, *queue, *queue) {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	fetchQ, dlq := &queue{}, &queue{}
	log := slog.New(slog.DiscardHandler)
	h := &scheduler.Scheduler{
		Sched: schedule.New(db, sqsbatch.Gather(&scheduler.SpreadingSender{Queue: fetchQ, Delay: time.Second}),
			schedule.Policy{MaxDepth: -1, ReleaseOnAdmit: true}, log),
		Status:       db,
		Batch:        sqsbatch.Processor{Queue: "enqueue", DeadLetters: dlq, Log: log},
		Metrics:      emf.New(io.Discard, "scheduler"),
		Log:          log,
		ReleaseLimit: 500, StaleAfter: 30 * time.Minute,
	}
	h.Init()
	return h, db, fetchQ, dlq
}

func TestSchedulerAdmitsAndReleases(t *testing.T) {
	h, db, fetchQ, dlq := newScheduler(t)
	ev := sqsEvent(`{"v":1,"url":"http://a.test/","max_depth":2}`, `http://a.test/b`, `{"url": 5}`, `"http://a.test/b"`)
	raw, _ := json.Marshal(ev)
	out, err := h.Handle(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	if resp := out.(events.SQSEventResponse); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v; want none (the malformed event is dead-lettered, not retried)", resp.BatchItemFailures)
	}
	if len(dlq.sent) != 1 || dlq.sent[0].body != `{"url": 5}` || !strings.Contains(dlq.sent[0].attrs["reason"], "not a valid enqueue event") ||
		dlq.sent[0].attrs["source_queue"] != "enqueue" {
		t.Fatalf("dead letters = %+v; want the malformed event with its reason", dlq.sent)
	}
	// Two URLs of one host: released at once, the second a delay later.
	if len(fetchQ.sent) != 2 {
		t.Fatalf("fetch tasks %+v; want 2", fetchQ.sent)
	}
	delays := map[time.Duration]bool{}
	for _, s := range fetchQ.sent {
		var task crawl.FetchTask
		if err := json.Unmarshal([]byte(s.body), &task); err != nil {
			t.Fatal(err)
		}
		c, err := db.GetCandidate(context.Background(), task.URL)
		if err != nil || c.State != crawl.StateQueued || c.CrawlUUID != task.CrawlUUID {
			t.Errorf("candidate %s = %+v, %v; want queued as %s", task.URL, c, err, task.CrawlUUID)
		}
		delays[s.delay] = true
	}
	if !delays[0] || !delays[time.Second] {
		t.Errorf("delays %v; want 0 and 1s (spaced per host)", delays)
	}
	if fetchQ.calls != 1 {
		t.Errorf("the two tasks took %d sends, want one (a delay per entry)", fetchQ.calls)
	}
}

func TestSchedulerSchedule(t *testing.T) {
	h, db, fetchQ, _ := newScheduler(t)
	ctx := context.Background()
	// A candidate due now, as a recrawl would leave it.
	if err := db.AddScopeHost(ctx, "a.test"); err != nil {
		t.Fatal(err)
	}
	if err := db.PutCandidate(ctx, crawl.Candidate{URL: "http://a.test/old", Host: "a.test", State: crawl.StateDue,
		DueAt: time.Now().Add(-time.Minute).Unix(), CrawlType: crawl.CrawlRecrawl}); err != nil {
		t.Fatal(err)
	}
	out, err := h.Handle(ctx, json.RawMessage(`{"source":"crawler.schedule","action":"release"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := out.(map[string]int); got["released"] != 1 || len(fetchQ.sent) != 1 {
		t.Fatalf("schedule run = %v, sent %d; want 1 released", got, len(fetchQ.sent))
	}
	if _, err := h.Handle(ctx, json.RawMessage(`{"action":"dance"}`)); err == nil {
		t.Fatal("an unknown event was accepted")
	}
}

func TestProcessorOutcomes(t *testing.T) {
	errBad := crawl.E("decode", crawl.KindInvalid, errors.New("bad input"))
	errFlaky := crawl.E("fetch", crawl.KindTransient, errors.New("connection reset"))
	errBusy := fmt.Errorf("wait: %w", &dynamo.BusyError{Host: "a.test", RetryAfter: 7 * time.Second})
	errPending := fmt.Errorf("summarize: %w", &dynamo.PendingError{URL: "http://a.test/", RetryAfter: time.Minute})
	cases := []struct {
		name      string
		err       error
		receives  string
		failed    bool
		dead      string // reason prefix expected in the DLQ
		requeued  time.Duration
		backedOff bool
	}{
		{"ok", nil, "1", false, "", 0, false},
		{"invalid", errBad, "1", false, "decode: bad input", 0, false},
		{"transient", errFlaky, "2", true, "", 0, true},
		{"transient too often", errFlaky, "5", false, "failed 5 times", 0, false},
		{"host busy", errBusy, "1", false, "", 7 * time.Second, false},
		{"first generation being opened", errPending, "1", false, "", time.Minute, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			self, dlq := &queue{}, &queue{}
			p := sqsbatch.Processor{Queue: "fetch", DeadLetters: dlq, Requeue: self, Visibility: self, Deferred: handlers.Deferred,
				Handle: func(context.Context, []byte) error { return c.err }}
			ev := sqsEvent(`{"url":"http://a.test/"}`)
			ev.Records[0].Attributes["ApproximateReceiveCount"] = c.receives
			resp, err := p.Process(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if failed := len(resp.BatchItemFailures) == 1; failed != c.failed {
				t.Errorf("reported for retry: %v, want %v", failed, c.failed)
			}
			switch {
			case c.dead != "":
				if len(dlq.sent) != 1 || !strings.HasPrefix(dlq.sent[0].attrs["reason"], c.dead) {
					t.Errorf("dead letters %+v; want reason %q", dlq.sent, c.dead)
				}
			case len(dlq.sent) != 0:
				t.Errorf("dead-lettered %+v", dlq.sent)
			}
			if c.requeued > 0 && (len(self.sent) != 1 || self.sent[0].delay != c.requeued) {
				t.Errorf("re-sent %+v; want one with delay %v", self.sent, c.requeued)
			}
			if _, ok := self.visibility["h0"]; ok != c.backedOff {
				t.Errorf("visibility changed: %v, want %v", ok, c.backedOff)
			}
		})
	}
}

// TestProcessorDefersTogether: the records of a batch deferred with
// different delays are sent again in one SendEach, each with its own
// delay, and deleted; if that send fails, all of them are retried.
func TestProcessorDefersTogether(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("send fails %v", fail), func(t *testing.T) {
			self, dlq := &queue{}, &queue{}
			if fail {
				self.fail = errors.New("injected: SQS unavailable")
			}
			p := sqsbatch.Processor{Queue: "fetch", DeadLetters: dlq, Requeue: self, Visibility: self, Deferred: handlers.Deferred, Concurrency: 4,
				Handle: func(_ context.Context, b []byte) error {
					var task struct{ Wait int }
					if err := json.Unmarshal(b, &task); err != nil {
						return err
					}
					if task.Wait == 0 {
						return nil
					}
					return &dynamo.BusyError{Host: "a.test", RetryAfter: time.Duration(task.Wait) * time.Second}
				}}
			resp, err := p.Process(context.Background(), sqsEvent(`{"wait":2}`, `{"wait":0}`, `{"wait":5}`, `{"wait":3}`))
			if err != nil {
				t.Fatal(err)
			}
			if self.calls != 1 {
				t.Errorf("%d SendEach calls for three deferred records, want 1", self.calls)
			}
			var retried []string
			for _, f := range resp.BatchItemFailures {
				retried = append(retried, f.ItemIdentifier)
			}
			slices.Sort(retried)
			if fail {
				if want := []string{"m0", "m2", "m3"}; !slices.Equal(retried, want) {
					t.Errorf("retried %v, want the deferred %v", retried, want)
				}
				return
			}
			if len(retried) != 0 {
				t.Errorf("retried %v, want none", retried)
			}
			delays := map[string]time.Duration{}
			for _, m := range self.sent {
				delays[m.body] = m.delay
			}
			want := map[string]time.Duration{`{"wait":2}`: 2 * time.Second, `{"wait":5}`: 5 * time.Second, `{"wait":3}`: 3 * time.Second}
			if !maps.Equal(delays, want) {
				t.Errorf("re-sent %v, want %v", delays, want)
			}
		})
	}
}

// TestSpreadingSenderContinues: a host's tasks are spaced a delay apart
// across sends, not only within one; another host starts at once; all
// go in one call per send whatever their delays.
func TestSpreadingSenderContinues(t *testing.T) {
	q := &queue{}
	s := &scheduler.SpreadingSender{Queue: q, Delay: time.Second}
	task := func(u string) []byte {
		b, _ := json.Marshal(crawl.FetchTask{URL: u, CrawlUUID: "c"})
		return b
	}
	ctx := context.Background()
	if err := s.Send(ctx, task("http://a.test/1"), task("http://a.test/2")); err != nil {
		t.Fatal(err)
	}
	if err := s.Send(ctx, task("http://a.test/3"), task("http://b.test/1"), task("http://a.test/4")); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{0, time.Second, 2 * time.Second, 0, 3 * time.Second}
	if len(q.sent) != len(want) || q.calls != 2 {
		t.Fatalf("sent %+v in %d calls, want %d tasks in 2", q.sent, q.calls, len(want))
	}
	for i, m := range q.sent {
		// The second send comes a moment after the first: its delays
		// are that much shorter.
		if m.delay > want[i] || m.delay < want[i]-100*time.Millisecond {
			t.Errorf("task %d delayed %v, want %v", i, m.delay, want[i])
		}
	}
}

// booker books slots as dynamo.Gate.Book does, in memory: each host's
// first slot two seconds on, a slot 1.5 times the delay; c.test fails.
type booker struct {
	mu    sync.Mutex
	calls []string
}

func (b *booker) Book(_ context.Context, host string, n int, delay time.Duration, until time.Time) (time.Time, time.Duration, int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, fmt.Sprintf("%s %d %v", host, n, delay))
	if host == "c.test" {
		return time.Time{}, 0, 0, errors.New("throttled")
	}
	first, slot := time.Now().Add(2*time.Second), delay*3/2
	k := n
	if !until.IsZero() {
		k = min(n, int((until.Sub(first)+slot-1)/slot))
	}
	return first, slot, k, nil
}

// TestSpreadingSenderBooks: a send books each host's slots once, for
// all its tasks, with the longer of the sender's and the site's delay,
// and delays each task to its slot; a host whose booking fails is spaced
// from the sender's memory.
func TestSpreadingSenderBooks(t *testing.T) {
	q, b := &queue{}, &booker{}
	s := &scheduler.SpreadingSender{Queue: q, Delay: time.Second, Slots: b, Log: slog.New(slog.DiscardHandler)}
	task := func(u string, delayMS int64) []byte {
		out, _ := json.Marshal(crawl.FetchTask{URL: u, CrawlUUID: "c", DelayMS: delayMS})
		return out
	}
	err := s.Send(context.Background(), task("http://a.test/1", 0), task("http://b.test/1", 4000), task("http://a.test/2", 0),
		task("http://c.test/1", 0), task("http://a.test/3", 0), task("http://c.test/2", 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a.test 3 1s", "b.test 1 4s", "c.test 2 1s"}; !slices.Equal(b.calls, want) {
		t.Errorf("booked %q, want %q", b.calls, want)
	}
	want := []time.Duration{2 * time.Second, 2 * time.Second, 3500 * time.Millisecond, 0, 5 * time.Second, time.Second}
	if len(q.sent) != len(want) || q.calls != 1 {
		t.Fatalf("sent %+v in %d calls, want %d tasks in 1", q.sent, q.calls, len(want))
	}
	for i, m := range q.sent {
		if m.delay > want[i]+100*time.Millisecond || m.delay < want[i]-100*time.Millisecond {
			t.Errorf("task %d delayed %v, want %v", i, m.delay, want[i])
		}
	}
}

// TestSpreadingSenderRoom: the scheduler releases a host's tasks only
// as far as ten minutes ahead, counting those taken and not yet sent and
// the slots already booked; another host has its own room.
func TestSpreadingSenderRoom(t *testing.T) {
	q := &queue{}
	s := &scheduler.SpreadingSender{Queue: q, Delay: 2 * time.Minute}
	if taken := takeAll(t, s, "a.test", 0); taken != 5 {
		t.Errorf("took %d tasks of a.test at a 2-minute delay, want 5 (ten minutes)", taken)
	}
	if !s.Take("b.test", 0) {
		t.Error("b.test had no room: another host's tasks took it")
	}
	task := func(u string) []byte {
		b, _ := json.Marshal(crawl.FetchTask{URL: u, CrawlUUID: "c"})
		return b
	}
	// Two of a.test's sent: booked, no longer taken; still no room.
	if err := s.Send(context.Background(), task("http://a.test/1"), task("http://a.test/2")); err != nil {
		t.Fatal(err)
	}
	if s.Take("a.test", 0) {
		t.Error("a.test had room with ten minutes of tasks booked or taken")
	}
	// With no delay of its own, a sender bounds a host whose site asks
	// for one.
	free := &scheduler.SpreadingSender{Queue: q}
	if taken := takeAll(t, free, "c.test", 5*time.Minute); taken != 2 {
		t.Errorf("took %d tasks of c.test at its site's 5-minute delay, want 2", taken)
	}
	if !free.Take("d.test", 0) {
		t.Error("a host with no delay at all was refused")
	}
}

// TestSpreadingSenderWithinReach: tasks whose booked slot would start
// past SQS's 15-minute cap are not sent (their candidates, queued, are
// released again when stale); and before a booking has said where a
// host's slots end, only a first few of its tasks are released.
func TestSpreadingSenderWithinReach(t *testing.T) {
	q, b := &queue{}, &booker{}
	// Slots of 6 minutes (the booker's 1.5 times the delay) from 2 s on:
	// three start within 15 minutes.
	s := &scheduler.SpreadingSender{Queue: q, Delay: 4 * time.Minute, Slots: b}
	var bodies [][]byte
	for i := range 5 {
		body, _ := json.Marshal(crawl.FetchTask{URL: fmt.Sprintf("http://a.test/%d", i), CrawlUUID: "c"})
		bodies = append(bodies, body)
	}
	if err := s.Send(context.Background(), bodies...); err != nil {
		t.Fatal(err)
	}
	if len(q.sent) != 3 {
		t.Fatalf("sent %d tasks, want the 3 whose slots start within 15 minutes", len(q.sent))
	}
	for i, m := range q.sent {
		if string(m.body) != string(bodies[i]) || m.delay > sqsq.MaxDelay {
			t.Errorf("task %d: %s delayed %v", i, m.body, m.delay)
		}
	}
	// A host never booked: ten tasks, then none until a booking says more.
	fresh := &scheduler.SpreadingSender{Queue: q, Delay: time.Second, Slots: b}
	if n := takeAll(t, fresh, "b.test", 0); n != 10 {
		t.Errorf("took %d tasks of a host never booked, want 10", n)
	}
}

// takeAll takes room for host's tasks until s refuses, and says how many.
func takeAll(t *testing.T, s *scheduler.SpreadingSender, host string, delay time.Duration) int {
	t.Helper()
	n := 0
	for s.Take(host, delay) {
		if n++; n > 1000 {
			t.Fatalf("Take never refuses %s", host)
		}
	}
	return n
}

// TestSchedulerForcedEventDeliveredAgain: SQS delivers a forced event a
// second time after the crawl it asked for (a scheduler stopped before
// the message was deleted): the crawl done since the message was sent
// meets it (crawl.EnqueueEvent.MetBy, from SentTimestamp), and nothing
// is released. A forced event sent after that crawl is released.
func TestSchedulerForcedEventDeliveredAgain(t *testing.T) {
	h, db, fetchQ, _ := newScheduler(t)
	ctx := context.Background()
	u := "http://a.test/page"
	forced := func(sent time.Time) json.RawMessage {
		ev := sqsEvent(`{"url":"` + u + `","enqueue_type":"forced"}`)
		ev.Records[0].Attributes["SentTimestamp"] = strconv.FormatInt(sent.UnixMilli(), 10)
		raw, _ := json.Marshal(ev)
		return raw
	}
	sent := time.Now().Add(-10 * time.Minute)
	if _, err := h.Handle(ctx, forced(sent)); err != nil {
		t.Fatal(err)
	}
	if len(fetchQ.sent) != 1 {
		t.Fatalf("fetch tasks %+v; want the forced crawl's", fetchQ.sent)
	}
	// The crawl asked for, as the fetcher records it: it started after
	// the message was sent, and the URL is due again in a week.
	c, err := db.GetCandidate(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	at, code := sent.Add(5*time.Second).Unix(), crawl.ExitComplete
	c.State, c.DueAt, c.CrawlUUID, c.LastCrawlTime, c.LastCrawlExitCode = crawl.StateDue, time.Now().Add(7*24*time.Hour).Unix(), "", &at, &code
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatal(err)
	}
	fetchQ.sent = nil
	if _, err := h.Handle(ctx, forced(sent)); err != nil {
		t.Fatal(err)
	}
	if len(fetchQ.sent) != 0 {
		t.Errorf("the forced event delivered again released %+v; want nothing (crawled since it was sent)", fetchQ.sent)
	}
	if got, _ := db.GetCandidate(ctx, u); got.DueAt != c.DueAt {
		t.Errorf("due at %d after the redelivery, want %d as the crawl left it", got.DueAt, c.DueAt)
	}
	if _, err := h.Handle(ctx, forced(time.Now())); err != nil {
		t.Fatal(err)
	}
	if len(fetchQ.sent) != 1 {
		t.Errorf("a forced event sent after the crawl released %d tasks, want 1", len(fetchQ.sent))
	}
}

// TestSchedulerStatusOfAnUnknownURL: a status event for a URL the crawl
// does not know is answered in the log, not dead-lettered; one for a
// known URL logs its status.
func TestSchedulerStatusOfAnUnknownURL(t *testing.T) {
	h, _, _, dlq := newScheduler(t)
	var logs strings.Builder
	h.Log = slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.Background()
	raw, _ := json.Marshal(sqsEvent(`{"v":1,"url":"http://a.test/"}`, `{"v":1,"url":"http://a.test/","enqueue_type":"status"}`,
		`{"v":1,"url":"http://b.test/nowhere","enqueue_type":"status"}`))
	out, err := h.Handle(ctx, raw)
	if err != nil {
		t.Fatal(err)
	}
	if resp := out.(events.SQSEventResponse); len(resp.BatchItemFailures) != 0 || len(dlq.sent) != 0 {
		t.Fatalf("failures %v, dead letters %+v; want none", resp.BatchItemFailures, dlq.sent)
	}
	for _, want := range []string{`url=http://b.test/nowhere status="not known to the crawl"`, `url=http://a.test/ status=`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log %q; want %q", logs.String(), want)
		}
	}
}
