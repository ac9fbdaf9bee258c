package emf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func TestFlush(t *testing.T) {
	var buf bytes.Buffer
	r := New(&buf, "fetcher")
	r.now = func() time.Time { return time.UnixMilli(1700000000000) }
	r.Add("Pages", Count, 1, "Outcome", "complete")
	r.Add("Pages", Count, 1, "Outcome", "complete")
	r.Add("Pages", Count, 1, "Outcome", "http-client-error")
	for i := 0; i < 150; i++ {
		r.Add("FetchLatency", Milliseconds, float64(i))
	}
	r.Add("Bytes", Bytes, 1000)
	r.Add("Bytes", Bytes, 24)
	if err := r.Flush(); err != nil {
		t.Fatal(err)
	}
	type record struct {
		Function     string
		Outcome      string
		Pages        float64
		Bytes        float64
		FetchLatency json.RawMessage
		AWS          struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
	}
	var recs []record
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var rec record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("not JSON: %s", sc.Text())
		}
		recs = append(recs, rec)
	}
	// Groups in order: no dims (latency + bytes, split 100 + 50), then
	// the two outcomes.
	if len(recs) != 4 {
		t.Fatalf("got %d records, want 4: %s", len(recs), buf.String())
	}
	var lat []float64
	for _, rec := range recs[:2] {
		var vs []float64
		if err := json.Unmarshal(rec.FetchLatency, &vs); err != nil {
			t.Fatalf("FetchLatency %s: %v", rec.FetchLatency, err)
		}
		lat = append(lat, vs...)
	}
	if len(lat) != 150 || recs[0].Bytes != 1024 {
		t.Errorf("latency values %d (want 150), bytes %v (want 1024)", len(lat), recs[0].Bytes)
	}
	if recs[2].Outcome != "complete" || recs[2].Pages != 2 || recs[3].Outcome != "http-client-error" || recs[3].Pages != 1 {
		t.Errorf("outcome records = %+v, %+v", recs[2], recs[3])
	}
	m := recs[2].AWS.CloudWatchMetrics[0]
	if recs[2].Function != "fetcher" || m.Namespace != Namespace || recs[2].AWS.Timestamp != 1700000000000 ||
		len(m.Dimensions) != 1 || len(m.Dimensions[0]) != 2 || m.Dimensions[0][0] != "Function" || m.Dimensions[0][1] != "Outcome" ||
		len(m.Metrics) != 1 || m.Metrics[0].Name != "Pages" || m.Metrics[0].Unit != "Count" {
		t.Errorf("EMF metadata = %+v", recs[2])
	}
	buf.Reset()
	if err := r.Flush(); err != nil || buf.Len() != 0 {
		t.Errorf("second flush wrote %q, %v; want nothing", buf.String(), err)
	}
}
