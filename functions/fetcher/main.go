// Command fetcher is the fetcher Lambda function; everything but the wiring is
// in shared/aws/handlers/fetcher.
package main

import (
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/fetcher"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
)

func main() { handlers.Start("fetcher", fetcher.Needs, handlers.Queued(fetcher.New), stack.WithS3) }
