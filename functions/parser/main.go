// Command parser is the parser Lambda function; everything but the wiring is
// in shared/aws/handlers/parser.
package main

import (
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/parser"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
)

func main() { handlers.Start("parser", parser.Needs, handlers.Queued(parser.New), stack.WithS3) }
