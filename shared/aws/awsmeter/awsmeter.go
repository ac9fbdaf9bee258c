// Package awsmeter counts what a process asks of AWS, for the cost
// model: every request by service and operation, SQS requests as SQS
// bills them (one per started 64 KiB of payload), the read and write
// units DynamoDB says each call consumed, and S3 bytes put and got.
//
// A Meter is aws-sdk-go-v2 middleware: add Meter.AddTo to the APIOptions
// of a configuration or a client, and every operation of every client
// built from it is counted. It asks DynamoDB for the consumed capacity
// of every call that can return it (ReturnConsumedCapacity=TOTAL, unless
// the caller asked for INDEXES), on a copy of the caller's input, so the
// adapters need no change.
//
// A Reporter writes one JSON line per Lambda invocation with what the
// invocation asked of AWS, its duration and memory size (see Record):
// the log lines an end-to-end run sums to price a page.
package awsmeter

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/aws/smithy-go/middleware"
)

// Op is the usage of one operation, such as "DynamoDB.GetItem".
type Op struct {
	// Calls counts the operation's calls, each once however often the
	// SDK retried it.
	Calls int64 `json:"n"`
	// Retries counts the attempts beyond each call's first.
	Retries int64 `json:"retries,omitempty"`
	// Errors counts the calls that ended in an error.
	Errors int64 `json:"errors,omitempty"`
	// Billed counts SQS requests as SQS bills them: every attempt, one
	// request per started 64 KiB of the payload it carries.
	Billed int64 `json:"billed,omitempty"`
	// Empty counts SQS ReceiveMessage calls that returned no message.
	Empty int64 `json:"empty,omitempty"`
	// RCU and WCU are the read and write capacity units DynamoDB
	// reported as consumed: on-demand read and write request units.
	RCU float64 `json:"rcu,omitempty"`
	WCU float64 `json:"wcu,omitempty"`
	// EstWCU estimates the write units of writes that DynamoDB refused
	// on a condition: it bills them but reports nothing. One unit per
	// failed conditional write, two per action of a canceled
	// transaction (1 KB items; a floor).
	EstWCU float64 `json:"wcu_est,omitempty"`
	// Unreported counts DynamoDB calls that succeeded without reporting
	// consumed capacity.
	Unreported int64 `json:"unreported,omitempty"`
	// Bytes is the payload of S3 PutObject (bytes put) and GetObject
	// (bytes got).
	Bytes int64 `json:"bytes,omitempty"`
}

func (o *Op) add(v Op) {
	o.Calls += v.Calls
	o.Retries += v.Retries
	o.Errors += v.Errors
	o.Billed += v.Billed
	o.Empty += v.Empty
	o.RCU += v.RCU
	o.WCU += v.WCU
	o.EstWCU += v.EstWCU
	o.Unreported += v.Unreported
	o.Bytes += v.Bytes
}

// Usage is usage by operation: "Service.Operation" (the SDK's service
// ID, "DynamoDB", "SQS" or "S3", and operation name).
type Usage map[string]Op

// Add adds v to u.
func (u Usage) Add(v Usage) {
	for k, o := range v {
		cur := u[k]
		cur.add(o)
		u[k] = cur
	}
}

// Total sums every operation.
func (u Usage) Total() Op {
	var t Op
	for _, o := range u {
		t.add(o)
	}
	return t
}

// Keys returns the operations, sorted.
func (u Usage) Keys() []string { return slices.Sorted(maps.Keys(u)) }

// Meter counts the AWS requests of the clients it is attached to. It is
// safe for concurrent use.
type Meter struct {
	mu      sync.Mutex
	usage   Usage
	created time.Time
}

// New returns a meter with nothing counted, created now.
func New() *Meter { return &Meter{usage: Usage{}, created: time.Now()} }

// Created returns when the meter was made: in a function, just after
// the process started.
func (m *Meter) Created() time.Time { return m.created }

// Take returns what was counted since the last Take (or since New) and
// starts counting afresh.
func (m *Meter) Take() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.usage
	m.usage = Usage{}
	return u
}

func (m *Meter) record(key string, o Op) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.usage[key]
	cur.add(o)
	m.usage[key] = cur
}

// AddTo adds the meter to an operation's middleware stack. Use it as an
// APIOptions entry: config.WithAPIOptions([]func(*middleware.Stack)
// error{m.AddTo}), or in a client's Options.APIOptions.
func (m *Meter) AddTo(stack *middleware.Stack) error {
	// After the SDK's own initialize steps: the input is validated with
	// what the caller set, and the meter sees the final result, retries
	// included.
	return stack.Initialize.Add(&countMiddleware{m: m}, middleware.After)
}
