package crawl

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRetryPolicyDecide(t *testing.T) {
	p := RetryPolicy{MaxReceives: 5, Base: time.Second, Max: 256 * time.Second}
	transient := E("put item", KindTransient, errors.New("throttled"))
	invalid := E("decode message", KindInvalid, errors.New("not JSON"))
	for _, c := range []struct {
		name   string
		p      RetryPolicy
		err    error
		tries  int
		action RetryAction
		delay  time.Duration
		reason string
	}{
		{"first transient failure backs off twice the base", p, transient, 1, Retry, 2 * time.Second, ""},
		{"fourth", p, transient, 4, Retry, 16 * time.Second, ""},
		{"last try dead-letters with the count", p, transient, 5, DeadLetter, 0, "failed 5 times, last: put item: throttled"},
		{"unknown errors are retried", p, errors.New("reset"), 2, Retry, 4 * time.Second, ""},
		{"conflicts are retried", p, ErrConflict, 1, Retry, 2 * time.Second, ""},
		{"bad input dead-letters at once", p, invalid, 1, DeadLetter, 0, "decode message: not JSON"},
		{"backoff stops at Max", RetryPolicy{MaxReceives: 20, Base: 100 * time.Millisecond, Max: 6400 * time.Millisecond}, transient, 12, Retry, 6400 * time.Millisecond, ""},
		{"zero MaxReceives is the default", RetryPolicy{Base: time.Second, Max: time.Minute}, transient, DefaultMaxReceives, DeadLetter, 0, "failed 5 times, last: put item: throttled"},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := c.p.Decide(c.err, c.tries)
			if v.Action != c.action || v.Delay != c.delay || v.Reason != c.reason {
				t.Errorf("Decide(%v, %d) = %+v, want action %d delay %v reason %q", c.err, c.tries, v, c.action, c.delay, c.reason)
			}
		})
	}
}

func TestTaskHandler(t *testing.T) {
	var got FetchTask
	h := TaskHandler(func(_ context.Context, ft FetchTask) error { got = ft; return nil })
	if err := h(context.Background(), []byte(`{"url":"http://a/","hops":2}`)); err != nil || got.URL != "http://a/" || got.Hops != 2 {
		t.Fatalf("handled %+v, %v", got, err)
	}
	err := h(context.Background(), []byte(`not json`))
	if err == nil || KindOf(err) != KindInvalid {
		t.Fatalf("a body that is not the task's JSON: err %v, want an invalid-input error", err)
	}
}
