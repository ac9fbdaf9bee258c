package costmodel

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
)

func line(t *testing.T, rec awsmeter.Record) string {
	t.Helper()
	rec.Msg, rec.Version, rec.Level = awsmeter.RecordMsg, awsmeter.RecordVersion, "INFO"
	if rec.Phase == "" {
		rec.Phase = awsmeter.PhaseInvoke
	}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

const emfPages = `{"Function":"fetcher","Outcome":"complete","Pages":%d,"_aws":{"Timestamp":1,"CloudWatchMetrics":[]}}`

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestPrice(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records []awsmeter.Record
		pages   float64
		want    map[string]float64 // $ over the run by service
		perM    float64            // $ per million pages, logs left out
		coldUSD float64
	}{
		{
			name: "one Lambda invocation of 1 GB for 1 s",
			records: []awsmeter.Record{{Function: "parser", MemoryMB: 1024, DurationMS: 999.2, Messages: 1, MessageBytes: 100,
				Ops: awsmeter.Usage{}}},
			pages: 1,
			want: map[string]float64{
				"Lambda": LambdaRequest + 1*LambdaGBSecond,
				"SQS":    2 * SQSRequest, // Lambda's receive and delete of the batch
			},
			perM: 1e6 * (LambdaRequest + LambdaGBSecond + 2*SQSRequest),
		},
		{
			name: "a failed batch is not deleted; a 100 KiB batch is received as 2 requests",
			records: []awsmeter.Record{{Function: "fetcher", MemoryMB: 512, DurationMS: 2, Messages: 3, MessageBytes: 100 << 10, Failed: 3,
				Ops: awsmeter.Usage{"SQS.SendMessageBatch": {Calls: 1, Billed: 2}}}},
			pages: 2,
			want: map[string]float64{
				"Lambda": LambdaRequest + 0.5*0.002*LambdaGBSecond,
				"SQS":    (2 + 0 + 2) * SQSRequest,
			},
			perM: 1e6 / 2 * (LambdaRequest + 0.001*LambdaGBSecond + 4*SQSRequest),
		},
		{
			name: "DynamoDB units, refused writes and S3 classes",
			records: []awsmeter.Record{{Function: "summarizer", MemoryMB: 256, DurationMS: 0, Ops: awsmeter.Usage{
				"DynamoDB.TransactWriteItems": {Calls: 2, WCU: 8, RCU: 1},
				"DynamoDB.UpdateItem":         {Calls: 1, Errors: 1, EstWCU: 1},
				"DynamoDB.GetItem":            {Calls: 4, RCU: 2},
				"S3.PutObject":                {Calls: 2, Retries: 1, Bytes: 3000},
				"S3.GetObject":                {Calls: 3},
				"S3.HeadObject":               {Calls: 1},
				"S3.DeleteObject":             {Calls: 5},
			}}},
			pages: 10,
			want: map[string]float64{
				"Lambda":   LambdaRequest,
				"DynamoDB": 9*DynamoDBWriteUnit + 3*DynamoDBReadUnit,
				"S3":       3*S3PutRequest + 4*S3GetRequest,
			},
			perM: 1e5 * (LambdaRequest + 9*DynamoDBWriteUnit + 3*DynamoDBReadUnit + 3*S3PutRequest + 4*S3GetRequest),
		},
		{
			name: "inits are priced per cold start, not per page",
			records: []awsmeter.Record{
				{Function: "scheduler", Phase: awsmeter.PhaseInit, MemoryMB: 256, DurationMS: 100,
					Ops: awsmeter.Usage{"DynamoDB.PutItem": {Calls: 1, WCU: 1}}},
				{Function: "scheduler", MemoryMB: 256, DurationMS: 10, Ops: awsmeter.Usage{}},
			},
			pages:   1,
			want:    map[string]float64{"Lambda": LambdaRequest + 0.25*0.01*LambdaGBSecond},
			perM:    1e6 * (LambdaRequest + 0.25*0.01*LambdaGBSecond),
			coldUSD: 0.25*0.1*LambdaGBSecond + DynamoDBWriteUnit,
		},
		{
			name:    "memory 0 takes the default",
			records: []awsmeter.Record{{Function: "parser", DurationMS: 1000, Ops: awsmeter.Usage{}}},
			pages:   1,
			want:    map[string]float64{"Lambda": LambdaRequest + 0.25*LambdaGBSecond},
			perM:    1e6 * (LambdaRequest + 0.25*LambdaGBSecond),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in strings.Builder
			for _, r := range tc.records {
				in.WriteString(line(t, r) + "\n")
			}
			tot, err := Read(strings.NewReader(in.String()), nil)
			if err != nil {
				t.Fatal(err)
			}
			tot.LogBytes = 0 // priced in TestLogs
			e, err := Price(tot, tc.pages)
			if err != nil {
				t.Fatal(err)
			}
			got := e.ByService()
			delete(got, "CloudWatch Logs")
			for s, usd := range got {
				if !near(usd, tc.want[s]) {
					t.Errorf("%s: $%g, want $%g", s, usd, tc.want[s])
				}
			}
			for s, usd := range tc.want {
				if _, ok := got[s]; !ok && usd != 0 {
					t.Errorf("%s missing, want $%g", s, usd)
				}
			}
			if !near(e.PerMillionPages, tc.perM) {
				t.Errorf("$%g per million pages, want $%g", e.PerMillionPages, tc.perM)
			}
			if !near(e.ColdStartUSD, tc.coldUSD) {
				t.Errorf("cold starts $%g, want $%g", e.ColdStartUSD, tc.coldUSD)
			}
		})
	}
}

func TestRead(t *testing.T) {
	in := strings.Join([]string{
		`2026-11-22T05:00:00Z	stream	` + line(t, awsmeter.Record{Function: "fetcher", MemoryMB: 256, DurationMS: 1.2, Messages: 1,
			MessageBytes: 10, Ops: awsmeter.Usage{"S3.PutObject": {Calls: 1, Bytes: 1 << 20}}}),
		strings.Replace(emfPages, "%d", "3", 1),
		strings.Replace(emfPages, "%d", "2", 1),
		`{"Function":"parser","Pages":7,"_aws":{}}`, // another function's metric of that name
		`{"Function":"scheduler","Outcome":"admitted","Admissions":40,"_aws":{}}`,
		`{"Function":"scheduler","Outcome":"deduped","Admissions":960,"_aws":{}}`,
		`{"time":"x","level":"INFO","msg":"fetched","url":"http://a/"}`,
		`not JSON {at all`,
		``,
	}, "\n")
	tot, err := Read(strings.NewReader(in), func(string) int { return 128 })
	if err != nil {
		t.Fatal(err)
	}
	if tot.Pages != 5 || tot.Links != 1000 || tot.Records != 1 || tot.Lines != 8 {
		t.Errorf("pages %v, links %v, records %d, lines %d; want 5, 1000, 1, 8", tot.Pages, tot.Links, tot.Records, tot.Lines)
	}
	f := tot.Functions["fetcher"]
	if f == nil || f.Invocations != 1 || f.BilledMS != 2 || f.ESMReceives != 1 || f.ESMDeletes != 1 || f.Ops["S3.PutObject"].Bytes != 1<<20 {
		t.Fatalf("fetcher %+v", f)
	}
	e, err := Price(tot, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e.Pages != 5 || !near(e.S3BytesPerPage, float64(1<<20)/5) {
		t.Errorf("pages %v, S3 bytes per page %v", e.Pages, e.S3BytesPerPage)
	}
	if e.Links != 1000 || !near(e.PerLink(e.USD)*1000, e.USD) {
		t.Errorf("links %v, per link %v of %v", e.Links, e.PerLink(e.USD), e.USD)
	}
	if _, err := Price(&Totals{Functions: map[string]*Function{}}, 0); err == nil {
		t.Error("Price with no pages: no error")
	}
	newer := strings.Replace(line(t, awsmeter.Record{Function: "x"}), `"v":1`, `"v":99`, 1)
	if _, err := Read(strings.NewReader(newer), nil); err == nil {
		t.Error("a record of a newer version was read")
	}
}

func TestLogs(t *testing.T) {
	for _, tc := range []struct {
		bytes int64
		usd   float64
	}{{0, 0}, {1 << 30, LogsIngestionGB}, {3 << 29, 1.5 * LogsIngestionGB}} {
		e, err := Price(&Totals{Functions: map[string]*Function{}, LogBytes: tc.bytes}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.ByService()["CloudWatch Logs"]; !near(got, tc.usd) {
			t.Errorf("%d log bytes: $%g, want $%g", tc.bytes, got, tc.usd)
		}
	}
}

func TestIdlePolling(t *testing.T) {
	// 4 queues x 5 pollers x one 20 s poll each = 3,600 polls an hour a
	// queue; 730 hours; $0.40 per million.
	if want := 4 * 900 * 730 * 0.40 / 1e6; !near(IdlePollingPerMonth, want) {
		t.Errorf("idle polling $%g a month, want $%g", IdlePollingPerMonth, want)
	}
}

func TestWriteMarkdown(t *testing.T) {
	in := line(t, awsmeter.Record{Function: "fetcher", MemoryMB: 256, DurationMS: 40, Messages: 1, MessageBytes: 200,
		Ops: awsmeter.Usage{"DynamoDB.GetItem": {Calls: 2, RCU: 1}, "DynamoDB.PutItem": {Calls: 1, Unreported: 1}}}) + "\n" +
		strings.Replace(emfPages, "%d", "1", 1) + "\n"
	tot, err := Read(strings.NewReader(in), nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := Price(tot, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	WriteMarkdown(&out, tot, e)
	for _, want := range []string{"per million pages", "| Lambda | fetcher duration |", "| fetcher | 1.000 | 1.00 | 40.0 |", "1 DynamoDB calls whose answers carried no consumed capacity"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// Lambda's event source mapping receives and deletes at most ten
// messages a call, whatever the batch it hands a function.
func TestEventSourceMappingRequests(t *testing.T) {
	for _, c := range []struct {
		name                    string
		messages, bytes, failed int
		receives, deletes       int64
	}{
		{"one message", 1, 100, 0, 1, 1},
		{"ten messages", 10, 10 << 10, 0, 1, 1},
		{"ten large messages", 10, 200 << 10, 0, 4, 1},
		{"all failed", 10, 1000, 10, 1, 0},
		{"fifty, gathered over a window", 50, 100 << 10, 0, 5, 5},
		{"fifty, eleven failed", 50, 100 << 10, 11, 5, 4},
		{"fifty large", 50, 1 << 20, 0, 20, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := line(t, awsmeter.Record{Function: "summarizer", DurationMS: 10, Messages: c.messages, MessageBytes: c.bytes, Failed: c.failed})
			tot, err := Read(strings.NewReader(in), nil)
			if err != nil {
				t.Fatal(err)
			}
			f := tot.Functions["summarizer"]
			if f == nil || f.ESMReceives != c.receives || f.ESMDeletes != c.deletes {
				t.Fatalf("got %+v; want %d receives, %d deletes", f, c.receives, c.deletes)
			}
		})
	}
}
