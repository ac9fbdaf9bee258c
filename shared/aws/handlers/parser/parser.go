// Package parser builds the parser function: it reads the HTML bodies
// the fetcher stored in S3, sends the links found to the enqueue queue
// and the parsed document on to the summarize queue.
package parser

import (
	"context"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/s3blob"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/parse"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// Needs are the environment variables the function cannot start without.
var Needs = []string{"CRAWL_LOG_TABLE", "CONTROL_TABLE", "BUCKET", "ENQUEUE_QUEUE_URL",
	"PARSE_QUEUE_URL", "SUMMARIZE_QUEUE_URL", "DEAD_LETTER_QUEUE_URL"}

// New builds the parser's handler.
func New(ctx context.Context, e handlers.Env) (*handlers.Queue, error) {
	s, c := e.Settings, e.Clients
	db := dynamo.New(c.DynamoDB, s.Tables)
	if _, err := s.RegisterAgent(ctx, db, "parser"); err != nil {
		return nil, err
	}
	// The packer reads the bodies the fetcher packed in WARC files (a
	// ranged GET each) and any other key as it is; before a batch's
	// handlers start, the read-ahead takes the batch's bodies with one
	// ranged GET for those that lie together in one file (a fetcher's
	// batch), up to an eighth of the parse room in compressed bytes.
	blobs := warc.NewReadAhead(warc.NewPacker(s3blob.New(c.S3, s.Bucket), warc.PackConfig{}), crawl.ParseRoom/8)
	// Links and documents go out once the batch is parsed, in
	// SendMessageBatch calls for all its pages (sqsbatch.Gather).
	stage := parse.New(blobs, db, sqsbatch.Gather(sqsq.New(c.SQS, s.EnqueueQueue)), sqsbatch.Gather(sqsq.New(c.SQS, s.SummarizeQueue)),
		parse.Config{MaxURLsFromPage: 5000, LinksPerMessage: crawl.MaxEventURLs, MaxBytesInParse: crawl.ParseRoom}, e.Log)
	h := handlers.NewStage(stage.Handle, sqsbatch.Processor{
		Queue: "parse", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue), Visibility: handlers.Visibility{Queue: sqsq.New(c.SQS, s.ParseQueue)},
		Concurrency: 4, Log: e.Log, ReadAhead: func(ctx context.Context, bodies [][]byte) {
			blobs.Prefetch(ctx, parse.BodyKeys(bodies))
		},
	}, emf.New(e.Metrics, "parser"))
	h.Usage = awsmeter.NewReporter(c.Meter, e.Metrics, "parser", s.MemoryMB)
	return h, nil
}
