// Command summarizer is the summarizer Lambda function; everything but the wiring is
// in shared/aws/handlers/summarizer.
package main

import (
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/summarizer"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
)

func main() {
	handlers.Start("summarizer", summarizer.Needs, handlers.Queued(summarizer.New), stack.WithS3)
}
