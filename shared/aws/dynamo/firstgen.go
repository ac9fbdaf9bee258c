package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// A URL's first generation, when it duplicates nothing, is opened with
// ordered conditional writes instead of a transaction, which DynamoDB
// bills at twice the write units (openFirst): the head, then the
// generation's item. The crawl puts no summary item (finishReplace).
// Most generations a crawl opens are first ones.
//
// The head is the commit point: it names the generation before the
// generation's item exists. So a process that dies between the two
// leaves a head naming an unwritten generation, which readers take for
// none (OpenGeneration says crawl.ErrNotFound). Its crawl's redelivery
// finds the head naming it and writes the generation (finishFirst): the
// summarizer plans the same generation again, under the same id
// (crawl.GenerationUUID). Meanwhile a summary of another crawl of
// the URL is deferred (*PendingError); after firstVoidAfter, when the
// crawl that named the generation can no longer be coming back (SQS
// redelivers a message five times at most, six minutes apart), the head
// is void, and that summary takes it over.
//
// Duplicates keep the transaction: the count of an original's open
// duplicates changes with them (summary.go).

// firstVoidAfter is how long a head may name an unwritten first
// generation before another crawl of the URL takes it over.
const firstVoidAfter = time.Hour

// pendingRetry bounds the wait a *PendingError asks for.
const pendingRetry = time.Minute

// PendingError is a summary that cannot be applied yet: the URL's head
// names a first generation that the crawl opening it has not written
// yet (see openFirst). It is worth trying again after RetryAfter.
type PendingError struct {
	URL        string
	RetryAfter time.Duration
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("the first generation of %s is being opened by another crawl: retry after %v", e.URL, e.RetryAfter)
}

// Later says when to try the summary again (handlers.Deferred).
func (e *PendingError) Later() time.Duration { return e.RetryAfter }

// openFirst opens s's generation, the URL's first, over no head or over
// the void head void: the head, then the generation's item (see above).
func (d *DB) openFirst(ctx context.Context, s crawl.SummaryUpdate, void map[string]types.AttributeValue) (bool, error) {
	id, item, _, err := d.prepareNew(ctx, s, nil)
	if err != nil {
		return false, err
	}
	e := &fxExpr{}
	cond, count := headCond(e, void)
	_, err = d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(d.t.Generations), Key: genKey(s.URL, skHead),
		UpdateExpression: aws.String(headUpdate(e, s, id, item[gaSK], 0, count, d.now().Unix())), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()})
	var refused *types.ConditionalCheckFailedException
	if errors.As(err, &refused) {
		return false, fmt.Errorf("open the first generation of %s: the head changed: %w", s.URL, crawl.ErrConflict)
	}
	if err != nil {
		return false, fmt.Errorf("open the first generation of %s: %w", s.URL, err)
	}
	return d.putFirst(ctx, s.URL, item) // no summary item: see finishReplace
}

// putFirst puts a first generation's item, unless a concurrent delivery
// of the same crawl put it first, and reports whether it did.
func (d *DB) putFirst(ctx context.Context, u string, item map[string]types.AttributeValue) (bool, error) {
	e := &fxExpr{}
	_, err := d.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.t.Generations), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(" + e.name(gaSK) + ")"), ExpressionAttributeNames: e.Names()})
	var refused *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &refused):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("put the first generation of %s: %w", u, err)
	}
	return true, nil
}

// finishFirst writes the first generation that head names on s's
// crawl's behalf, if a death kept it from being written. The summary
// was planned again; the generation is written as the first delivery
// planned it: as an original (a duplicate would have gone through a
// transaction, and be there).
//
// It reports whether it wrote the item.
func (d *DB) finishFirst(ctx context.Context, s crawl.SummaryUpdate, head map[string]types.AttributeValue) (bool, error) {
	hr := fxReader{m: head}
	id, sk := hr.int(gaOpenID), hr.str(gaOpenSK)
	if hr.err != nil {
		return false, fmt.Errorf("head item of %s: %w", s.URL, hr.err)
	}
	it, err := d.getGenTableItem(ctx, s.URL, sk)
	if err != nil || it != nil {
		return false, err
	}
	if s.New == nil {
		return false, fmt.Errorf("finish the first generation %d of %s: the summary planned again opens none: %w", id, s.URL, crawl.ErrConflict)
	}
	n := *s.New
	n.DuplicateOf, n.Original, n.Generation.MarkedDuplicate = 0, crawl.Original{}, false
	if got, err := GenerationID(n.Generation.UUID); err != nil || got != id {
		return false, crawl.Errorf(crawl.KindInvalid, "finish the first generation %d of %s: the summary planned again opens %d (%v)", id, s.URL, got, err)
	}
	s.New = &n
	_, item, _, err := d.prepareNew(ctx, s, nil)
	if err != nil {
		return false, err
	}
	return d.putFirst(ctx, s.URL, item)
}

// unwrittenFirst looks at a head that names a first generation a
// summary did not see: written since (crawl.ErrConflict, plan again),
// still to be written by the crawl that named it (*PendingError), or
// void (returned).
func (d *DB) unwrittenFirst(ctx context.Context, u string, head map[string]types.AttributeValue) (map[string]types.AttributeValue, error) {
	hr := fxReader{m: head}
	sk, at := hr.str(gaOpenSK), hr.int(gaOpenAt)
	if hr.err != nil {
		return nil, fmt.Errorf("head item of %s: %w", u, hr.err)
	}
	it, err := d.getGenTableItem(ctx, u, sk)
	if err != nil {
		return nil, err
	}
	if it != nil {
		return nil, crawl.ErrConflict
	}
	// A head without open_at was written with its generation, in a
	// transaction: if that is missing, nothing will write it.
	if wait := time.Unix(at, 0).Add(firstVoidAfter).Sub(d.now()); at != 0 && wait > 0 {
		return nil, &PendingError{URL: u, RetryAfter: min(wait, pendingRetry)}
	}
	return head, nil
}
