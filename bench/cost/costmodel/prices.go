// Package costmodel prices what the crawler's functions asked of AWS, as
// their usage records say (shared/aws/awsmeter.Record), in dollars per
// million pages at list prices.
package costmodel

// List prices, us-east-1, on-demand, in US dollars, as published on the
// services' pricing pages (https://aws.amazon.com/<service>/pricing/)
// and checked on 2026-11-22. Free tiers are left out: the model is the
// marginal cost of a page.
const (
	// LambdaGBSecond is Lambda duration on arm64, first 7.5 billion
	// GB-seconds a month. A custom runtime's (provided.al2023) init is
	// billed as duration too, and since 2025-08-01 every runtime's is.
	LambdaGBSecond = 0.0000133334
	// LambdaRequest is one Lambda invocation ($0.20 per million).
	LambdaRequest = 0.20 / 1e6
	// SQSRequest is one SQS standard-queue request ($0.40 per million,
	// first 100 billion a month); every started 64 KiB of a request's
	// payload counts as one request.
	SQSRequest = 0.40 / 1e6
	// DynamoDBWriteUnit is one on-demand write request unit ($0.625 per
	// million since DynamoDB's 50% on-demand price cut of 2024-11-01):
	// a write of up to 1 KB; transactional writes take two.
	DynamoDBWriteUnit = 0.625 / 1e6
	// DynamoDBReadUnit is one on-demand read request unit ($0.125 per
	// million since 2024-11-01): a strongly consistent read of up to
	// 4 KB; eventually consistent reads take half, transactional two.
	DynamoDBReadUnit = 0.125 / 1e6
	// S3PutRequest is one S3 Standard PUT, COPY, POST or LIST request
	// ($0.005 per 1,000).
	S3PutRequest = 0.005 / 1000
	// S3GetRequest is one S3 Standard GET, HEAD or other request
	// ($0.0004 per 1,000).
	S3GetRequest = 0.0004 / 1000
	// LogsIngestionGB is CloudWatch Logs ingestion of Lambda logs, first
	// 10 TB a month ($0.50 per GB; Lambda's logs are tiered "vended
	// logs" since 2025-05-01, cheaper beyond 10 TB).
	LogsIngestionGB = 0.50

	// Storage, per GB-month: left out of the per-page total, stated
	// beside it.
	S3StandardGBMonth      = 0.023
	DynamoDBStorageGBMonth = 0.25
)

// Lambda's SQS event source mapping polls each queue with long polls of
// up to 20 s. An idle queue costs its empty receives whatever the crawl
// does: an estimate, with the usual five pollers per mapping, which an
// end-to-end run can check against the queues' NumberOfEmptyReceives.
const (
	ESMPollersPerQueue   = 5
	ESMEmptyPollsPerHour = ESMPollersPerQueue * 3600 / 20 // per queue
	Queues               = 4                              // enqueue, fetch, parse, summarize
	HoursPerMonth        = 730
)

// IdlePollingPerMonth is the estimated monthly cost of the event source
// mappings' empty receives on the four queues, crawling or not.
const IdlePollingPerMonth = Queues * ESMEmptyPollsPerHour * HoursPerMonth * SQSRequest

// DefaultMemoryMB is a function's memory size when its records do not
// say (template.yaml's Globals MemorySize).
const DefaultMemoryMB = 256
