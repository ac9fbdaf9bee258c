package sqsq

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// fakeAPI answers SendMessageBatch and DeleteMessageBatch with a scripted
// outcome per call; what SQS cannot be made to do on demand (fail an
// entry through its own fault) is tested here, without an emulator.
type fakeAPI struct {
	API   // the calls a test does not script panic
	fail  func(call int, id string) *types.BatchResultErrorEntry
	drop  func(call int, id string) bool // leave the entry out of the answer
	calls int
	sent  []string // bodies accepted
}

func (f *fakeAPI) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.calls++
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		id := aws.ToString(e.Id)
		switch {
		case f.drop != nil && f.drop(f.calls, id):
		case f.fail != nil && f.fail(f.calls, id) != nil:
			fe := f.fail(f.calls, id)
			fe.Id = e.Id
			out.Failed = append(out.Failed, *fe)
		default:
			f.sent = append(f.sent, aws.ToString(e.MessageBody))
			out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id})
		}
	}
	return out, nil
}

func (f *fakeAPI) DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	f.calls++
	out := &sqs.DeleteMessageBatchOutput{}
	for _, e := range in.Entries {
		if fe := f.fail(f.calls, aws.ToString(e.Id)); fe != nil {
			fe.Id = e.Id
			out.Failed = append(out.Failed, *fe)
			continue
		}
		out.Successful = append(out.Successful, types.DeleteMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

func internalError(int, string) *types.BatchResultErrorEntry {
	return &types.BatchResultErrorEntry{Code: aws.String("InternalError"), Message: aws.String("try again")}
}

func TestBatches(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sizes []int
		want  []int // bodies per batch
	}{
		{"none", nil, nil},
		{"25 small", repeat(25, 10), []int{10, 10, 5}},
		{"exactly 10", repeat(10, 10), []int{10}},
		{"by size", repeat(10, 30<<10), []int{8, 2}},
		{"one full", []int{MaxPayload, 1, MaxPayload - 1, 1}, []int{1, 2, 1}},
		{"full pair", []int{MaxPayload / 2, MaxPayload / 2, 1}, []int{2, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := make([][]byte, len(tc.sizes))
			for i, n := range tc.sizes {
				in[i] = make([]byte, n)
			}
			var got []int
			for _, b := range batches(in) {
				size := 0
				for _, x := range b {
					size += len(x)
				}
				if size > MaxPayload || len(b) > MaxBatch {
					t.Errorf("batch of %d bodies, %d bytes", len(b), size)
				}
				got = append(got, len(b))
			}
			if !equal(got, tc.want) {
				t.Errorf("batches %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSendFailedEntries(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fail  func(call int, id string) *types.BatchResultErrorEntry
		drop  func(call int, id string) bool
		calls int
		sent  int
		kind  crawl.Kind // of the error; KindOther for none
		says  string
	}{
		{
			name: "transient failure retried",
			fail: func(call int, id string) *types.BatchResultErrorEntry {
				if call == 1 && (id == "3" || id == "7") {
					return internalError(call, id)
				}
				return nil
			},
			calls: 4, sent: 25, // 10 (2 failed), the 2 again, 10, 5
		},
		{
			name: "transient failure that persists",
			fail: func(call int, id string) *types.BatchResultErrorEntry {
				if id == "4" {
					return internalError(call, id)
				}
				return nil
			},
			calls: 4, sent: 9, kind: crawl.KindTransient,
			says: `send to q: 16 of 25 messages not sent: 1 failed (1 still failing after 4 attempts): 1× InternalError "try again"`,
		},
		{
			name: "sender fault not retried",
			fail: func(call int, id string) *types.BatchResultErrorEntry {
				if id == "1" || id == "2" {
					return &types.BatchResultErrorEntry{Code: aws.String("InvalidMessageContents"), Message: aws.String("bad"), SenderFault: true}
				}
				return nil
			},
			calls: 1, sent: 8, kind: crawl.KindInvalid,
			says: `send to q: 17 of 25 messages not sent: 2 failed: 2× InvalidMessageContents "bad" (sender fault)`,
		},
		{
			name:  "entry missing from the answer",
			drop:  func(call int, id string) bool { return call == 1 && id == "0" },
			calls: 4, sent: 25,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAPI{fail: tc.fail, drop: tc.drop}
			q := New(f, "http://sqs.local/000000000000/q")
			q.backoff = time.Millisecond
			err := q.Send(context.Background(), contract.Bodies(25, 10)...)
			if tc.kind == crawl.KindOther {
				if err != nil {
					t.Fatal(err)
				}
			} else if crawl.KindOf(err) != tc.kind || err.Error() != tc.says {
				t.Fatalf("Send: %v (kind %d)\nwant: %s (kind %d)", err, crawl.KindOf(err), tc.says, tc.kind)
			}
			if f.calls != tc.calls || int64(f.calls) != q.Counts().Sends.Load() {
				t.Errorf("%d calls (%d counted), want %d", f.calls, q.Counts().Sends.Load(), tc.calls)
			}
			if len(f.sent) != tc.sent || q.Counts().Sent.Load() != int64(tc.sent) {
				t.Errorf("%d sent (%d counted), want %d", len(f.sent), q.Counts().Sent.Load(), tc.sent)
			}
		})
	}
}

func TestDeleteFailedEntries(t *testing.T) {
	f := &fakeAPI{fail: func(call int, id string) *types.BatchResultErrorEntry {
		if call == 2 && id == "0" {
			return &types.BatchResultErrorEntry{Code: aws.String("ReceiptHandleIsInvalid"), Message: aws.String("stale"), SenderFault: true}
		}
		return nil
	}}
	q := New(f, "http://sqs.local/000000000000/q")
	msgs := make([]Message, 15)
	err := q.Delete(context.Background(), msgs...)
	if crawl.KindOf(err) != crawl.KindInvalid || !strings.HasPrefix(err.Error(), "delete from q: 1 of 15 messages not deleted: 1 failed") {
		t.Fatalf("Delete: %v", err)
	}
	if q.Counts().Deletes.Load() != 2 || q.Counts().Deleted.Load() != 14 {
		t.Errorf("counts: %s", q.Counts())
	}
}

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		d, max time.Duration
		want   int32
	}{
		{-time.Second, MaxDelay, 0},
		{0, MaxDelay, 0},
		{time.Millisecond, MaxDelay, 1},
		{time.Second, MaxDelay, 1},
		{1500 * time.Millisecond, MaxDelay, 2},
		{time.Hour, MaxDelay, 900},
		{25 * time.Second, MaxWait, 20},
	} {
		if got := seconds(tc.d, tc.max); got != tc.want {
			t.Errorf("seconds(%v, %v) = %d, want %d", tc.d, tc.max, got, tc.want)
		}
	}
}

func TestBilled(t *testing.T) {
	var c Counts
	for _, n := range []int{0, 1, 64 << 10, 64<<10 + 1, MaxPayload} {
		c.bill(n)
	}
	if got := c.Billed.Load(); got != 1+1+1+2+4 {
		t.Errorf("billed %d, want 9", got)
	}
}

func repeat(n, size int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = size
	}
	return out
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
