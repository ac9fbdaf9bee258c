package costmodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
)

// Function is what one function's records add up to.
type Function struct {
	Name        string
	Invocations int64 // invoke records
	Inits       int64 // init records: execution environments started
	Messages    int64 // SQS messages received
	// BilledMS is invocation time as Lambda bills it (each record's
	// duration rounded up to the millisecond), InitMS the same for
	// inits.
	BilledMS, InitMS float64
	// GBSeconds and InitGBSeconds are BilledMS and InitMS times memory.
	GBSeconds, InitGBSeconds float64
	// ESMReceives and ESMDeletes are the SQS requests Lambda's event
	// source mapping made to deliver the batches. SQS hands out and
	// deletes at most ten messages a call, so a batch of up to ten is one
	// ReceiveMessage (billed one request per started 64 KiB of its
	// messages) and one DeleteMessageBatch if a message was handled; a
	// bigger batch, gathered over a batching window, is a receive per ten
	// messages (each billed by its own 64 KiB chunks, the bytes taken as
	// evenly split) and a delete per ten handled.
	ESMReceives, ESMDeletes int64
	Ops, InitOps            awsmeter.Usage
}

// Totals is what a set of log lines adds up to.
type Totals struct {
	Functions map[string]*Function
	// Pages is the pages crawled: the sum of the fetcher's EMF Pages
	// metric (one per recorded crawl, whatever its outcome).
	Pages float64
	// Links is the enqueue events the scheduler took (its EMF
	// Admissions metric, whatever the outcome): links found in pages,
	// sitemap entries, redirect targets and seeds, each one event.
	Links float64
	// LogBytes is the size of every line read, usage records included:
	// what CloudWatch Logs ingests.
	LogBytes int64
	Lines    int64
	Records  int64
}

// Names returns the functions' names, sorted.
func (t *Totals) Names() []string { return slices.Sorted(maps.Keys(t.Functions)) }

// Read adds up the log lines of r: usage records (awsmeter.Record),
// the fetcher's EMF records (for Pages) and, for LogBytes, every line.
// A line's JSON may follow a prefix (a timestamp, a stream name); lines
// that are not JSON count only as log bytes. memoryMB gives the memory
// size of a function whose records say 0.
func Read(r io.Reader, memoryMB func(function string) int) (*Totals, error) {
	t := &Totals{Functions: map[string]*Function{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		t.Lines++
		t.LogBytes += int64(len(line)) + 1
		i := bytes.IndexByte(line, '{')
		if i < 0 {
			continue
		}
		if err := t.add(line[i:], memoryMB); err != nil {
			return t, fmt.Errorf("line %d: %w", t.Lines, err)
		}
	}
	return t, sc.Err()
}

// probe is what tells the lines apart.
type probe struct {
	Msg      string          `json:"msg"`
	Version  int             `json:"v"`
	AWS      json.RawMessage `json:"_aws"`
	Function string          `json:"Function"` // EMF dimension
	Pages    *float64        `json:"Pages"`
	// Admissions is the scheduler's EMF count of enqueue events.
	Admissions *float64 `json:"Admissions"`
}

func (t *Totals) add(b []byte, memoryMB func(string) int) error {
	var p probe
	if json.Unmarshal(b, &p) != nil {
		return nil // not JSON after all: a log line like any other
	}
	switch {
	case p.Msg == awsmeter.RecordMsg:
		var rec awsmeter.Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("usage record: %w", err)
		}
		if rec.Version > awsmeter.RecordVersion {
			return fmt.Errorf("usage record version %d is newer than this model (%d)", rec.Version, awsmeter.RecordVersion)
		}
		t.Records++
		t.record(rec, memoryMB)
	case p.AWS != nil && p.Function == "fetcher" && p.Pages != nil:
		t.Pages += *p.Pages
	case p.AWS != nil && p.Function == "scheduler" && p.Admissions != nil:
		t.Links += *p.Admissions
	}
	return nil
}

func (t *Totals) record(rec awsmeter.Record, memoryMB func(string) int) {
	f := t.Functions[rec.Function]
	if f == nil {
		f = &Function{Name: rec.Function, Ops: awsmeter.Usage{}, InitOps: awsmeter.Usage{}}
		t.Functions[rec.Function] = f
	}
	mem := rec.MemoryMB
	if mem == 0 && memoryMB != nil {
		mem = memoryMB(rec.Function)
	}
	if mem == 0 {
		mem = DefaultMemoryMB
	}
	billed := math.Ceil(rec.DurationMS)
	gbs := float64(mem) / 1024 * billed / 1000
	if rec.Phase == awsmeter.PhaseInit {
		f.Inits++
		f.InitMS += billed
		f.InitGBSeconds += gbs
		f.InitOps.Add(rec.Ops)
		return
	}
	f.Invocations++
	f.BilledMS += billed
	f.GBSeconds += gbs
	f.Ops.Add(rec.Ops)
	if rec.Messages > 0 {
		f.Messages += int64(rec.Messages)
		// The batch's receives, its bytes taken as split evenly
		// between them: SQS bills each call by its started 64 KiB.
		calls := tens(rec.Messages)
		f.ESMReceives += calls * chunks((rec.MessageBytes+int(calls)-1)/int(calls))
		f.ESMDeletes += tens(rec.Messages - rec.Failed)
	}
}

// tens is the SQS batch calls n messages take: ten a call.
func tens(n int) int64 {
	return int64((max(n, 0) + 9) / 10)
}

// chunks is the SQS requests of a call with payload bytes.
func chunks(payload int) int64 {
	const chunk = 64 << 10
	if payload <= chunk {
		return 1
	}
	return int64((payload + chunk - 1) / chunk)
}
