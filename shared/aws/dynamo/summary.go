package dynamo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// The summary database (seed 002) in the generations table; the item
// layouts are in generationitem.go. The SQLite store is the reference
// for the semantics; what DynamoDB needs beyond it:
//
//   - A head item per URL holds the open generation's id: every write
//     that changes which generation is open is conditional on it, so a
//     summary planned against a generation that has since closed fails
//     with crawl.ErrConflict instead of forking the URL's history.
//   - A crawl summary item per crawl, put only if absent, is the
//     idempotency key: a redelivered crawl finds it and changes nothing.
//     It is written last, after the writes it records; a redelivery
//     after a death before it finishes the summary. Two kinds of crawl
//     put none, their own writes being idempotent: a 304 (extendOpen)
//     and a crawl that opens a URL's first generation, which the head
//     names while it is open and the generation's UUID after
//     (finishReplace, openedBy).
//   - Duplicates are found through two sparse GSIs: originals (by text
//     pile digest: open, not duplicate, indexable generations) and
//     duplicates (by the original's id: open duplicate statuses). GSIs
//     are eventually consistent, so each original counts its open
//     duplicates (open_dups), updated in the same transactions that
//     start and end duplicate statuses; closing an original is
//     conditional on the count its GSI listing was checked against.
//   - A summary that opens a generation is one TransactWriteItems (at
//     most 100 items), except a URL's first that duplicates nothing:
//     two ordered conditional writes (openFirst, firstgen.go). One
//     that only attaches a crawl to the open generation or extends it
//     is two ordered conditional writes (applyInPlace). Both are half
//     the write units of a transaction.
//     When an original with more duplicates than fit closes, the main
//     transaction hands over the first ones and leaves a marker on the
//     crawl summary item; follow-up transactions finish the hand-over,
//     resumed from the marker if the process dies (a redelivered crawl
//     finishes it).

// maxTxItems is DynamoDB's cap on the items of one TransactWriteItems.
const maxTxItems = 100

// OpenGeneration returns a URL's open generation, or crawl.ErrNotFound.
// It makes two strongly consistent reads, the URL's head and then the
// generation it names, and, when one is open, an eventually consistent
// read of the 304s noted on the candidate (withUnchanged).
func (d *DB) OpenGeneration(ctx context.Context, u string) (crawl.OpenGeneration, error) {
	if !keyable(u) {
		return crawl.OpenGeneration{}, crawl.ErrNotFound
	}
	head, err := d.getGenTableItem(ctx, u, skHead)
	if err != nil {
		return crawl.OpenGeneration{}, fmt.Errorf("open generation of %s: %w", u, err)
	}
	sk, err := fxReadS(head, gaOpenSK)
	if err != nil {
		return crawl.OpenGeneration{}, fmt.Errorf("open generation of %s: head item: %w", u, err)
	}
	if sk == "" {
		return crawl.OpenGeneration{}, crawl.ErrNotFound
	}
	g, err := d.getGen(ctx, u, sk)
	if err != nil {
		return crawl.OpenGeneration{}, fmt.Errorf("open generation of %s: %w", u, err)
	}
	if g == nil {
		if hr := (fxReader{m: head}); hr.int(gaOpenPrev) == 0 && hr.err == nil {
			// A first generation named before it is written (openFirst):
			// none is open yet.
			return crawl.OpenGeneration{}, crawl.ErrNotFound
		}
		return crawl.OpenGeneration{}, fmt.Errorf("open generation of %s: the head names %s, which does not exist", u, sk)
	}
	if err := g.withHead(head); err != nil {
		return crawl.OpenGeneration{}, fmt.Errorf("open generation of %s: %w", u, err)
	}
	// Eventually consistent: a 304 recorded a moment ago is left out,
	// as one not yet summarized was when the head held them all.
	marks, err := d.unchanged(ctx, u, false)
	if err != nil {
		return crawl.OpenGeneration{}, fmt.Errorf("open generation of %s: %w", u, err)
	}
	g.withUnchanged(marks)
	return crawl.OpenGeneration{Generation: g.generation(), ContentKey: g.ContentKey, NoIndex: g.NoIndex}, nil
}

// FindOriginal returns the open, non-duplicate, indexable generation of
// another URL whose text pile has the given digest, the earliest first
// seen: what a new generation with that text would duplicate. It returns
// 0 when there is none. An empty text has no original (design.md: empty
// piles are not compared; the SQLite store is never asked). It reads
// the originals GSI, which lags the table by a moment: a generation that
// just stopped being an original may still be returned, and then
// ApplySummary's condition on the original fails with crawl.ErrConflict
// and the summarizer plans again.
func (d *DB) FindOriginal(ctx context.Context, digest []byte, u string) (int64, error) {
	if len(digest) == 0 {
		return 0, nil // no text, no original (and not a valid index key)
	}
	var id int64
	var rerr error
	err := d.queryGenIndex(ctx, IndexOriginals, gaOriginalDigest, fxS(hex.EncodeToString(digest)), 4,
		func(it map[string]types.AttributeValue) bool {
			r := fxReader{m: it}
			if r.str(gaURL) == u && r.err == nil {
				return true
			}
			id, rerr = r.int(gaGenID), r.err
			return false
		})
	if err == nil && rerr != nil {
		err = fmt.Errorf("an original's item: %w", rerr)
	}
	if err != nil {
		return 0, fmt.Errorf("find original of %s: %w", u, err)
	}
	return id, nil
}

// ApplySummary applies a crawl's summary update. It
// returns false when the crawl was already summarized, and
// crawl.ErrConflict when the URL's open generation is no longer
// s.OpenID (or a generation it touches changed since it was read).
//
// Requests: a 304 one GetItem of the candidate, then nothing when its
// RecordCrawl noted it, else one conditional UpdateItem of the head
// (extendOpen); a replace of an open generation one more GetItem of the
// candidate (the 304s to fold into the generation it closes);
// any other one BatchGetItem (head and crawl summary), then
//   - attach: one PutItem (the crawl summary), after a GetItem for a
//     crawl that fetched content or a redirect (openedBy);
//   - extend: an UpdateItem of the head (none when the head was seen at
//     or after this crawl), then a PutItem of the crawl summary;
//   - replace: a GetItem of the open generation (if any), a Query of
//     the duplicates GSI when it has duplicates, a Query of the
//     originals GSI when the new generation is a duplicate, else the
//     text pile kept (a share of one PUT in a packing store; else one
//     HEAD and at most one PUT), a PutItem of its links, a
//     transaction of 2 items (new generation, head), +1 closing the
//     open generation, +1 when the new one is a duplicate (its
//     original's count), +1 when the closed one was a duplicate, +1
//     per duplicate of the closed one handed over; then a PutItem of
//     the crawl summary (in the transaction instead when duplicates
//     are left to hand over: it carries the marker; none when the URL
//     had no generation open);
//   - a URL's first generation, duplicating nothing: an UpdateItem of
//     the head, a PutItem of the generation (openFirst).
//
// Text piles are written before the transaction: a transaction that
// then fails leaves a pile no generation names yet, which is harmless
// (the same digest is the same content). When a hand-over of more
// duplicates than one transaction holds is cut short, ApplySummary
// returns the error, and the redelivered crawl finishes it (returning
// false).
func (d *DB) ApplySummary(ctx context.Context, s crawl.SummaryUpdate) (bool, error) {
	fresh, err := d.applySummary(ctx, s)
	if err != nil {
		return false, fmt.Errorf("apply summary of crawl %s of %s: %w", s.Crawl.CrawlUUID, s.URL, err)
	}
	return fresh, nil
}

func (d *DB) applySummary(ctx context.Context, s crawl.SummaryUpdate) (bool, error) {
	if s.URL == "" || s.Crawl.CrawlUUID == "" {
		return false, crawl.Errorf(crawl.KindInvalid, "a summary needs a URL and a crawl_uuid")
	}
	if s.Action == crawl.GenerationExtendOpen {
		return d.extendOpen(ctx, s)
	}
	csk := crawlSK(s.Crawl.CrawlUUID)
	head, done, err := d.headAndCrawl(ctx, s.URL, csk)
	if err != nil {
		return false, err
	}
	if done != nil {
		// Already summarized; a hand-over of duplicates it started may
		// have been cut short.
		return false, d.resumeRehome(ctx, s.URL, csk, done)
	}
	if hr := (fxReader{m: head}); hr.str(gaOpenCrawl) == s.Crawl.CrawlUUID && hr.err == nil {
		// This crawl opened the open generation, and a process died
		// before its summary item was put, or, for a first generation,
		// before the generation's own item.
		prev := hr.int(gaOpenPrev)
		if prev == 0 {
			// A first generation, which has no summary item: the head
			// and the generation's UUID name its crawl.
			return d.finishFirst(ctx, s, head)
		}
		return d.finishReplace(ctx, s, hr.int(gaOpenID), prev)
	}
	action, open, openID, void, err := d.openGeneration(ctx, s, head)
	if err != nil {
		return false, err
	}
	if action == crawl.GenerationAttach || action == crawl.GenerationExtend {
		return d.applyInPlace(ctx, s, action, openID, head)
	}
	if action == crawl.GenerationReplace && open == nil && s.New != nil && s.New.DuplicateOf == 0 {
		return d.openFirst(ctx, s, void)
	}
	tx := &summaryTx{table: d.t.Generations}
	// Item 0 is the crawl summary, put once the generation it attaches
	// to is known; the reasons of a cancelled transaction are by index.
	tx.add(types.TransactWriteItem{})
	genID, marker, err := d.planAction(ctx, tx, s, action, open, void)
	if err != nil {
		return false, err
	}
	if marker == nil {
		// The summary item goes after the transaction, which DynamoDB
		// bills at twice the write units: the head names this crawl
		// (open_crawl), so a redelivery after a death in between finishes
		// the summary (finishReplace).
		tx.items = tx.items[1:]
		reasons, err := d.transact(ctx, tx)
		if err != nil {
			return false, err
		}
		if reasons != nil {
			if reasons[0] == "ConditionalCheckFailed" && ownGeneration(s) {
				return false, nil // its generation is there: see ownGeneration
			}
			return false, fmt.Errorf("transaction cancelled %v: %w", reasons, crawl.ErrConflict)
		}
		return d.finishReplace(ctx, s, genID, openID)
	}
	// A hand-over of duplicates to finish: its marker rides on the
	// summary item, in the transaction.
	ci := crawlSummaryItem(s, genID)
	ci[gaPendingRehome] = marker.encode()
	e := &fxExpr{}
	tx.items[0] = types.TransactWriteItem{Put: &types.Put{TableName: aws.String(d.t.Generations), Item: ci,
		ConditionExpression: aws.String("attribute_not_exists(" + e.name(gaSK) + ")"), ExpressionAttributeNames: e.Names()}}

	reasons, err := d.transact(ctx, tx)
	if err != nil {
		return false, err
	}
	if reasons != nil {
		if reasons[0] == "ConditionalCheckFailed" || (reasons[1] == "ConditionalCheckFailed" && ownGeneration(s)) {
			return false, nil // a concurrent delivery of the same crawl won
		}
		return false, fmt.Errorf("transaction cancelled %v: %w", reasons, crawl.ErrConflict)
	}
	if err := d.finishRehome(ctx, s.URL, csk, *marker); err != nil {
		return false, err
	}
	return true, d.observeReplace(ctx, s, openID)
}

// finishReplace puts the summary item of a crawl that opened generation
// genID, closing prev (0: none), once its transaction has committed;
// it returns false when a concurrent delivery of the crawl put it first.
//
// A crawl that opened a URL's first generation (prev 0) puts none: the
// head names the crawl while its generation is open (open_crawl), the
// generation's UUID is the crawl's (crawl.GenerationUUID) after that
// (openedBy), the crawl log item holds its columns, and there is no
// revisit to observe once. That is a write unit a new page.
func (d *DB) finishReplace(ctx context.Context, s crawl.SummaryUpdate, genID, prev int64) (bool, error) {
	if prev == 0 {
		return true, nil
	}
	if fresh, err := d.putCrawlSummary(ctx, s, genID); !fresh || err != nil {
		return false, err
	}
	return true, d.observeReplace(ctx, s, prev)
}

// observeReplace folds a revisit that found new content into the URL's
// MRate, once: after the summary item is put (a redelivery finds it and
// stops before). A first crawl (prev 0) and a 304 (observed by the
// fetch) are not observed here.
func (d *DB) observeReplace(ctx context.Context, s crawl.SummaryUpdate, prev int64) error {
	if prev == 0 || crawl.ObservedAtFetch(s.Crawl.ExitCode) {
		return nil
	}
	return d.observeChange(ctx, s.URL, true, s.SeenAt)
}

// putCrawlSummary puts a crawl's summary item, naming generation genID,
// if absent: the crawl's idempotency key, written last. It returns false
// when it was there already (a concurrent delivery of the crawl won).
func (d *DB) putCrawlSummary(ctx context.Context, s crawl.SummaryUpdate, genID int64) (bool, error) {
	e := &fxExpr{}
	_, err := d.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.t.Generations), Item: crawlSummaryItem(s, genID),
		ConditionExpression: aws.String("attribute_not_exists(" + e.name(gaSK) + ")"), ExpressionAttributeNames: e.Names()})
	var refused *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &refused):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("put crawl summary: %w", err)
	}
	return true, nil
}

// applyInPlace applies a crawl that opens no generation (attach,
// extend) with ordered conditional writes instead of a transaction,
// which DynamoDB bills at twice the write units:
//
//  1. extend only: the head's open_last_seen moves on to s.SeenAt, on
//     condition that the head still names openID (else
//     crawl.ErrConflict: plan again). A head already seen at or after
//     s.SeenAt is left as it is: a late crawl, or this crawl's own
//     write when a redelivery comes back after a process died between
//     the two writes.
//  2. the crawl summary item, put only if absent: the crawl's
//     idempotency key, written last. A concurrent delivery of the same
//     crawl that put it first makes this one return false.
//
// An attach writes no head. Its generation is the one the head named at
// the strongly consistent read of headAndCrawl, checked against
// s.OpenID: the crawl is applied as of that read, which a transaction's
// condition on the head would only have moved to the commit. A summary
// that replaced the generation in between is ordered after this one.
func (d *DB) applyInPlace(ctx context.Context, s crawl.SummaryUpdate, action crawl.GenerationAction, openID int64,
	head map[string]types.AttributeValue) (bool, error) {
	if action == crawl.GenerationAttach && crawl.OpensGeneration(s.Crawl.ExitCode) {
		// Attached because a later crawl's generation is open: it may be
		// this crawl's own summary delivered again after that, when it
		// opened a first generation (which has no summary item).
		if opened, err := d.openedBy(ctx, s); err != nil || opened {
			return false, err
		}
	}
	if action == crawl.GenerationExtend {
		r := fxReader{m: head}
		if seen := r.int(gaOpenLastSeen); r.err != nil {
			return false, fmt.Errorf("head item of %s: %w", s.URL, r.err)
		} else if seen < s.SeenAt {
			if err := d.extendHead(ctx, s.URL, openID, s.SeenAt); err != nil {
				return false, err
			}
		}
	}
	if fresh, err := d.putCrawlSummary(ctx, s, openID); !fresh || err != nil {
		return false, err // !fresh: a concurrent delivery of the same crawl won
	}
	if openID != 0 && action == crawl.GenerationExtend && !crawl.ObservedAtFetch(s.Crawl.ExitCode) {
		// A revisit: its observation, once (a redelivery finds the crawl
		// summarized and stops before). A 304's was made by the fetch.
		if err := d.observeChange(ctx, s.URL, false, s.SeenAt); err != nil {
			return true, err
		}
	}
	return true, nil
}

// ownGeneration reports whether the generation s opens is its crawl's
// own (crawl.GenerationUUID), as the summarizer plans it. Its item
// being there already (the transaction's put refused) then means the
// crawl opened it before: a redelivery that was not planned as late
// because a crawl of the same second replaced it since.
func ownGeneration(s crawl.SummaryUpdate) bool {
	return s.New != nil && s.New.Generation.UUID == crawl.GenerationUUID(s.Crawl.CrawlUUID)
}

// openedBy reports whether s's crawl opened a generation of its URL:
// the one with the crawl's generation UUID, first seen when the crawl
// started (one consistent read).
func (d *DB) openedBy(ctx context.Context, s crawl.SummaryUpdate) (bool, error) {
	id, err := GenerationID(crawl.GenerationUUID(s.Crawl.CrawlUUID))
	if err != nil {
		return false, err
	}
	it, err := d.getGenTableItem(ctx, s.URL, genSK(s.Crawl.TimeStarted, id))
	if err != nil {
		return false, fmt.Errorf("did crawl %s open a generation: %w", s.Crawl.CrawlUUID, err)
	}
	return it != nil, nil
}

// extendOpen applies a 304 (crawl.GenerationExtendOpen). RecordCrawl
// has settled it already, as a rule: the candidate's unchanged_at, which
// it wrote with the crawl, extends the open generation where it is read
// (genItem.withUnchanged), and one eventually consistent read of it (half
// a read unit) finds that nothing is left to write. Otherwise (a crawl
// recorded by an earlier version, or a read that does not see the write
// yet) it writes what the crawl changed on the head, with one
// conditional write: the head's open_last_seen moves on to s.SeenAt if
// the head names a generation, first seen at or before s.SeenAt (its
// sort key says when), and not yet seen at or after it. Any other head
// is left as it is: no generation open, a late crawl, or a redelivery of
// this one. It returns whether the head moved.
//
// Such a crawl puts no crawl summary item: the write is idempotent by
// its condition, the crawl log item holds the crawl's columns, and the
// open generation's last_seen is what the crawl changed (docs/aws.md,
// "Tables").
func (d *DB) extendOpen(ctx context.Context, s crawl.SummaryUpdate) (bool, error) {
	if marks, err := d.unchanged(ctx, s.URL, false); err != nil {
		return false, fmt.Errorf("extend the open generation: %w", err)
	} else if lastAt(marks) >= s.SeenAt {
		return false, nil
	}
	e := &fxExpr{}
	cond := "attribute_exists(" + e.name(gaOpenID) + ") AND " + e.name(gaOpenSK) + " <= " + e.value(fxS(genSK(s.SeenAt, math.MaxInt64))) +
		" AND (attribute_not_exists(" + e.name(gaOpenLastSeen) + ") OR " + e.name(gaOpenLastSeen) + " < " + e.value(fxN(s.SeenAt)) + ")"
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(d.t.Generations), Key: genKey(s.URL, skHead),
		UpdateExpression: aws.String("SET " + e.name(gaOpenLastSeen) + " = " + e.value(fxN(s.SeenAt))), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()})
	switch {
	case conditionFailed(err):
		return false, nil
	case fxLostRace(err):
		return false, fmt.Errorf("extend the open generation: %w: %v", crawl.ErrConflict, err)
	case err != nil:
		return false, fmt.Errorf("extend the open generation: %w", err)
	}
	return true, nil
}

// extendHead moves the open generation's last_seen, kept on the URL's
// head item, on to at, while the head names generation id.
func (d *DB) extendHead(ctx context.Context, u string, id, at int64) error {
	e := &fxExpr{}
	cond := e.name(gaOpenID) + " = " + e.value(fxN(id)) + " AND (attribute_not_exists(" + e.name(gaOpenLastSeen) + ") OR " +
		e.name(gaOpenLastSeen) + " < " + e.value(fxN(at)) + ")"
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(d.t.Generations), Key: genKey(u, skHead),
		UpdateExpression: aws.String("SET " + e.name(gaOpenLastSeen) + " = " + e.value(fxN(at))), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	var refused *types.ConditionalCheckFailedException
	if !errors.As(err, &refused) {
		if err != nil {
			return fmt.Errorf("extend the open generation of %s: %w", u, err)
		}
		return nil
	}
	old := refused.Item
	if len(old) == 0 {
		// An endpoint that does not send the item back is asked.
		if old, err = d.getGenTableItem(ctx, u, skHead); err != nil {
			return fmt.Errorf("extend the open generation of %s: %w", u, err)
		}
	}
	r := fxReader{m: old}
	if openNow := r.int(gaOpenID); r.err != nil {
		return fmt.Errorf("extend the open generation of %s: head item: %w", u, r.err)
	} else if openNow != id {
		return fmt.Errorf("extend generation %d of %s, no longer open: %w", id, u, crawl.ErrConflict)
	}
	return nil // seen at or after at already
}

// observeChange folds a revisit into the URL's MRate, and moves its due
// date when it is due again after this very crawl, as the SQLite
// store's does (crawl/revisit.go). A candidate written meanwhile is read
// again, a few times.
func (d *DB) observeChange(ctx context.Context, u string, changed bool, seenAt int64) error {
	for attempt := 0; ; attempt++ {
		c, err := d.GetCandidate(ctx, u)
		if errors.Is(err, crawl.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("observe change of %s: %w", u, err)
		}
		c.MRate, c.MRateCounter = crawl.ObserveChange(c.MRate, c.MRateCounter, changed)
		if c.RecrawlEvery > 0 && c.State == crawl.StateDue && c.LastCrawlTime != nil && *c.LastCrawlTime == seenAt {
			c.DueAt = crawl.NextVisit(seenAt, time.Duration(c.RecrawlEvery)*time.Second, c.MRate, c.MRateCounter)
		}
		err = d.PutCandidate(ctx, c)
		if err == nil || !errors.Is(err, crawl.ErrConflict) || attempt == 3 {
			return err
		}
	}
}

// resumeRehome finishes the hand-over of duplicates that the crawl
// summary item done (csk of u) still marks, if any.
func (d *DB) resumeRehome(ctx context.Context, u, csk string, done map[string]types.AttributeValue) error {
	r := fxReader{m: done}
	m := r.mapAttr(gaPendingRehome)
	if m == nil && r.err == nil {
		return nil
	}
	marker, err := decodeRehomeMarker(m)
	if err == nil {
		err = r.err
	}
	if err != nil {
		return fmt.Errorf("crawl summary %s of %s: %w", csk, u, err)
	}
	return d.finishRehome(ctx, u, csk, marker)
}

// openGeneration checks that the head item still names the generation
// s was planned against, and returns the action to take (an extend with
// nothing open becomes an attach, as in the SQLite store), the open
// generation it acts on (nil for an attach) and the head's open id.
//
// A head naming a first generation that is not written (openFirst) is
// either pending, a *PendingError, or void, returned as void: the
// summary then acts as if nothing were open, on condition that the head
// is still the void one.
func (d *DB) openGeneration(ctx context.Context, s crawl.SummaryUpdate, head map[string]types.AttributeValue) (
	action crawl.GenerationAction, open *genItem, openID int64, void map[string]types.AttributeValue, err error) {
	hr := fxReader{m: head}
	openID, openSK := hr.int(gaOpenID), hr.str(gaOpenSK)
	if hr.err != nil {
		return 0, nil, 0, nil, fmt.Errorf("head item of %s: %w", s.URL, hr.err)
	}
	if openID != s.OpenID {
		if s.OpenID != 0 || hr.int(gaOpenPrev) != 0 {
			return 0, nil, 0, nil, crawl.ErrConflict
		}
		// The plan saw no generation where the head names a first one:
		// opened since (plan again), or named by a crawl that has not
		// written it yet.
		if void, err = d.unwrittenFirst(ctx, s.URL, head); err != nil {
			return 0, nil, 0, nil, err
		}
		openID = 0
	}
	action = s.Action
	if action == crawl.GenerationExtend && openID == 0 {
		action = crawl.GenerationAttach
	}
	if openID == 0 || action == crawl.GenerationAttach || action == crawl.GenerationExtend {
		return action, nil, openID, void, nil // applyInPlace needs only the head
	}
	if open, err = d.getGen(ctx, s.URL, openSK); err != nil {
		return 0, nil, 0, nil, err
	}
	if open == nil || open.ID != openID || open.ConfirmedEnd != nil {
		return 0, nil, 0, nil, fmt.Errorf("the head names open generation %d (%s), which is not: %w", openID, openSK, crawl.ErrConflict)
	}
	if err := open.withHead(head); err != nil {
		return 0, nil, 0, nil, fmt.Errorf("open generation of %s: %w", s.URL, err)
	}
	// Closed, it keeps the last 304 before this crawl as its last_seen.
	marks, err := d.unchanged(ctx, s.URL, true)
	if err != nil {
		return 0, nil, 0, nil, err
	}
	open.withUnchanged(marks)
	return action, open, openID, nil, nil
}

// planAction adds to tx the writes of action (a replace of the open
// generation; applyInPlace does the others) and returns the generation
// the crawl summary belongs to and the hand-over of duplicates still to
// do.
func (d *DB) planAction(ctx context.Context, tx *summaryTx, s crawl.SummaryUpdate, action crawl.GenerationAction,
	open *genItem, void map[string]types.AttributeValue) (int64, *rehomeMarker, error) {
	switch action {
	case crawl.GenerationReplace:
		return d.planReplace(ctx, tx, s, open, void)
	default:
		return 0, nil, crawl.Errorf(crawl.KindInvalid, "unknown generation action %d", s.Action)
	}
}

// planReplace adds to tx the writes that open s.New, closing open (if
// any) and handing its duplicates over. It returns the new generation's
// id, and the hand-over still to do when not all duplicates fit.
func (d *DB) planReplace(ctx context.Context, tx *summaryTx, s crawl.SummaryUpdate, open *genItem, void map[string]types.AttributeValue) (int64, *rehomeMarker, error) {
	id, item, orig, err := d.prepareNew(ctx, s, open)
	if err != nil {
		return 0, nil, err
	}
	e := &fxExpr{}
	tx.put(item, "attribute_not_exists("+e.name(gaSK)+")", e)

	e = &fxExpr{}
	var cond string
	var prev int64
	count := true
	if open != nil {
		// The closed generation's last_seen is folded in from the head
		// as read: a crawl that moved it on meanwhile fails this.
		cond = e.name(gaOpenID) + " = " + e.value(fxN(open.ID))
		if open.HeadLastSeen != 0 {
			cond += " AND " + e.name(gaOpenLastSeen) + " = " + e.value(fxN(open.HeadLastSeen))
		} else {
			cond += " AND attribute_not_exists(" + e.name(gaOpenLastSeen) + ")"
		}
		prev = open.ID
	} else {
		cond, count = headCond(e, void)
	}
	tx.update(genKey(s.URL, skHead), headUpdate(e, s, id, item[gaSK], prev, count, 0), cond, e)

	if orig != nil {
		e = &fxExpr{}
		tx.update(orig.key(), "ADD "+e.name(gaOpenDups)+" "+e.value(fxN(1)), originalCond(e, orig.ID), e)
	}
	if open == nil {
		return id, nil, nil
	}
	m, err := d.planClose(ctx, tx, open, s.SeenAt)
	return id, m, err
}

// headCond is the condition on a URL's head for opening its first
// generation: no generation named, or the void head that was read (see
// openFirst). count says whether the head's gen_count goes up: not
// over a void head, which counted its generation already.
func headCond(e *fxExpr, void map[string]types.AttributeValue) (cond string, count bool) {
	if void == nil {
		return "attribute_not_exists(" + e.name(gaOpenID) + ")", true
	}
	r := fxReader{m: void}
	return e.name(gaOpenID) + " = " + e.value(fxN(r.int(gaOpenID))) + " AND " + e.name(gaOpenCrawl) + " = " + e.value(fxS(r.str(gaOpenCrawl))), false
}

// headUpdate is the update of a URL's head that names generation id
// (sort key sk), opened by s's crawl and closing prev (0: none).
// openAt, if not 0, is when the head names a generation not yet written
// (openFirst).
func headUpdate(e *fxExpr, s crawl.SummaryUpdate, id int64, sk types.AttributeValue, prev int64, count bool, openAt int64) string {
	u := "SET " + e.name(gaOpenID) + " = " + e.value(fxN(id)) + ", " + e.name(gaOpenSK) + " = " + e.value(sk) +
		", " + e.name(gaOpenCrawl) + " = " + e.value(fxS(s.Crawl.CrawlUUID)) + ", " + e.name(gaOpenPrev) + " = " + e.value(fxN(prev))
	remove := " REMOVE " + e.name(gaOpenLastSeen)
	if openAt != 0 {
		u += ", " + e.name(gaOpenAt) + " = " + e.value(fxN(openAt))
	} else {
		remove += ", " + e.name(gaOpenAt)
	}
	if count {
		u += " ADD " + e.name(gaGenCount) + " " + e.value(fxN(1))
	}
	return u + remove
}

// prepareNew makes the item of the generation s opens and writes what
// goes before it (its blobs, its near-duplicate bands, its side item),
// and returns its id, the item and the original it duplicates (nil:
// none). open is the generation it replaces (nil: none).
func (d *DB) prepareNew(ctx context.Context, s crawl.SummaryUpdate, open *genItem) (int64, map[string]types.AttributeValue, *genItem, error) {
	ng := s.New
	if ng == nil {
		return 0, nil, nil, crawl.Errorf(crawl.KindInvalid, "replace without a new generation")
	}
	id, err := GenerationID(ng.Generation.UUID)
	if err != nil {
		return 0, nil, nil, err
	}
	if p := ng.TextPile; p != nil && len(p.Digest) == 0 {
		cp := *p
		cp.Digest = cp.ComputeDigest()
		n := *ng
		n.TextPile = &cp
		ng = &n
	}
	var orig *genItem
	if ng.DuplicateOf != 0 {
		if ng.TextPile == nil {
			return 0, nil, nil, crawl.Errorf(crawl.KindInvalid, "duplicate of %d without a text pile", ng.DuplicateOf)
		}
		if open != nil && ng.DuplicateOf == open.ID {
			return 0, nil, nil, crawl.Errorf(crawl.KindInvalid, "a generation cannot duplicate its own URL's open generation %d", open.ID)
		}
		if o := ng.Original; o.URL != "" {
			// Read back directly, consistently: the originals index may
			// not list a generation that opened a moment ago (the page a
			// canonical names, summarized just before).
			g, err := d.getGen(ctx, o.URL, genSK(o.FirstSeen, ng.DuplicateOf))
			if err != nil {
				return 0, nil, nil, err
			}
			if g != nil && g.ID == ng.DuplicateOf && g.Original {
				orig = g
			}
		} else {
			digest := ng.TextPile.Digest
			if ng.Original.Digest != nil {
				digest = ng.Original.Digest // a near or canonical duplicate
			}
			if orig, err = d.originalByID(ctx, hex.EncodeToString(digest), ng.DuplicateOf); err != nil {
				return 0, nil, nil, err
			}
		}
		if orig == nil {
			return 0, nil, nil, fmt.Errorf("generation %d is no longer an original: %w", ng.DuplicateOf, crawl.ErrConflict)
		}
	}
	item, _, err := newGenItem(s.URL, id, ng, orig)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("generation %s: %w", ng.Generation.UUID, err)
	}
	if err := d.keepBlobs(ctx, ng, item); err != nil {
		return 0, nil, nil, err
	}
	// The links (unless kept in the blob store) and search text go first, in an item of their own: a
	// transaction that then fails leaves them under a generation id
	// nothing names (a re-planned summary makes a new one), which no
	// reader lists (Search joins each to its open generation).
	if p := ng.TextPile; p != nil && ng.SimHash != 0 && !ng.NoIndex {
		// Exact copies too: one may take over as the original.
		// Before the transaction too: see nearindex.go.
		if err := d.putNearItems(ctx, nearItems(s.URL, id, ng.Generation.FirstSeen, p.Digest, ng.SimHash)); err != nil {
			return 0, nil, nil, err
		}
	}
	if si := sideItem(item); si != nil {
		if _, err := d.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.t.Generations), Item: si}); err != nil {
			return 0, nil, nil, fmt.Errorf("put the links and search text of generation %d: %w", id, err)
		}
	}
	return id, item, orig, nil
}

// planClose adds to tx the writes that close generation g at time at:
// its confirmed_end, the end of its own duplicate status, and the
// hand-over of its duplicates (promoteDuplicates in the SQLite store).
// When they do not all fit in tx, it returns the marker of the rest.
func (d *DB) planClose(ctx context.Context, tx *summaryTx, g *genItem, at int64) (*rehomeMarker, error) {
	dups, err := d.openDuplicates(ctx, g)
	if err != nil {
		return nil, err
	}
	// The heir: the earliest indexable duplicate (the GSI is in
	// first_seen order). Without one, the copies become originals of
	// their own (all noindex, so none is findable as one).
	var heir *genItem
	others := dups
	for i, dup := range dups {
		if !dup.NoIndex {
			heir = dup
			others = append(append([]*genItem(nil), dups[:i]...), dups[i+1:]...)
			break
		}
	}
	room := maxTxItems - tx.len() - 1 // -1: g itself
	if g.DupOf != 0 {
		room-- // g's own original
	}
	if heir != nil {
		room--
	}
	n := min(len(others), room)
	remaining := len(others) - n

	// g itself.
	e := &fxExpr{}
	u := newUpdate(e)
	u.set(gaConfirmedEnd, fxN(at))
	if seen := min(g.seen(), at); seen != g.LastSeen {
		u.set(gaLastSeen, fxN(seen)) // the head's, folded in; never past the close
	}
	u.set(gaOpenDups, fxN(int64(remaining)))
	u.remove(gaOriginalDigest)
	cond := "attribute_not_exists(" + e.name(gaConfirmedEnd) + ") AND " + e.name(gaLastSeen) + " = " + e.value(fxN(g.LastSeen)) +
		" AND " + e.name(gaOpenDups) + " = " + e.value(fxN(g.OpenDups))
	if g.DupOf != 0 {
		u.set(gaDupHistory, encodeHistory(g.historyEnded(at)))
		u.remove(gaDupOf)
		u.remove(gaDupOfURL)
		u.remove(gaDupOfSK)
		cond += " AND " + e.name(gaDupOf) + " = " + e.value(fxN(g.DupOf))
	} else {
		cond += " AND attribute_not_exists(" + e.name(gaDupOf) + ")"
	}
	tx.update(g.key(), u.expression(), cond, e)
	if g.DupOf != 0 {
		// Its original has one open duplicate fewer. (It may itself be
		// closed, handing its duplicates over in follow-up transactions.)
		e := &fxExpr{}
		tx.update(genKey(g.DupOfURL, g.DupOfSK), "ADD "+e.name(gaOpenDups)+" "+e.value(fxN(-1)),
			"attribute_exists("+e.name(gaSK)+") AND "+e.name(gaGenID)+" = "+e.value(fxN(g.DupOf)), e)
	}

	if heir != nil {
		tx.add(promoteWrite(d.t.Generations, heir, g.ID, at, n))
	}
	for _, dup := range others[:n] {
		tx.add(repointWrite(d.t.Generations, dup, g.ID, at, heir))
	}
	if remaining == 0 {
		return nil, nil
	}
	m := &rehomeMarker{FromURL: g.URL, FromSK: g.SK, FromID: g.ID, At: at}
	if heir != nil {
		m.ToURL, m.ToSK, m.ToID, m.Digest = heir.URL, heir.SK, heir.ID, heir.Digest
	}
	return m, nil
}

// originalCond is the condition that generation id is an open,
// non-duplicate, indexable original.
func originalCond(e *fxExpr, id int64) string {
	return "attribute_exists(" + e.name(gaOriginalDigest) + ") AND " + e.name(gaGenID) + " = " + e.value(fxN(id))
}

// dupCond is the condition that a duplicate's status is still the one
// read: open, a duplicate of from, with the history read.
func dupCond(e *fxExpr, dup *genItem, from int64) string {
	return e.name(gaDupOf) + " = " + e.value(fxN(from)) + " AND attribute_not_exists(" + e.name(gaConfirmedEnd) + ") AND size(" +
		e.name(gaDupHistory) + ") = " + e.value(fxN(int64(len(dup.History))))
}

// promoteWrite makes dup, a duplicate of from, an original at time at,
// with k duplicates re-pointed to it in the same transaction.
func promoteWrite(table string, dup *genItem, from, at int64, k int) types.TransactWriteItem {
	e := &fxExpr{}
	u := newUpdate(e)
	u.set(gaMarkedDuplicate, fxBool(false))
	u.set(gaDupHistory, encodeHistory(dup.historyEnded(at)))
	if dup.Digest != "" && !dup.NoIndex {
		u.set(gaOriginalDigest, fxS(dup.Digest))
	}
	u.add(gaOpenDups, fxN(int64(k)))
	u.remove(gaDupOf)
	u.remove(gaDupOfURL)
	u.remove(gaDupOfSK)
	return updateItem(table, dup.key(), u.expression(), dupCond(e, dup, from), e)
}

// repointWrite ends dup's status as a duplicate of from at time at and
// makes it a duplicate of to; with no to, it becomes an original.
func repointWrite(table string, dup *genItem, from, at int64, to *genItem) types.TransactWriteItem {
	if to == nil {
		return promoteWrite(table, dup, from, at, 0)
	}
	e := &fxExpr{}
	u := newUpdate(e)
	u.set(gaDupHistory, encodeHistory(append(dup.historyEnded(at), dupStatus{Of: to.ID, OfURL: to.URL, Start: at})))
	u.set(gaDupOf, fxN(to.ID))
	u.set(gaDupOfURL, fxS(to.URL))
	u.set(gaDupOfSK, fxS(to.SK))
	return updateItem(table, dup.key(), u.expression(), dupCond(e, dup, from), e)
}

// rehomeMarker is a hand-over of duplicates still to finish, kept on the
// crawl summary item of the crawl that closed their original: the
// duplicates of From (still listed by the duplicates GSI under its id)
// are re-pointed to To, or become originals when To is 0.
type rehomeMarker struct {
	FromURL, FromSK string
	FromID          int64
	At              int64
	ToURL, ToSK     string
	ToID            int64
	Digest          string // the text's digest, to find another original if To closes meanwhile
}

func (m rehomeMarker) encode() types.AttributeValue {
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"from_url": fxS(m.FromURL), "from_sk": fxS(m.FromSK), "from_id": fxN(m.FromID), "at": fxN(m.At),
		"to_url": fxS(m.ToURL), "to_sk": fxS(m.ToSK), "to_id": fxN(m.ToID), "digest": fxS(m.Digest),
	}}
}

func decodeRehomeMarker(v map[string]types.AttributeValue) (rehomeMarker, error) {
	r := fxReader{m: v}
	m := rehomeMarker{FromURL: r.str("from_url"), FromSK: r.str("from_sk"), FromID: r.int("from_id"),
		At: r.int("at"), ToURL: r.str("to_url"), ToSK: r.str("to_sk"), ToID: r.int("to_id"), Digest: r.str("digest")}
	if r.err != nil {
		return m, fmt.Errorf("pending rehome: %w", r.err)
	}
	return m, nil
}

// finishRehome finishes a hand-over of duplicates, a transaction per
// batch, each conditional on the closed original's count of duplicates
// still to hand over; the last batch removes the marker from the crawl
// summary item csk of u. If the heir has stopped being an original
// meanwhile, the rest go to another original of the same text, or the
// earliest indexable one of them is promoted.
func (d *DB) finishRehome(ctx context.Context, u, csk string, m rehomeMarker) error {
	handled := map[int64]bool{}
	ckey := genKey(u, csk)
	for failures := 0; ; {
		if failures >= 6 {
			return fmt.Errorf("hand over the duplicates of generation %d: %w", m.FromID, crawl.ErrConflict)
		}
		from, err := d.getGen(ctx, m.FromURL, m.FromSK)
		if err != nil {
			return err
		}
		if from == nil || from.ID != m.FromID {
			return fmt.Errorf("hand over the duplicates of generation %d: it is missing", m.FromID)
		}
		if from.OpenDups <= 0 {
			return d.clearRehome(ctx, ckey, m.FromID)
		}
		dups, err := d.duplicatesOf(ctx, m.FromID, handled)
		if err != nil {
			return err
		}
		if len(dups) == 0 { // the index is behind: wait for it
			failures++
			if err := pause(ctx, failures); err != nil {
				return err
			}
			continue
		}
		to, promote, err := d.rehomeTarget(ctx, &m, dups)
		if err != nil {
			return err
		}
		tx, batch, left := d.rehomeBatch(ckey, from, m, dups, to, promote)
		reasons, err := d.transact(ctx, tx)
		if err != nil {
			return fmt.Errorf("hand over the duplicates of generation %d: %w", m.FromID, err)
		}
		if reasons != nil { // a condition failed: read again and retry
			failures++
			if err := pause(ctx, failures); err != nil {
				return err
			}
			continue
		}
		failures = 0
		for _, dup := range batch {
			handled[dup.ID] = true
		}
		if left == 0 {
			return nil
		}
	}
}

// clearRehome removes the hand-over marker from the crawl summary item
// ckey: the closed original has no duplicates left to hand over.
func (d *DB) clearRehome(ctx context.Context, ckey map[string]types.AttributeValue, fromID int64) error {
	e := &fxExpr{}
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(d.t.Generations), Key: ckey,
		UpdateExpression:         aws.String("REMOVE " + e.name(gaPendingRehome)),
		ExpressionAttributeNames: e.Names()})
	if err != nil {
		return fmt.Errorf("clear hand-over of generation %d: %w", fromID, err)
	}
	return nil
}

// duplicatesOf lists the open duplicates of generation fromID not yet
// handled, through the duplicates index (which may be behind).
func (d *DB) duplicatesOf(ctx context.Context, fromID int64, handled map[int64]bool) ([]*genItem, error) {
	var dups []*genItem
	var derr error
	err := d.queryGenIndex(ctx, IndexDuplicates, gaDupOf, fxN(fromID), 0, func(it map[string]types.AttributeValue) bool {
		g, err := decodeGenItem(it)
		if err != nil {
			derr = err
			return false
		}
		if !handled[g.ID] {
			dups = append(dups, g)
		}
		return true
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, fmt.Errorf("hand over the duplicates of generation %d: %w", fromID, err)
	}
	return dups, nil
}

// rehomeBatch plans one transaction of a hand-over: as many of dups as
// fit, repointed to to (or, with promote, to made the original), the
// count on from lowered (conditional on its value), and the marker on
// ckey kept with what is left or removed. It returns the transaction,
// the duplicates it moves and how many remain after it.
func (d *DB) rehomeBatch(ckey map[string]types.AttributeValue, from *genItem, m rehomeMarker, dups []*genItem,
	to *genItem, promote bool) (*summaryTx, []*genItem, int64) {
	if promote {
		// The heir goes first, so that it is in the batch.
		for i, dup := range dups {
			if dup.ID == to.ID {
				dups = append([]*genItem{dup}, append(dups[:i:i], dups[i+1:]...)...)
				break
			}
		}
	}
	room := maxTxItems - 3 // the crawl summary, from and to
	batch := dups[:min(len(dups), room, int(from.OpenDups))]
	left := from.OpenDups - int64(len(batch))

	tx := &summaryTx{table: d.t.Generations}
	e := &fxExpr{}
	tx.update(from.key(), "ADD "+e.name(gaOpenDups)+" "+e.value(fxN(-int64(len(batch)))),
		e.name(gaOpenDups)+" = "+e.value(fxN(from.OpenDups)), e)
	e = &fxExpr{}
	upd := "REMOVE " + e.name(gaPendingRehome)
	if left > 0 {
		upd = "SET " + e.name(gaPendingRehome) + " = " + e.value(m.encode())
	}
	tx.update(ckey, upd, "attribute_exists("+e.name(gaPendingRehome)+")", e)
	repointed := len(batch)
	if promote {
		repointed--
	}
	for _, dup := range batch {
		if promote && dup.ID == to.ID {
			tx.add(promoteWrite(d.t.Generations, dup, m.FromID, m.At, repointed))
		} else {
			tx.add(repointWrite(d.t.Generations, dup, m.FromID, m.At, to))
		}
	}
	if to != nil && !promote {
		e := &fxExpr{}
		tx.update(to.key(), "ADD "+e.name(gaOpenDups)+" "+e.value(fxN(int64(repointed))), originalCond(e, to.ID), e)
	}
	return tx, batch, left
}

// rehomeTarget returns the generation the rest of a hand-over goes to,
// updating the marker, and whether it is one of dups to promote: the
// marker's heir while it is an original, else another original of the
// text, else the earliest indexable duplicate; nil (become originals)
// when the hand-over had no heir or none is indexable.
func (d *DB) rehomeTarget(ctx context.Context, m *rehomeMarker, dups []*genItem) (*genItem, bool, error) {
	if m.ToID == 0 {
		return nil, false, nil
	}
	isOriginal := func(url, sk string, id int64) (*genItem, error) {
		g, err := d.getGen(ctx, url, sk)
		if err != nil || g == nil || g.ID != id || !g.Original {
			return nil, err
		}
		return g, nil
	}
	to, err := isOriginal(m.ToURL, m.ToSK, m.ToID)
	if err != nil {
		return nil, false, err
	}
	if to == nil && m.Digest != "" {
		var cand *genItem
		err := d.queryGenIndex(ctx, IndexOriginals, gaOriginalDigest, fxS(m.Digest), 4, func(it map[string]types.AttributeValue) bool {
			cand, _ = decodeGenItem(it)
			return cand == nil
		})
		if err != nil {
			return nil, false, fmt.Errorf("find an original for the duplicates of %d: %w", m.FromID, err)
		}
		if cand != nil {
			if to, err = isOriginal(cand.URL, cand.SK, cand.ID); err != nil {
				return nil, false, err
			}
		}
	}
	if to != nil {
		m.ToURL, m.ToSK, m.ToID = to.URL, to.SK, to.ID
		return to, false, nil
	}
	for _, dup := range dups {
		if !dup.NoIndex {
			m.ToURL, m.ToSK, m.ToID = dup.URL, dup.SK, dup.ID
			return dup, true, nil
		}
	}
	m.ToURL, m.ToSK, m.ToID = "", "", 0
	return nil, false, nil
}

// openDuplicates lists the open duplicates of g, earliest first. The
// duplicates GSI lags the table: the listing is read again, after a
// pause, until its length is g's own count of open duplicates (read
// consistently); the transaction's conditions on each of them catch a
// listing of the right length but stale content.
func (d *DB) openDuplicates(ctx context.Context, g *genItem) ([]*genItem, error) {
	if g.OpenDups == 0 {
		return nil, nil
	}
	for attempt := 1; ; attempt++ {
		var dups []*genItem
		var derr error
		err := d.queryGenIndex(ctx, IndexDuplicates, gaDupOf, fxN(g.ID), 0, func(it map[string]types.AttributeValue) bool {
			dup, err := decodeGenItem(it)
			if err != nil {
				derr = err
				return false
			}
			dups = append(dups, dup)
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return nil, fmt.Errorf("find duplicates of %d: %w", g.ID, err)
		}
		if int64(len(dups)) == g.OpenDups {
			return dups, nil
		}
		if attempt == 5 {
			return nil, fmt.Errorf("duplicates of %d: the index lists %d, the generation counts %d: %w",
				g.ID, len(dups), g.OpenDups, crawl.ErrConflict)
		}
		if err := pause(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// originalByID finds the original generation id among those with the
// given text digest, or nil when it is not (or no longer) one.
func (d *DB) originalByID(ctx context.Context, digest string, id int64) (*genItem, error) {
	var g *genItem
	var derr error
	err := d.queryGenIndex(ctx, IndexOriginals, gaOriginalDigest, fxS(digest), 0, func(it map[string]types.AttributeValue) bool {
		got, rerr := fxReadN(it, gaGenID)
		if rerr != nil {
			derr = fmt.Errorf("an original's item: %w", rerr)
			return false
		}
		if got != id {
			return true
		}
		g, derr = decodeGenItem(it)
		return false
	})
	if err == nil {
		err = derr
	}
	if err != nil {
		return nil, fmt.Errorf("find original %d: %w", id, err)
	}
	return g, nil
}

// crawlSummaryItem is the crawl_summary item of s (with its
// http_summary), attached to generation genID (0: none).
func crawlSummaryItem(s crawl.SummaryUpdate, genID int64) map[string]types.AttributeValue {
	c := s.Crawl
	it := map[string]types.AttributeValue{
		gaURL: fxS(s.URL), gaSK: fxS(crawlSK(c.CrawlUUID)),
		gaWasRobotsApproved: fxBool(c.WasRobotsTxtApproved), gaCrawlType: fxN(int64(c.CrawlType)),
		gaCrawlUUID: fxS(c.CrawlUUID), gaAgentUUID: fxS(c.AgentUUID), gaTimeStarted: fxN(c.TimeStarted),
		gaExitCode: fxN(int64(c.ExitCode)),
	}
	if genID != 0 {
		it[gaGenID] = fxN(genID)
	}
	fxPutOpt(it, gaRequestDuration, fxOptN(c.RequestDurationMS))
	if h := s.HTTP; h != nil {
		m := map[string]types.AttributeValue{gaStatusCode: fxN(int64(h.StatusCode))}
		fxPutOpt(m, gaETag, fxOptS(h.ETag))
		it[gaHTTP] = &types.AttributeValueMemberM{Value: m}
	}
	return it
}

// headAndCrawl reads a URL's head and a crawl summary item in one
// strongly consistent BatchGetItem; either is nil when absent.
func (d *DB) headAndCrawl(ctx context.Context, u, csk string) (head, done map[string]types.AttributeValue, err error) {
	req := map[string]types.KeysAndAttributes{d.t.Generations: {
		Keys: []map[string]types.AttributeValue{genKey(u, skHead), genKey(u, csk)}, ConsistentRead: aws.Bool(true)}}
	err = d.batchGet(ctx, "read head and crawl summary", req, func(_ string, it map[string]types.AttributeValue) error {
		sk, err := fxReadS(it, gaSK)
		if err != nil {
			return err
		}
		if sk == skHead {
			head = it
		} else {
			done = it
		}
		return nil
	})
	return head, done, err
}

// getGenTableItem reads an item of the generations table, strongly
// consistent; nil when absent.
func (d *DB) getGenTableItem(ctx context.Context, u, sk string) (map[string]types.AttributeValue, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.t.Generations), Key: genKey(u, sk),
		ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("get %s %s: %w", u, sk, err)
	}
	if len(out.Item) == 0 {
		return nil, nil
	}
	return out.Item, nil
}

// getGen reads a generation item; nil when absent.
func (d *DB) getGen(ctx context.Context, u, sk string) (*genItem, error) {
	it, err := d.getGenTableItem(ctx, u, sk)
	if err != nil || it == nil {
		return nil, err
	}
	return decodeGenItem(it)
}

// queryGenIndex queries a GSI of the generations table for the items
// whose hash key attr is v, in sort key order, page by page (limit per
// page, 0: DynamoDB's 1 MB), until f returns false.
func (d *DB) queryGenIndex(ctx context.Context, index, attr string, v types.AttributeValue, limit int32,
	f func(map[string]types.AttributeValue) bool) error {
	e := &fxExpr{}
	in := &dynamodb.QueryInput{TableName: aws.String(d.t.Generations), IndexName: aws.String(index),
		KeyConditionExpression:   aws.String(e.name(attr) + " = " + e.value(v)),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()}
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	for {
		out, err := d.api.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("query %s: %w", index, err)
		}
		for _, it := range out.Items {
			if !f(it) {
				return nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// summaryTx collects the items of one TransactWriteItems on the
// generations table.
type summaryTx struct {
	table string
	items []types.TransactWriteItem
}

func (t *summaryTx) len() int { return len(t.items) }

func (t *summaryTx) add(it types.TransactWriteItem) { t.items = append(t.items, it) }

func (t *summaryTx) put(item map[string]types.AttributeValue, cond string, e *fxExpr) {
	p := &types.Put{TableName: aws.String(t.table), Item: item}
	if cond != "" {
		p.ConditionExpression, p.ExpressionAttributeNames, p.ExpressionAttributeValues = aws.String(cond), e.Names(), e.Values()
	}
	t.add(types.TransactWriteItem{Put: p})
}

func (t *summaryTx) update(key map[string]types.AttributeValue, update, cond string, e *fxExpr) {
	t.add(updateItem(t.table, key, update, cond, e))
}

func (t *summaryTx) check(key map[string]types.AttributeValue, cond string, e *fxExpr) {
	t.add(types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(t.table), Key: key,
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()}})
}

// updateItem is a conditional update in a transaction.
func updateItem(table string, key map[string]types.AttributeValue, update, cond string, e *fxExpr) types.TransactWriteItem {
	u := &types.Update{TableName: aws.String(table), Key: key, UpdateExpression: aws.String(update),
		ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()}
	if cond != "" {
		u.ConditionExpression = aws.String(cond)
	}
	return types.TransactWriteItem{Update: u}
}

// transact runs a transaction. A transaction cancelled by its conditions
// or by a concurrent transaction returns the reasons, one per item ("None"
// for the items that were fine), and no error; any other failure is an
// error. Two writes to one item in tx would be a bug in the plan, and
// are reported as a conflict, so that the summary is planned again.
func (d *DB) transact(ctx context.Context, tx *summaryTx) ([]string, error) {
	seen := map[string]bool{}
	for _, it := range tx.items {
		var k map[string]types.AttributeValue
		switch {
		case it.Put != nil:
			k = map[string]types.AttributeValue{gaURL: it.Put.Item[gaURL], gaSK: it.Put.Item[gaSK]}
		case it.Update != nil:
			k = it.Update.Key
		case it.ConditionCheck != nil:
			k = it.ConditionCheck.Key
		}
		r := fxReader{m: k}
		ks := r.str(gaURL) + "\x00" + r.str(gaSK)
		if r.err != nil {
			return nil, fmt.Errorf("transaction item key: %w", r.err)
		}
		if seen[ks] {
			return nil, fmt.Errorf("transaction writes %s twice: %w", ks, crawl.ErrConflict)
		}
		seen[ks] = true
	}
	_, err := d.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx.items})
	if err == nil {
		return nil, nil
	}
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		reasons := make([]string, len(tx.items))
		retryable := false
		for i := range reasons {
			reasons[i] = "None"
			if i < len(tc.CancellationReasons) && tc.CancellationReasons[i].Code != nil {
				reasons[i] = *tc.CancellationReasons[i].Code
			}
			switch reasons[i] {
			case "ConditionalCheckFailed", "TransactionConflict":
				retryable = true
			}
		}
		if retryable {
			return reasons, nil
		}
		return nil, crawl.E(fmt.Sprintf("transaction cancelled %v", reasons), crawl.KindTransient, err)
	}
	return nil, fmt.Errorf("write transaction: %w", err)
}

// batchGet runs a BatchGetItem of req to the end: the keys DynamoDB
// leaves unprocessed are asked again, after a pause, eight attempts in
// all. Each item read is handed to each with its table.
func (d *DB) batchGet(ctx context.Context, what string, req map[string]types.KeysAndAttributes, each func(table string, item map[string]types.AttributeValue) error) error {
	for attempt := 1; len(req) > 0; attempt++ {
		out, err := d.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		for table, items := range out.Responses {
			for _, it := range items {
				if err := each(table, it); err != nil {
					return fmt.Errorf("%s: %w", what, err)
				}
			}
		}
		req = out.UnprocessedKeys
		if len(req) > 0 {
			if attempt == 8 {
				return crawl.E(what, crawl.KindTransient, errors.New("keys left unprocessed"))
			}
			if err := pause(ctx, attempt); err != nil {
				return err
			}
		}
	}
	return nil
}

// pause waits before attempt n+1 of a read or write that lost a race
// or found an index behind: 50 ms, doubling, at most 1.6 s.
func pause(ctx context.Context, n int) error {
	t := time.NewTimer(50 * time.Millisecond << min(n-1, 5))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
