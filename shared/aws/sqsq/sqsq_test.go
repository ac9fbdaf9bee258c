package sqsq

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
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

func TestSendWithAttributes(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, nil)
	attrs := map[string]string{"reason": "parse: invalid UTF-8 — gave up", "source_queue": "crawler-fetch"}
	before := time.Now()
	if err := q.SendWithAttributes(ctx, []byte(`{"url":"http://example.com/"}`), attrs); err != nil {
		t.Fatal(err)
	}
	// One message, or more copies of it: SQS delivers at least once, and
	// the SDK sends again a message whose answer was lost (seen once
	// under the race detector).
	got := receiveAll(t, q, 1, 5*time.Second)
	if len(got) == 0 {
		t.Fatal("received no message, want 1")
	}
	for _, m := range got {
		if string(m.Body) != `{"url":"http://example.com/"}` {
			t.Errorf("body %q", m.Body)
		}
		if fmt.Sprint(m.Attributes) != fmt.Sprint(attrs) {
			t.Errorf("attributes %v, want %v", m.Attributes, attrs)
		}
		// SentTimestamp, in milliseconds, on this machine's clock.
		if m.SentAt.Before(before.Add(-time.Second)) || m.SentAt.After(time.Now().Add(time.Second)) {
			t.Errorf("sent at %v, want between %v and now", m.SentAt, before)
		}
	}
	err := q.SendWithAttributes(ctx, []byte("x"), map[string]string{"reason": ""})
	if crawl.KindOf(err) != crawl.KindInvalid {
		t.Errorf("empty attribute value: %v, want KindInvalid", err)
	}
	// A character SQS refuses is refused here, and AttributeValue makes
	// any text one SQS takes, as it took it.
	odd := "admit http://exa\x01mple.com/\xff: invalid \uFFFD"
	err = q.SendWithAttributes(ctx, []byte("x"), map[string]string{"reason": odd})
	if crawl.KindOf(err) != crawl.KindInvalid {
		t.Errorf("attribute value with U+0001: %v, want KindInvalid", err)
	}
	v := AttributeValue(odd, 1024)
	if err := q.SendWithAttributes(ctx, []byte("x"), map[string]string{"reason": v}); err != nil {
		t.Fatal(err)
	}
	got = receiveAll(t, q, 1, 5*time.Second)
	if len(got) == 0 {
		t.Fatalf("received nothing, want the reason %q", v)
	}
	for _, m := range got {
		if m.Attributes["reason"] != v {
			t.Errorf("received %+v, want the reason %q", m, v)
		}
	}
}

func TestAttributeValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 100, "plain"},
		{"a\x00b\x1fc\td\ne", 100, "a\uFFFDb\uFFFDc\td\ne"},
		{"bad \xff byte", 100, "bad \uFFFD byte"},
		{"\uFFFE and \U0001F600", 100, "\uFFFD and \U0001F600"},
		{"ééé", 5, "éé"},          // cut at a character's start
		{"ab\U0001F600", 5, "ab"}, // a 4-byte character does not fit in 3
	} {
		if got := AttributeValue(tc.in, tc.max); got != tc.want {
			t.Errorf("AttributeValue(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
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
	if err := q.Send(ctx, contract.Bodies(3, 10)...); err != nil {
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

// TestSendEach: messages of different delays go ten to a call, each
// hidden for its own delay.
func TestSendEach(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, nil)
	// Delayed: odd messages of the first call, the first of the second
	// (so that an offset lost between calls shows).
	var msgs []Delayed
	for i := range 12 {
		d := time.Duration(0)
		if i%2 == 1 && i < 10 || i == 10 {
			d = time.Minute
		}
		msgs = append(msgs, Delayed{Body: []byte(fmt.Sprintf("m%d", i)), Delay: d})
	}
	before := q.Counts().Sends.Load()
	if err := q.SendEach(ctx, msgs...); err != nil {
		t.Fatal(err)
	}
	if calls := q.Counts().Sends.Load() - before; calls != 2 {
		t.Errorf("12 messages of two delays took %d calls, want 2", calls)
	}
	got := receiveAll(t, q, 6, 10*time.Second)
	var bodies []string
	for _, m := range got {
		bodies = append(bodies, string(m.Body))
	}
	slices.Sort(bodies)
	if want := []string{"m0", "m11", "m2", "m4", "m6", "m8"}; !slices.Equal(bodies, want) {
		t.Errorf("received %v, want the undelayed %v", bodies, want)
	}
	if _, _, delayed, err := q.Depth(ctx); err != nil || delayed != 6 {
		t.Errorf("delayed %d (%v), want 6", delayed, err)
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

// TestReadLimit: a queue made with a smaller MaximumMessageSize refuses,
// once its limit is read, a body over it before sending (the emulator
// would take it; SQS would not).
func TestReadLimit(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, map[string]string{"MaximumMessageSize": "1024"})
	if n, err := q.ReadLimit(ctx); err != nil || n != 1024 {
		t.Fatalf("ReadLimit = %d, %v; want 1024", n, err)
	}
	err := q.Send(ctx, []byte("fits"), bytes.Repeat([]byte{'x'}, 1025))
	if crawl.KindOf(err) != crawl.KindInvalid || !strings.Contains(fmt.Sprint(err), "body of 1025 bytes is over the 1024-byte limit") {
		t.Fatalf("Send: %v, want KindInvalid naming the queue's limit", err)
	}
	if n := q.Counts().Sends.Load(); n != 0 {
		t.Errorf("%d send calls, want none", n)
	}
	if err := q.Send(ctx, bytes.Repeat([]byte{'x'}, 1024)); err != nil {
		t.Errorf("a body at the limit: %v", err)
	}

	d := testQueue(t, nil) // the default, 256 KiB (or 1 MiB on SQS since 2025): MaxPayload is the bound
	if n, err := d.ReadLimit(ctx); err != nil || n != MaxPayload {
		t.Errorf("ReadLimit of a default queue = %d, %v; want %d", n, err, MaxPayload)
	}
}

// TestSendJSONWithNoncharacters: a JSON body holding U+FFFE or U+FFFF
// (Go's encoder writes them as they are, and SQS refuses them) is sent
// with them escaped, and reads back as the same value; any other body
// holding them is refused.
func TestSendJSONWithNoncharacters(t *testing.T) {
	ctx := context.Background()
	q := testQueue(t, nil)
	want := map[string]string{"title": "a\uFFFEb\uFFFFc", "url": "http://example.com/\uFFFF"}
	body, _ := json.Marshal(want)
	if err := q.Check(body); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if err := q.Send(ctx, body); err != nil {
		t.Fatal(err)
	}
	if err := q.SendWithAttributes(ctx, body, map[string]string{"reason": "r"}); err != nil {
		t.Fatal(err)
	}
	got := receiveAll(t, q, 2, 5*time.Second)
	if len(got) != 2 {
		t.Fatalf("received %d messages, want 2", len(got))
	}
	for _, m := range got {
		var back map[string]string
		if err := json.Unmarshal(m.Body, &back); err != nil || !reflect.DeepEqual(back, want) {
			t.Errorf("received %q: %v, %v; want %q", m.Body, back, err, want)
		}
	}
	if err := q.Send(ctx, []byte("plain \uFFFF text")); crawl.KindOf(err) != crawl.KindInvalid {
		t.Errorf("a plain body with U+FFFF: %v, want KindInvalid", err)
	}
}
