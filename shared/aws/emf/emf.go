// Package emf writes CloudWatch Embedded Metric Format records: JSON log
// lines that CloudWatch Logs turns into metrics, with no API call (and no
// PutMetricData cost) from the function.
// Format: https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
//
// Written by hand: the format is one small JSON object, and the AWS
// libraries for it (aws-embedded-metrics) have no Go version.
package emf

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Namespace is the CloudWatch namespace of the crawler's metrics.
const Namespace = "ServerlessCrawler"

// Unit is a CloudWatch metric unit.
type Unit string

// The units used.
const (
	Count        Unit = "Count"
	Bytes        Unit = "Bytes"
	Milliseconds Unit = "Milliseconds"
)

// Recorder accumulates metrics during one invocation and writes them on
// Flush, one EMF record per set of dimension values.
type Recorder struct {
	mu       sync.Mutex
	w        io.Writer
	function string
	now      func() time.Time
	groups   map[string]*group // by dimension values
}

type group struct {
	dims   map[string]string
	values map[string][]float64
	units  map[string]Unit
}

// New returns a recorder writing to w for the named function.
func New(w io.Writer, function string) *Recorder {
	return &Recorder{w: w, function: function, now: time.Now, groups: map[string]*group{}}
}

// Add records one value of a metric under the given dimensions (name,
// value pairs), besides the Function dimension every record carries.
func (r *Recorder) Add(metric string, unit Unit, v float64, dims ...string) {
	if len(dims)%2 != 0 {
		panic("emf: dims must be name, value pairs")
	}
	key := strings.Join(dims, "\x00")
	r.mu.Lock()
	defer r.mu.Unlock()
	g, ok := r.groups[key]
	if !ok {
		g = &group{dims: map[string]string{}, values: map[string][]float64{}, units: map[string]Unit{}}
		for i := 0; i < len(dims); i += 2 {
			g.dims[dims[i]] = dims[i+1]
		}
		r.groups[key] = g
	}
	g.units[metric] = unit
	if unit == Milliseconds {
		g.values[metric] = append(g.values[metric], v) // a distribution
		return
	}
	if len(g.values[metric]) == 0 {
		g.values[metric] = []float64{0}
	}
	g.values[metric][0] += v // counts and bytes add up
}

// Flush writes the accumulated records and forgets them.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	groups := r.groups
	r.groups = map[string]*group{}
	r.mu.Unlock()
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, rec := range r.records(groups[k]) {
			b, err := json.Marshal(rec)
			if err != nil {
				return fmt.Errorf("encode EMF record: %w", err)
			}
			if _, err := r.w.Write(append(b, '\n')); err != nil {
				return fmt.Errorf("write EMF record: %w", err)
			}
		}
	}
	return nil
}

// maxValues is how many values of one metric an EMF record may carry.
const maxValues = 100

// records splits a group into EMF records of at most maxValues values
// per metric.
func (r *Recorder) records(g *group) []map[string]any {
	var out []map[string]any
	for {
		part := &group{dims: g.dims, values: map[string][]float64{}, units: g.units}
		more := false
		for n, vs := range g.values {
			k := min(len(vs), maxValues)
			if k > 0 {
				part.values[n] = vs[:k]
			}
			g.values[n] = vs[k:]
			more = more || len(vs) > k
		}
		out = append(out, r.record(part))
		if !more {
			return out
		}
	}
}

func (r *Recorder) record(g *group) map[string]any {
	dimNames := []string{"Function"}
	rec := map[string]any{"Function": r.function}
	for n, v := range g.dims {
		dimNames = append(dimNames, n)
		rec[n] = v
	}
	sort.Strings(dimNames[1:])
	var metrics []map[string]string
	names := make([]string, 0, len(g.values))
	for n := range g.values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		metrics = append(metrics, map[string]string{"Name": n, "Unit": string(g.units[n])})
		if vs := g.values[n]; len(vs) == 1 {
			rec[n] = vs[0]
		} else {
			rec[n] = vs
		}
	}
	rec["_aws"] = map[string]any{
		"Timestamp": r.now().UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace":  Namespace,
			"Dimensions": [][]string{dimNames},
			"Metrics":    metrics,
		}},
	}
	return rec
}
