package dynamo

import (
	"context"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// attempts counts the requests the SDK sends for one call, its retries
// included. A conditional write refused on its second attempt or later
// may have been refused by its own first attempt, applied by the server
// but its answer lost (docs/local-cloud.md, "Lost answers under load"),
// which the item then tells (ownWrite); refused on its first, it lost
// to another writer, or to another copy of the same message, and is
// re-read and re-planned as before.
type attempts struct{ n atomic.Int32 }

// option counts a call's attempts: a middleware after the SDK's retry
// middleware ("Retry"), which runs once per attempt.
func (a *attempts) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		return s.Finalize.Insert(middleware.FinalizeMiddlewareFunc("crawlerAttempts",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				a.n.Add(1)
				return next.HandleFinalize(ctx, in)
			}), "Retry", middleware.After)
	})
}

// retried reports whether the call was sent more than once.
func (a *attempts) retried() bool { return a.n.Load() > 1 }
