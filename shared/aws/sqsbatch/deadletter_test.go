package sqsbatch

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// sentSQS is an SQS API whose SendMessage keeps what it was given; the
// queue's own checks (sqsq.Queue) run before it, as before SQS.
type sentSQS struct {
	sqsq.API
	mu  sync.Mutex
	ins []*sqs.SendMessageInput
}

func (s *sentSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ins = append(s.ins, in)
	return &sqs.SendMessageOutput{MessageId: aws.String("d1")}, nil
}

// TestDeadLetterAnyReason: a message is dead-lettered whatever its
// error says and however large its body: a reason with characters SQS
// refuses in an attribute (a URL a user sent, with a control character)
// or longer than the attributes may be is made one SQS takes; a body
// with no room for the attributes goes without them. Either used to fail
// the dead-letter send on every try, until SQS's redrive moved the
// message without its reason.
func TestDeadLetterAnyReason(t *testing.T) {
	long := "admit http://exa\x01mple.com/" + strings.Repeat("é", 8<<10) + ": invalid"
	for _, tc := range []struct {
		name      string
		body      string
		err       string
		wantAttrs bool
	}{
		{"a control character in the reason", `{"url": "x"}`, "admit http://exa\x01mple.com/: invalid", true},
		{"a reason past the attributes' room", `{"url": "x"}`, long, true},
		{"not UTF-8 in the reason", `{"url": "x"}`, "bad \xff byte", true},
		{"a body at SQS's limit", `"` + strings.Repeat("a", sqsq.MaxPayload-2) + `"`, "refused", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &sentSQS{}
			p := Processor{Queue: "enqueue", DeadLetters: sqsq.New(api, "http://sqs.local/123/enqueue-dlq"), Concurrency: 1,
				Handle: func(context.Context, []byte) error { return crawl.E("test", crawl.KindInvalid, errors.New(tc.err)) }}
			ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: tc.body,
				Attributes: map[string]string{"ApproximateReceiveCount": "1"}}}}
			resp, err := p.Process(context.Background(), ev)
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("Process: %v, failures %+v; want the message dead-lettered and acknowledged", err, resp.BatchItemFailures)
			}
			if len(api.ins) == 0 {
				t.Fatal("nothing sent to the dead-letter queue")
			}
			in := api.ins[len(api.ins)-1]
			if aws.ToString(in.MessageBody) != tc.body {
				t.Errorf("dead letter's body %q..., want the message's", crawl.Truncate(aws.ToString(in.MessageBody), 40))
			}
			reason, ok := in.MessageAttributes["reason"]
			switch {
			case ok != tc.wantAttrs:
				t.Fatalf("reason attribute sent: %v, want %v", ok, tc.wantAttrs)
			case !ok:
				return
			}
			v := aws.ToString(reason.StringValue)
			if len(v) > MaxReasonBytes || !utf8.ValidString(v) || strings.ContainsRune(v, '\x01') {
				t.Errorf("reason of %d bytes (valid UTF-8: %v): %q", len(v), utf8.ValidString(v), crawl.Truncate(v, 80))
			}
			if !strings.HasPrefix(v, "test: ") {
				t.Errorf("reason %q, want the error's head", crawl.Truncate(v, 80))
			}
		})
	}
}
