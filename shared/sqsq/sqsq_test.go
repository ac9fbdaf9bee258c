package sqsq

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// testClient returns a client for the AWS emulator at CRAWLER_TEST_AWS
// (infra/ministack.sh); the tests are skipped, saying so, when none is
// configured.
func testClient(t testing.TB) *sqs.Client {
	t.Helper()
	ep := os.Getenv("CRAWLER_TEST_AWS")
	if ep == "" {
		t.Skip("CRAWLER_TEST_AWS is not set: start an emulator (infra/ministack.sh start) and set it to its endpoint, e.g. http://127.0.0.1:4566")
	}
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ep),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// testQueue creates a fresh queue with the given attributes for one test
// and deletes it after.
func testQueue(t testing.TB, attrs map[string]string) *Queue {
	t.Helper()
	api := testClient(t)
	name := "t" + strings.ReplaceAll(uuid.NewString()[:13], "-", "")
	out, err := api.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("create queue %s: %v", name, err)
	}
	t.Cleanup(func() {
		api.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl})
	})
	q := New(api, aws.ToString(out.QueueUrl))
	t.Cleanup(func() { t.Logf("%s: %s", name, q.Counts()) })
	return q
}

// receiveAll receives until want messages arrived or the deadline passed,
// failing on a message received twice.
func receiveAll(t *testing.T, q *Queue, want int, within time.Duration) []Message {
	t.Helper()
	ctx := context.Background()
	var got []Message
	seen := map[string]bool{}
	for end := time.Now().Add(within); len(got) < want && time.Now().Before(end); {
		msgs, err := q.Receive(ctx, MaxBatch, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if seen[m.ID] {
				t.Fatalf("message %s received twice (count %d)", m.ID, m.ReceiveCount)
			}
			seen[m.ID] = true
			got = append(got, m)
		}
	}
	return got
}

func bodies(n, size int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		b := []byte(fmt.Sprintf("%04d:", i))
		out[i] = append(b, bytes.Repeat([]byte{'x'}, max(0, size-len(b)))...)
	}
	return out
}

func TestSendReceiveDelete(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bodies [][]byte
		calls  int64
	}{
		{"25 small bodies in 3 batches of 10", bodies(25, 100), 3},
		{"10 bodies of 30 KiB split by size, 8+2", bodies(10, 30<<10), 2},
		{"5 bodies of 100 KiB split by size, 2+2+1", bodies(5, 100<<10), 3},
		{"one body of exactly 256 KiB", bodies(1, MaxPayload), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			q := testQueue(t, nil)
			if err := q.Send(ctx, tc.bodies...); err != nil {
				t.Fatal(err)
			}
			if n := q.Counts().Sends.Load(); n != tc.calls {
				t.Errorf("%d send calls, want %d", n, tc.calls)
			}
			if n := q.Counts().Sent.Load(); n != int64(len(tc.bodies)) {
				t.Errorf("%d messages sent, want %d", n, len(tc.bodies))
			}
			got := receiveAll(t, q, len(tc.bodies), 10*time.Second)
			var gotBodies, wantBodies []string
			for _, m := range got {
				gotBodies = append(gotBodies, string(m.Body))
				if m.ReceiveCount != 1 {
					t.Errorf("message %s: receive count %d, want 1", m.ID, m.ReceiveCount)
				}
				if m.ReceiptHandle == "" {
					t.Errorf("message %s has no receipt handle", m.ID)
				}
			}
			for _, b := range tc.bodies {
				wantBodies = append(wantBodies, string(b))
			}
			sort.Strings(gotBodies)
			if strings.Join(gotBodies, "\n") != strings.Join(wantBodies, "\n") {
				t.Fatalf("received %d bodies, want the %d sent", len(gotBodies), len(wantBodies))
			}
			if err := q.Delete(ctx, got...); err != nil {
				t.Fatal(err)
			}
			if n, want := q.Counts().Deletes.Load(), int64((len(got)+MaxBatch-1)/MaxBatch); n != want {
				t.Errorf("%d delete calls, want %d", n, want)
			}
			if n := q.Counts().Deleted.Load(); n != int64(len(got)) {
				t.Errorf("%d deleted, want %d", n, len(got))
			}
			visible, inFlight, delayed, err := q.Depth(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if visible+inFlight+delayed != 0 {
				t.Errorf("depth after delete: %d visible, %d in flight, %d delayed; want none", visible, inFlight, delayed)
			}
			if more, err := q.Receive(ctx, MaxBatch, 0); err != nil || len(more) != 0 {
				t.Errorf("receive after delete: %d messages, %v", len(more), err)
			}
		})
	}
}

func TestSendRefusesWithoutSending(t *testing.T) {
	over := bytes.Repeat([]byte{'x'}, MaxPayload+1)
	for _, tc := range []struct {
		name   string
		bodies [][]byte
		says   string
	}{
		{"body over 256 KiB", [][]byte{[]byte("ok"), over}, "body of 262145 bytes is over the 262144-byte limit"},
		{"empty body", [][]byte{[]byte("ok"), {}}, "empty body"},
		{"NUL character", [][]byte{[]byte("a\x00b")}, "U+0000 at byte 1"},
		{"invalid UTF-8", [][]byte{[]byte("ab\xffc")}, "not UTF-8 at byte 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			q := testQueue(t, nil)
			err := q.Send(ctx, tc.bodies...)
			if crawl.KindOf(err) != crawl.KindInvalid || !strings.Contains(fmt.Sprint(err), tc.says) {
				t.Fatalf("Send: %v (kind %d), want KindInvalid saying %q", err, crawl.KindOf(err), tc.says)
			}
			if n := q.Counts().Sends.Load(); n != 0 {
				t.Errorf("%d send calls, want none", n)
			}
			if msgs, err := q.Receive(ctx, MaxBatch, time.Second); err != nil || len(msgs) != 0 {
				t.Errorf("receive: %d messages, %v; want none", len(msgs), err)
			}
		})
	}
}

func TestSendDelayed(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, nil)
	start := time.Now()
	if err := q.SendDelayed(ctx, 1500*time.Millisecond, []byte("later")); err != nil { // rounds up to 2 s
		t.Fatal(err)
	}
	if msgs, err := q.Receive(ctx, MaxBatch, 0); err != nil || len(msgs) != 0 {
		t.Fatalf("receive at once: %d messages, %v; want none", len(msgs), err)
	}
	_, _, delayed, err := q.Depth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if delayed != 1 {
		t.Errorf("depth: %d delayed, want 1", delayed)
	}
	got := receiveAll(t, q, 1, 6*time.Second)
	if len(got) != 1 || string(got[0].Body) != "later" {
		t.Fatalf("received %v, want the delayed message", got)
	}
	if waited := time.Since(start); waited < 1900*time.Millisecond {
		t.Errorf("delayed message received after %v, want at least 2 s", waited)
	}
	if err := q.Delete(ctx, got...); err != nil {
		t.Fatal(err)
	}
}

func TestSendWithAttributes(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, nil)
	attrs := map[string]string{"reason": "parse: invalid UTF-8 — gave up", "source_queue": "crawler-fetch"}
	if err := q.SendWithAttributes(ctx, []byte(`{"url":"http://example.com/"}`), attrs); err != nil {
		t.Fatal(err)
	}
	got := receiveAll(t, q, 1, 5*time.Second)
	if len(got) != 1 {
		t.Fatalf("received %d messages, want 1", len(got))
	}
	if string(got[0].Body) != `{"url":"http://example.com/"}` {
		t.Errorf("body %q", got[0].Body)
	}
	if fmt.Sprint(got[0].Attributes) != fmt.Sprint(attrs) {
		t.Errorf("attributes %v, want %v", got[0].Attributes, attrs)
	}
	err := q.SendWithAttributes(ctx, []byte("x"), map[string]string{"reason": ""})
	if crawl.KindOf(err) != crawl.KindInvalid {
		t.Errorf("empty attribute value: %v, want KindInvalid", err)
	}
}

func TestRedelivery(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, map[string]string{"VisibilityTimeout": "1"})
	if err := q.Send(ctx, []byte("again")); err != nil {
		t.Fatal(err)
	}
	var first Message
	for want := 1; want <= 2; want++ { // not deleted: back after the 1 s visibility timeout
		got := receiveAll(t, q, 1, 5*time.Second)
		if len(got) != 1 {
			t.Fatalf("receipt %d: got %d messages", want, len(got))
		}
		if got[0].ReceiveCount != want {
			t.Errorf("receipt %d: receive count %d", want, got[0].ReceiveCount)
		}
		if want > 1 && got[0].ID != first.ID {
			t.Errorf("redelivered message has id %s, first %s", got[0].ID, first.ID)
		}
		first = got[0]
	}

	// A longer lease keeps it hidden past the queue's timeout, and 0 gives
	// it back at once.
	if err := q.ChangeVisibility(ctx, first, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if msgs, err := q.Receive(ctx, MaxBatch, 0); err != nil || len(msgs) != 0 {
		t.Fatalf("receive during extended lease: %d messages, %v; want none", len(msgs), err)
	}
	if _, inFlight, _, err := q.Depth(ctx); err != nil || inFlight != 1 {
		t.Errorf("depth during lease: %d in flight, %v; want 1", inFlight, err)
	}
	if err := q.ChangeVisibility(ctx, first, 0); err != nil {
		t.Fatal(err)
	}
	got, err := q.Receive(ctx, MaxBatch, time.Second)
	if err != nil || len(got) != 1 || got[0].ReceiveCount != 3 {
		t.Fatalf("receive after release: %+v, %v; want the message, count 3", got, err)
	}
	if err := q.Delete(ctx, got...); err != nil {
		t.Fatal(err)
	}
}

func TestDeleteStaleReceipt(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, nil)
	err := q.Delete(ctx, Message{ID: "gone", ReceiptHandle: "not-a-receipt-handle"})
	if err == nil || !strings.Contains(err.Error(), "1 of 1 messages not deleted") {
		t.Fatalf("Delete with a bad receipt handle: %v, want it reported", err)
	}
	t.Log(err)
}

func TestDepth(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, nil)
	if err := q.Send(ctx, bodies(3, 10)...); err != nil {
		t.Fatal(err)
	}
	if err := q.SendDelayed(ctx, time.Minute, []byte("later")); err != nil {
		t.Fatal(err)
	}
	if got := receiveAll(t, q, 1, 5*time.Second); len(got) == 0 {
		t.Fatal("nothing received")
	}
	// ReceiveMessage may return fewer than asked; what it did not return
	// stays visible.
	visible, inFlight, delayed, err := q.Depth(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if visible+inFlight != 3 || inFlight < 1 || delayed != 1 {
		t.Errorf("depth: %d visible, %d in flight, %d delayed; want 3 visible or in flight (>= 1 in flight), 1 delayed", visible, inFlight, delayed)
	}
}

func TestNoQueue(t *testing.T) {
	api := testClient(t)
	q := New(api, os.Getenv("CRAWLER_TEST_AWS")+"/000000000000/no-such-queue-"+uuid.NewString()[:8])
	err := q.Send(context.Background(), []byte("x"))
	if err == nil || !strings.Contains(err.Error(), "1 of 1 messages not sent") {
		t.Fatalf("send to a missing queue: %v, want it reported", err)
	}
	t.Log(err)
}
