package sqsbatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/memblob"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// The response Lambda reads: the failed records' IDs, and an empty list
// (never null) when all succeeded.
func TestProcessResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bodies []string
		want   string
	}{
		{"all succeed", []string{"ok", "ok"}, `{"batchItemFailures":[]}`},
		{"empty batch", nil, `{"batchItemFailures":[]}`},
		{"one transient failure", []string{"ok", "flaky"}, `{"batchItemFailures":[{"itemIdentifier":"m1"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Processor{Queue: "test", Handle: func(_ context.Context, body []byte) error {
				if string(body) == "flaky" {
					return crawl.E("test", crawl.KindTransient, errors.New("try again"))
				}
				return nil
			}}
			var ev events.SQSEvent
			for i, b := range tc.bodies {
				ev.Records = append(ev.Records, events.SQSMessage{MessageId: "m" + string(rune('0'+i)), Body: b,
					Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
			}
			resp, err := p.Process(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(resp)
			if string(got) != tc.want {
				t.Errorf("response %s, want %s", got, tc.want)
			}
		})
	}
}

// countMembers counts Enter and Leave, and what each handler saw as it
// started.
type countMembers struct {
	mu            sync.Mutex
	entered, left int
	maxActive     int
	seenAtStart   []int // records entered when a handler started
	activeAtStart []int
}

func (m *countMembers) Enter() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.entered++
	m.maxActive = max(m.maxActive, m.entered-m.left)
}

func (m *countMembers) Leave() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.left++
}

func (m *countMembers) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seenAtStart = append(m.seenAtStart, m.entered)
	m.activeAtStart = append(m.activeAtStart, m.entered-m.left)
}

// Members: the records a first round of handlers takes are all entered
// before any handler starts; a later record is entered when it takes a
// slot; every record leaves once.
// TestProcessReadAhead: the read-ahead is given every record's body,
// in order, once, before any handler starts.
func TestProcessReadAhead(t *testing.T) {
	var mu sync.Mutex
	var given [][]byte
	started := false
	p := Processor{Queue: "test", Concurrency: 2,
		ReadAhead: func(_ context.Context, bodies [][]byte) {
			mu.Lock()
			defer mu.Unlock()
			if started || given != nil {
				t.Errorf("read-ahead called again or after a handler started")
			}
			given = bodies
		},
		Handle: func(context.Context, []byte) error {
			mu.Lock()
			defer mu.Unlock()
			started = true
			return nil
		}}
	var ev events.SQSEvent
	for i := range 5 {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprint("m", i), Body: fmt.Sprint(i),
			Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	if _, err := p.Process(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if len(given) != 5 || string(given[0]) != "0" || string(given[4]) != "4" {
		t.Errorf("read-ahead given %q, want the five bodies in order", given)
	}
}

func TestProcessMembers(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		records, concurrency int
	}{
		{"a batch within the concurrency", 7, 10},
		{"a batch of one", 1, 10},
		{"more records than handlers", 7, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &countMembers{}
			p := Processor{Queue: "test", Concurrency: tc.concurrency, Members: m,
				Handle: func(context.Context, []byte) error {
					m.start()
					time.Sleep(time.Millisecond)
					return nil
				}}
			var ev events.SQSEvent
			for i := range tc.records {
				ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprint("m", i), Body: "{}",
					Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
			}
			if _, err := p.Process(context.Background(), ev); err != nil {
				t.Fatal(err)
			}
			first := min(tc.records, tc.concurrency)
			if m.entered != tc.records || m.left != tc.records {
				t.Errorf("entered %d, left %d; want %d each", m.entered, m.left, tc.records)
			}
			if m.maxActive != first {
				t.Errorf("at most %d records entered at once, want %d", m.maxActive, first)
			}
			for i, n := range m.seenAtStart {
				if n < first {
					t.Errorf("handler %d started when %d records had entered, want every one of the first %d", i, n, first)
				}
			}
		})
	}
}

// With a warc.Packer as Members, the bodies of a batch's records go in
// one file, even when one body is ready before the other handlers get
// going (on a Lambda with a fraction of a core, goroutines start late).
func TestProcessMembersOneFile(t *testing.T) {
	objs := &memblob.Store{}
	packer := warc.NewPacker(objs, warc.PackConfig{Prefix: "warc/", MaxWait: time.Hour})
	p := Processor{Queue: "fetch", Concurrency: 10, Members: packer,
		Handle: func(ctx context.Context, body []byte) error {
			if string(body) != "0" {
				time.Sleep(20 * time.Millisecond) // a slower fetch
			}
			_, err := packer.Keep(ctx, warc.Exchange{URL: "http://example.com/" + string(body), Status: 200,
				Response: http.Header{"Content-Type": {"text/html"}}, Body: []byte("<p>page " + string(body)),
				Date: time.Unix(1700000000, 0)})
			return err
		}}
	var ev events.SQSEvent
	for i := range 4 {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprint("m", i), Body: fmt.Sprint(i),
			Attributes: map[string]string{"ApproximateReceiveCount": "1"}})
	}
	resp, err := p.Process(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Process: %v, failures %v", err, resp.BatchItemFailures)
	}
	if objs.Puts() != 1 {
		t.Errorf("%d PUTs for a batch of four bodies, want one file", objs.Puts())
	}
}

// backoffs records the visibility backoffs set.
type backoffs struct {
	mu  sync.Mutex
	set []string
}

func (b *backoffs) ChangeVisibility(ctx context.Context, receiptHandle string, _ time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.set = append(b.set, receiptHandle)
	return nil
}

// A handler still running shortly before the invocation's deadline is
// stopped and its record reported for retry (its backoff set in time),
// while the records finished are acknowledged: the batch returns
// before the deadline instead of coming back whole with the timeout.
func TestProcessStopsBeforeTheDeadline(t *testing.T) {
	vis := &backoffs{}
	p := Processor{Queue: "test", Concurrency: 2, Visibility: vis, Handle: func(ctx context.Context, body []byte) error {
		if string(body) == "slow" {
			<-ctx.Done()
			return fmt.Errorf("handle: %w", ctx.Err())
		}
		return nil
	}}
	ev := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "fast", ReceiptHandle: "h-fast", Body: "ok", Attributes: map[string]string{"ApproximateReceiveCount": "1"}},
		{MessageId: "slow", ReceiptHandle: "h-slow", Body: "slow", Attributes: map[string]string{"ApproximateReceiveCount": "1"}},
	}}
	deadline := time.Now().Add(3 * time.Second)
	ctx, cancel := context.WithDeadline(t.Context(), deadline)
	defer cancel()
	resp, err := p.Process(ctx, ev)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(deadline); left < 500*time.Millisecond {
		t.Errorf("Process returned %v before the deadline, want the handlers stopped about a second before it", left)
	}
	got, _ := json.Marshal(resp)
	if want := `{"batchItemFailures":[{"itemIdentifier":"slow"}]}`; string(got) != want {
		t.Errorf("response %s, want %s", got, want)
	}
	if len(vis.set) != 1 || vis.set[0] != "h-slow" {
		t.Errorf("backoffs set for %v, want the stopped record's", vis.set)
	}
}
