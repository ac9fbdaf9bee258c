package handlers_test

import (
	"testing"

	"github.com/serverless-crawler/crawler/shared/aws/handlers/summarizer"
)

// The summarizer handles a whole batch at once (summarizer.BatchSize),
// so its pile packer writes one file a batch: template.yaml must not
// hand it more records than that.
func TestSummarizerBatchSize(t *testing.T) {
	size, window := eventBatching(t, "summarize")
	if size != summarizer.BatchSize {
		t.Errorf("template.yaml's summarize BatchSize is %d, summarizer.BatchSize %d", size, summarizer.BatchSize)
	}
	if size > 10 && window == 0 {
		t.Errorf("a BatchSize of %d needs a batching window", size)
	}
}
