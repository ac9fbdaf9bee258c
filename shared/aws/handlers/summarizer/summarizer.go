// Package summarizer builds the summarizer function: it folds each
// crawl and its parsed document into the summary records (entity
// generations, duplicates, text piles) in DynamoDB and S3.
package summarizer

import (
	"context"
	"time"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/emf"
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/s3blob"
	"github.com/serverless-crawler/crawler/shared/aws/sqsbatch"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/summarize"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// Needs are the environment variables the function cannot start without.
var Needs = []string{"CRAWL_LOG_TABLE", "GENERATIONS_TABLE", "CONTROL_TABLE", "BUCKET",
	"SUMMARIZE_QUEUE_URL", "DEAD_LETTER_QUEUE_URL"}

// BatchSize is the most records Lambda hands the summarizer at once
// (template.yaml's BatchSize for the summarize queue), and so how many
// it handles at once: the pile packer writes its file when every record
// in flight waits on it, so a batch handled ten at a time would still
// write a file for every ten. Fifty summaries mostly wait on DynamoDB
// and S3; the documents they hold are bounded (crawl.ParseRoom of JSON
// at once, summarize.Config.MaxDocumentBytes) and the clients keep the
// connections open (stack.IdleConnsPerHost).
const BatchSize = 50

// New builds the summarizer's handler.
func New(ctx context.Context, e handlers.Env) (*handlers.Queue, error) {
	s, c := e.Settings, e.Clients
	// Text piles are packed in WARC files with the others summarized at
	// once (the batch's records are handled together): one PUT a batch,
	// not one a page. A summary waits at most a second for the others;
	// one waiting for a possible copy's lock steps out of the batch
	// meanwhile (summarize.New). The same packer reads parsed documents
	// stored whole.
	blobs := warc.NewPacker(s3blob.New(c.S3, s.Bucket), warc.PackConfig{Prefix: "piles/", Software: "serverless-crawler summarizer", MaxWait: time.Second})
	db := dynamo.New(c.DynamoDB, s.Tables, dynamo.WithBlobs(blobs))
	if _, err := s.RegisterAgent(ctx, db, "summarizer"); err != nil {
		return nil, err
	}
	// Fifty documents at once are bounded as the parser's bodies are.
	stage := summarize.New(db, blobs, summarize.Config{MaxDocumentBytes: crawl.ParseRoom}, e.Log)
	self := sqsq.New(c.SQS, s.SummarizeQueue)
	h := handlers.NewStage(stage.Handle, sqsbatch.Processor{
		Queue: "summarize", DeadLetters: sqsq.New(c.SQS, s.DeadLetterQueue), Requeue: self,
		Visibility: handlers.Visibility{Queue: self}, Deferred: handlers.Deferred, Concurrency: BatchSize, Log: e.Log,
		Members: blobs,
	}, emf.New(e.Metrics, "summarizer"))
	h.Usage = awsmeter.NewReporter(c.Meter, e.Metrics, "summarizer", s.MemoryMB)
	return h, nil
}
