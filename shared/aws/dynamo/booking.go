package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// bookMargin is the share of a slot added to it when booking: the gate
// counts a delay from a request's end, and a task that comes a little
// early waits for it in the Lambda.
const bookMargin = 10 // percent

// maxTook bounds the part of a slot that is the last request's duration.
const maxTook = 10 * time.Second

// bookAttempts bounds Book's conditional writes when others book the
// same host at once; between them it waits a little, longer each time.
const bookAttempts = 16

// Book books up to n consecutive slots of host for tasks that are to
// come to the gate one at a time, those that start before until (zero:
// all n), and returns when the first one is, how far apart they are and
// how many it booked. They start once the slots booked before have passed
// (booked_until, which every environment's bookings move on: one
// conditional write a call) and the delay after the last request is
// over. A slot is the delay (or the longer one the host's last request
// asked for, a robots.txt Crawl-delay) plus the time that request took,
// and a tenth more.
//
// Why: the scheduler hands a polite crawl's waits to SQS, sending each
// task of a host with its own DelaySeconds. Spaced a bare delay apart,
// from the sending environment's memory only, tasks came sooner than
// the gate lets them through (it counts the delay from the end of the
// request before), and the tasks the fetcher deferred came back into
// slots the spread had given to others: at a 1 s delay a page was
// delivered 2.5 times, and each delivery waited on the gate in the
// Lambda (BENCHMARKS.md, "#15, 2026-11-28").
func (g *Gate) Book(ctx context.Context, host string, n int, delay time.Duration, until time.Time) (first time.Time, slot time.Duration, k int, err error) {
	if host == "" {
		return time.Time{}, 0, 0, errors.New("book slots: empty host")
	}
	gate, err := g.look(ctx, host)
	if err != nil {
		return time.Time{}, 0, 0, fmt.Errorf("book slots of %s: %w", host, err)
	}
	for attempt := range bookAttempts {
		if attempt > 0 {
			if err := crawl.Sleep(ctx, rand.N(time.Duration(attempt)*5*time.Millisecond)); err != nil {
				return time.Time{}, 0, 0, fmt.Errorf("book slots of %s: %w", host, err)
			}
		}
		var booked *int64
		first, slot, booked, err = g.nextSlots(gate, delay)
		if err != nil {
			return time.Time{}, 0, 0, fmt.Errorf("book slots of %s: %w", host, err)
		}
		k = max(n, 0)
		if !until.IsZero() && slot > 0 {
			k = min(k, max(int((until.Sub(first)+slot-1)/slot), 0))
		}
		if k == 0 {
			return first, slot, 0, nil
		}
		cond, values := "attribute_not_exists(#bu)", map[string]types.AttributeValue{}
		if booked != nil {
			cond, values[":old"] = "#bu = :old", fxN(*booked)
		}
		values[":bu"], values[":host"] = fxN(msCeil(first.Add(time.Duration(k)*slot))), fxS(host)
		_, err = g.db.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                           aws.String(g.db.t.Control),
			Key:                                 gateKey(host),
			UpdateExpression:                    aws.String("SET #bu = :bu, #host = :host"),
			ConditionExpression:                 aws.String(cond),
			ExpressionAttributeNames:            map[string]string{"#bu": gtBookedUntil, "#host": gtHost},
			ExpressionAttributeValues:           values,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		var refused *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			return first, slot, k, nil
		case errors.As(err, &refused):
			// Booked by another meanwhile (or the read was stale): the
			// refusal brings the item as it is (an endpoint that does not
			// send it is asked).
			if gate = refused.Item; len(gate) == 0 {
				if gate, err = g.read(ctx, host); err != nil {
					return time.Time{}, 0, 0, fmt.Errorf("book slots of %s: %w", host, err)
				}
			}
		default:
			return time.Time{}, 0, 0, fmt.Errorf("book slots of %s: %w", host, err)
		}
	}
	return time.Time{}, 0, 0, fmt.Errorf("book slots of %s: %d attempts lost to other bookings", host, bookAttempts)
}

// nextSlots reads a host's gate item for Book: when the next free slot
// is, how long a slot is, and booked_until as it stands (nil: none).
func (g *Gate) nextSlots(item map[string]types.AttributeValue, delay time.Duration) (time.Time, time.Duration, *int64, error) {
	r := fxReader{m: item}
	booked, next, last, took := r.optInt(gtBookedUntil), r.optInt(gtNextAllowed), r.optInt(gtLastDone), r.optInt(gtTook)
	if r.err != nil {
		return time.Time{}, 0, nil, fmt.Errorf("read gate: %w", r.err)
	}
	asked := max(delay, 0)
	if next != nil && last != nil {
		asked = max(asked, time.Duration(*next-*last)*time.Millisecond)
	}
	slot := asked
	if took != nil {
		// One slow answer (a Retry-After slept through) should not
		// stretch a whole booking.
		slot += min(time.Duration(*took)*time.Millisecond, maxTook)
	}
	slot += slot * bookMargin / 100
	first := g.db.now()
	if next != nil {
		first = laterOf(first, time.UnixMilli(*next))
	}
	if last != nil {
		// The delay these tasks ask for, from the last request's end.
		first = laterOf(first, time.UnixMilli(*last+durCeilMS(asked)))
	}
	if booked != nil {
		first = laterOf(first, time.UnixMilli(*booked))
	}
	return first, slot, booked, nil
}

// look returns the host's gate item, read eventually consistently (half
// the read units of read's): Book's conditional write catches a stale
// one.
func (g *Gate) look(ctx context.Context, host string) (map[string]types.AttributeValue, error) {
	out, err := g.db.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(g.db.t.Control), Key: gateKey(host)})
	if err != nil {
		return nil, fmt.Errorf("read gate: %w", err)
	}
	return out.Item, nil
}
