package sqsbatch

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/serverless-crawler/crawler/shared/crawl"
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
