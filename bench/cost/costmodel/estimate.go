package costmodel

import (
	"fmt"
	"strings"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
)

// Item is one line of the bill.
type Item struct {
	Service  string  `json:"service"`  // Lambda, SQS, DynamoDB, S3, CloudWatch Logs
	What     string  `json:"what"`     // the operation or function
	Quantity float64 `json:"quantity"` // over the run
	Unit     string  `json:"unit"`
	USD      float64 `json:"usd"` // over the run
}

// Estimate is the bill of a run, per page.
type Estimate struct {
	Pages float64 `json:"pages"`
	// Links is the enqueue events the scheduler took (Totals.Links).
	Links float64 `json:"links"`
	// Items are the per-page costs: everything but environments' inits.
	Items []Item `json:"items"`
	// USD is the run's total of Items; PerMillionPages the same per
	// million pages.
	USD             float64 `json:"usd"`
	PerMillionPages float64 `json:"usd_per_million_pages"`
	// Requests is the AWS requests of the run (calls made by the
	// functions, and by Lambda's event source mapping to deliver the
	// batches), not counting inits.
	Requests float64 `json:"requests"`

	// ColdStarts is the number of execution environments started, and
	// ColdStartItems what their inits cost (duration, agent
	// registration): per cold start, ColdStartUSD / ColdStarts.
	ColdStarts     int64   `json:"cold_starts"`
	ColdStartItems []Item  `json:"cold_start_items"`
	ColdStartUSD   float64 `json:"cold_start_usd"`

	// S3BytesPerPage is what the run put in S3, per page, and
	// S3StoragePerMillionPagesMonth what keeping that costs a month
	// (S3 Standard; raw bodies move to Infrequent Access after 30 days).
	// DynamoDB storage is not measured.
	S3BytesPerPage                float64 `json:"s3_bytes_per_page"`
	S3StoragePerMillionPagesMonth float64 `json:"s3_storage_usd_per_million_pages_month"`
	// IdlePollingPerMonth is the event source mappings' empty receives,
	// a monthly cost independent of pages.
	IdlePollingPerMonth float64 `json:"idle_polling_usd_per_month"`
}

// PerPage is q per page.
func (e *Estimate) PerPage(q float64) float64 {
	if e.Pages == 0 {
		return 0
	}
	return q / e.Pages
}

// PerLink is q per enqueue event (link); 0 when there were none.
func (e *Estimate) PerLink(q float64) float64 {
	if e.Links == 0 {
		return 0
	}
	return q / e.Links
}

// PerMillion is usd per million pages.
func (e *Estimate) PerMillion(usd float64) float64 { return e.PerPage(usd) * 1e6 }

// ByService sums the items' dollars by service.
func (e *Estimate) ByService() map[string]float64 {
	out := map[string]float64{}
	for _, it := range e.Items {
		out[it.Service] += it.USD
	}
	return out
}

// Price prices the totals of a run that crawled pages pages (0: the
// pages the fetcher's metrics counted).
func Price(t *Totals, pages float64) (*Estimate, error) {
	if pages == 0 {
		pages = t.Pages
	}
	if pages <= 0 {
		return nil, fmt.Errorf("no pages: the logs hold no fetcher Pages metric; give the number of pages")
	}
	e := &Estimate{Pages: pages, Links: t.Links, IdlePollingPerMonth: IdlePollingPerMonth}
	var s3Bytes float64
	for _, name := range t.Names() {
		f := t.Functions[name]
		e.Items = append(e.Items,
			Item{"Lambda", name + " invocations", float64(f.Invocations), "requests", float64(f.Invocations) * LambdaRequest},
			Item{"Lambda", name + " duration", f.GBSeconds, "GB-s", f.GBSeconds * LambdaGBSecond})
		if f.Messages > 0 {
			e.Items = append(e.Items,
				Item{"SQS", name + " batches: ReceiveMessage by Lambda", float64(f.ESMReceives), "requests", float64(f.ESMReceives) * SQSRequest},
				Item{"SQS", name + " batches: DeleteMessageBatch by Lambda", float64(f.ESMDeletes), "requests", float64(f.ESMDeletes) * SQSRequest})
			e.Requests += float64(f.ESMReceives + f.ESMDeletes)
		}
		for _, k := range f.Ops.Keys() {
			e.Items = append(e.Items, opItems(name, k, f.Ops[k])...)
			e.Requests += float64(f.Ops[k].Calls + f.Ops[k].Retries)
			if k == "S3.PutObject" {
				s3Bytes += float64(f.Ops[k].Bytes)
			}
		}
		if f.Inits > 0 {
			e.ColdStarts += f.Inits
			e.ColdStartItems = append(e.ColdStartItems, Item{"Lambda", name + " init", f.InitGBSeconds, "GB-s", f.InitGBSeconds * LambdaGBSecond})
			for _, k := range f.InitOps.Keys() {
				e.ColdStartItems = append(e.ColdStartItems, opItems(name, k, f.InitOps[k])...)
			}
		}
	}
	e.Items = append(e.Items, Item{"CloudWatch Logs", "ingestion", float64(t.LogBytes), "bytes", float64(t.LogBytes) / (1 << 30) * LogsIngestionGB})
	for _, it := range e.Items {
		e.USD += it.USD
	}
	for _, it := range e.ColdStartItems {
		e.ColdStartUSD += it.USD
	}
	e.PerMillionPages = e.PerMillion(e.USD)
	e.S3BytesPerPage = s3Bytes / pages
	e.S3StoragePerMillionPagesMonth = e.S3BytesPerPage * 1e6 / (1 << 30) * S3StandardGBMonth
	return e, nil
}

// opItems prices one operation's usage by one function.
func opItems(function, key string, o awsmeter.Op) []Item {
	service, op, _ := strings.Cut(key, ".")
	what := function + ": " + op
	attempts := float64(o.Calls + o.Retries)
	switch service {
	case "SQS":
		billed := float64(o.Billed)
		if billed == 0 {
			billed = attempts
		}
		return []Item{{"SQS", what, billed, "requests", billed * SQSRequest}}
	case "DynamoDB":
		var out []Item
		if o.WCU > 0 {
			out = append(out, Item{"DynamoDB", what, o.WCU, "WRU", o.WCU * DynamoDBWriteUnit})
		}
		if o.EstWCU > 0 {
			out = append(out, Item{"DynamoDB", what + " (refused on a condition, estimated)", o.EstWCU, "WRU", o.EstWCU * DynamoDBWriteUnit})
		}
		if o.RCU > 0 {
			out = append(out, Item{"DynamoDB", what, o.RCU, "RRU", o.RCU * DynamoDBReadUnit})
		}
		return out
	case "S3":
		switch op {
		case "DeleteObject", "DeleteObjects":
			return nil // free
		case "PutObject", "CopyObject", "PostObject", "ListObjects", "ListObjectsV2", "ListBuckets",
			"CreateMultipartUpload", "UploadPart", "UploadPartCopy", "CompleteMultipartUpload":
			return []Item{{"S3", what, attempts, "PUT-class requests", attempts * S3PutRequest}}
		default:
			return []Item{{"S3", what, attempts, "GET-class requests", attempts * S3GetRequest}}
		}
	}
	return nil
}
