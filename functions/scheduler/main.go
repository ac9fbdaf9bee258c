// Command scheduler is the scheduler Lambda function; everything but the wiring is
// in shared/aws/handlers/scheduler.
package main

import (
	"github.com/serverless-crawler/crawler/shared/aws/handlers"
	"github.com/serverless-crawler/crawler/shared/aws/handlers/scheduler"
)

func main() { handlers.Start("scheduler", scheduler.Needs, scheduler.Handler) }
