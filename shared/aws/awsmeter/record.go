package awsmeter

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// RecordMsg is the msg of every usage record: what a log query selects.
const RecordMsg = "aws usage"

// RecordVersion is the version of the Record schema written.
const RecordVersion = 1

// The phases of a record.
const (
	// PhaseInit is an execution environment's start: from the meter's
	// creation (just after the process started) to its first
	// invocation, with the requests made meanwhile (registering the
	// agent). Written once per environment, before its first
	// invocation's record.
	PhaseInit = "init"
	// PhaseInvoke is one invocation.
	PhaseInvoke = "invoke"
)

// Record is one JSON log line: what one invocation (or one environment's
// init) asked of AWS. Its fields are stable; new ones may be added.
// Counters that are 0 are left out (an absent field reads as 0). One
// line, here folded:
//
//	{"time":"2026-11-22T05:22:32.261Z","level":"INFO","msg":"aws usage","v":1,
//	 "function":"fetcher","request_id":"8f5c…","phase":"invoke","memory_mb":256,
//	 "duration_ms":1226.4,"messages":1,"message_bytes":121,
//	 "requests":9,"sqs_billed":1,"ddb_rcu":4,"ddb_wcu":12,"ddb_wcu_est":1,
//	 "ops":{"DynamoDB.GetItem":{"n":4,"rcu":4},"DynamoDB.TransactWriteItems":{"n":1,"wcu":8},
//	        "DynamoDB.UpdateItem":{"n":3,"errors":1,"wcu":4,"wcu_est":1},
//	        "SQS.SendMessageBatch":{"n":1,"billed":1}}}
type Record struct {
	Time     time.Time `json:"time"`
	Level    string    `json:"level"` // INFO: Lambda's log-level filter keeps it at LogLevel INFO or below
	Msg      string    `json:"msg"`   // RecordMsg
	Version  int       `json:"v"`     // RecordVersion
	Function string    `json:"function"`
	// RequestID is the invocation's Lambda request ID (empty outside
	// Lambda).
	RequestID string `json:"request_id,omitempty"`
	// Phase is PhaseInit or PhaseInvoke.
	Phase string `json:"phase"`
	// MemoryMB is the function's memory size
	// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE); 0 when unknown.
	MemoryMB int `json:"memory_mb"`
	// DurationMS is the handler's wall time (PhaseInvoke) or the time from
	// the meter's creation to the first invocation (PhaseInit).
	DurationMS float64 `json:"duration_ms"`
	// Messages is the number of SQS messages the invocation received, and
	// MessageBytes their bodies and attributes (what SQS bills Lambda's
	// ReceiveMessage for); Failed is how many it reported failed (all of
	// them when the handler returned an error), which Lambda does not
	// delete.
	Messages     int `json:"messages,omitempty"`
	MessageBytes int `json:"message_bytes,omitempty"`
	Failed       int `json:"failed,omitempty"`
	// Totals over Ops: API calls, SQS requests as billed, DynamoDB read
	// and write units reported, and write units estimated for refused
	// conditional writes.
	Requests  int64   `json:"requests,omitempty"`
	SQSBilled int64   `json:"sqs_billed,omitempty"`
	RCU       float64 `json:"ddb_rcu,omitempty"`
	WCU       float64 `json:"ddb_wcu,omitempty"`
	EstWCU    float64 `json:"ddb_wcu_est,omitempty"`
	// Ops is the usage by "Service.Operation".
	Ops Usage `json:"ops"`
}

// Reporter writes a Record per invocation of one function.
type Reporter struct {
	meter    *Meter
	w        io.Writer
	function string
	memoryMB int
	now      func() time.Time

	mu      sync.Mutex // serializes writes; guards started
	started bool
}

// NewReporter returns a reporter of m's counts for the named function,
// writing to w (standard output on Lambda, beside the EMF records). It
// returns nil, which reports nothing, when m is nil.
func NewReporter(m *Meter, w io.Writer, function string, memoryMB int) *Reporter {
	if m == nil {
		return nil
	}
	return &Reporter{meter: m, w: w, function: function, memoryMB: memoryMB, now: time.Now}
}

// Invocation is one invocation being measured.
type Invocation struct {
	r         *Reporter
	requestID string
	start     time.Time
	messages  int
	bytes     int
}

// Start begins measuring an invocation. The first one also writes the
// environment's init record. It returns nil (whose methods do nothing)
// for a nil reporter.
func (r *Reporter) Start(ctx context.Context) *Invocation {
	if r == nil {
		return nil
	}
	inv := &Invocation{r: r, start: r.now()}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		inv.requestID = lc.AwsRequestID
	}
	r.mu.Lock()
	first := !r.started
	r.started = true
	r.mu.Unlock()
	if first {
		r.write(Record{Phase: PhaseInit, RequestID: inv.requestID, DurationMS: ms(inv.start.Sub(r.meter.Created()))}, r.meter.Take())
	}
	return inv
}

// Batch records the SQS batch the invocation handles.
func (inv *Invocation) Batch(ev events.SQSEvent) {
	if inv == nil {
		return
	}
	inv.messages = len(ev.Records)
	inv.bytes = 0
	for _, m := range ev.Records {
		inv.bytes += len(m.Body)
		for k, a := range m.MessageAttributes {
			inv.bytes += len(k) + len(a.DataType) + len(deref(a.StringValue)) + len(a.BinaryValue)
		}
	}
}

// End writes the invocation's record: failed is the number of batch
// items reported failed; err is the handler's error (every message then
// counts as failed).
func (inv *Invocation) End(failed int, err error) {
	if inv == nil {
		return
	}
	if err != nil {
		failed = inv.messages
	}
	r := inv.r
	r.write(Record{Phase: PhaseInvoke, RequestID: inv.requestID, DurationMS: ms(r.now().Sub(inv.start)),
		Messages: inv.messages, MessageBytes: inv.bytes, Failed: failed}, r.meter.Take())
}

func (r *Reporter) write(rec Record, u Usage) {
	rec.Time, rec.Level, rec.Msg, rec.Version = r.now().UTC(), "INFO", RecordMsg, RecordVersion
	rec.Function, rec.MemoryMB, rec.Ops = r.function, r.memoryMB, u
	t := u.Total()
	rec.Requests, rec.SQSBilled, rec.RCU, rec.WCU, rec.EstWCU = t.Calls, t.Billed, round(t.RCU), round(t.WCU), round(t.EstWCU)
	b, err := json.Marshal(rec)
	if err != nil {
		return // a Record always encodes
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.w.Write(append(b, '\n')) // best effort, as logging is
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// round drops float noise from summed capacity units (0.5 steps).
func round(f float64) float64 { return math.Round(f*1e6) / 1e6 }
