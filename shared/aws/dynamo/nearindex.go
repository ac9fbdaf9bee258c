package dynamo

import (
	"cmp"
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// The near-duplicate index (crawl/simhash.go) lives in the generations
// table, four items per generation with a text pile of its own:
//
//	url "near#<band>#<4 hex digits>"  sk "near#<first_seen>#<id>"
//
// one per 16-bit band of the pile's SimHash, holding the fingerprint,
// the generation's id, URL, first_seen and text pile digest. A
// near-duplicate shares at least one band with its original, so four
// Queries (one partition each) find every candidate. The items are
// written before the generation's transaction, as its links are: one
// whose transaction then fails names a generation that never exists,
// and a generation that closes or becomes a duplicate leaves its items
// behind; the reader reads the candidates' generations back (one
// BatchGetItem of a few attributes) and keeps only open originals.
// Exact copies write theirs too: one may take over as the original.
// Cost: four small writes per new generation with text (about 4 write
// units), four eventually consistent Queries and a small BatchGetItem
// per new generation summarized (docs/aws.md).
const (
	nearPrefix    = "near#"
	gaNearSimHash = "simhash" // S: 16 hex digits
	gaNearURL     = "near_url"
)

func nearPartition(band int, v uint16) string { return fmt.Sprintf("%s%d#%04x", nearPrefix, band, v) }

// nearItems are the near-duplicate index items of generation id of u,
// first seen at firstSeen, whose pile has the given digest and SimHash.
func nearItems(u string, id, firstSeen int64, digest []byte, simhash uint64) []map[string]types.AttributeValue {
	var items []map[string]types.AttributeValue
	for i, b := range crawl.SimHashBands(simhash) {
		items = append(items, map[string]types.AttributeValue{
			gaURL: fxS(nearPartition(i, b)), gaSK: fxS(nearPrefix + firstSeenKey(firstSeen, id)),
			gaNearSimHash: fxS(fmt.Sprintf("%016x", simhash)), gaGenID: fxN(id), gaNearURL: fxS(u),
			gaFirstSeen: fxN(firstSeen), gaTextPileDigest: fxS(hex.EncodeToString(digest)),
		})
	}
	return items
}

// putNearItems writes a new generation's near-duplicate index items,
// resending what DynamoDB leaves unprocessed a few times.
func (d *DB) putNearItems(ctx context.Context, items []map[string]types.AttributeValue) error {
	reqs := make([]types.WriteRequest, len(items))
	for i, it := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: it}}
	}
	for attempt := 0; len(reqs) > 0; attempt++ {
		if attempt == 4 {
			return crawl.Errorf(crawl.KindTransient, "put near-duplicate index items: %d left unprocessed", len(reqs))
		}
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(25<<attempt) * time.Millisecond):
			}
		}
		out, err := d.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{d.t.Generations: reqs}})
		if err != nil {
			return fmt.Errorf("put near-duplicate index items: %w", err)
		}
		reqs = out.UnprocessedItems[d.t.Generations]
	}
	return nil
}

// FindNearOriginal returns the open, non-duplicate, indexable generation
// of another URL, the earliest first seen, whose text pile's SimHash is
// within crawl.NearDistance bits of simhash; a zero Original when there
// is none. Requests: four Queries of the band partitions, then one
// consistent BatchGetItem (of a few attributes) per 100 candidates.
func (d *DB) FindNearOriginal(ctx context.Context, simhash uint64, u string) (crawl.Original, error) {
	var cands []crawl.Original
	seen := map[int64]bool{}
	for i, b := range crawl.SimHashBands(simhash) {
		e := &fxExpr{}
		in := &dynamodb.QueryInput{TableName: aws.String(d.t.Generations),
			KeyConditionExpression:   aws.String(e.name(gaURL) + " = " + e.value(fxS(nearPartition(i, b)))),
			ExpressionAttributeNames: e.Names(), ExpressionAttributeValues: e.Values()}
		for {
			out, err := d.api.Query(ctx, in)
			if err != nil {
				return crawl.Original{}, fmt.Errorf("find near original of %s: %w", u, err)
			}
			for _, it := range out.Items {
				r := fxReader{m: it}
				h, herr := strconv.ParseUint(r.str(gaNearSimHash), 16, 64)
				c := crawl.Original{ID: r.int(gaGenID), URL: r.str(gaNearURL), FirstSeen: r.int(gaFirstSeen)}
				digest, derr := hex.DecodeString(r.str(gaTextPileDigest))
				if err := cmp.Or(r.err, herr, derr); err != nil {
					return crawl.Original{}, fmt.Errorf("find near original of %s: band item %s: %w", u, r.str(gaSK), err)
				}
				c.Digest = digest
				if c.URL != u && !seen[c.ID] && crawl.Near(h, simhash) {
					seen[c.ID] = true
					cands = append(cands, c)
				}
			}
			if len(out.LastEvaluatedKey) == 0 {
				break
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
	slices.SortFunc(cands, func(a, b crawl.Original) int {
		return cmp.Or(cmp.Compare(a.FirstSeen, b.FirstSeen), cmp.Compare(a.ID, b.ID))
	})
	for len(cands) > 0 {
		batch := cands[:min(len(cands), 100)]
		cands = cands[len(batch):]
		open, err := d.openOriginals(ctx, batch)
		if err != nil {
			return crawl.Original{}, fmt.Errorf("find near original of %s: %w", u, err)
		}
		for _, c := range batch {
			if open[c.ID] {
				return c, nil
			}
		}
	}
	return crawl.Original{}, nil
}

// openOriginals reads the generations of cands back, consistently, and
// reports which are still open originals (listed by the originals index).
func (d *DB) openOriginals(ctx context.Context, cands []crawl.Original) (map[int64]bool, error) {
	keys := make([]map[string]types.AttributeValue, len(cands))
	for i, c := range cands {
		keys[i] = genKey(c.URL, genSK(c.FirstSeen, c.ID))
	}
	e := &fxExpr{}
	proj := e.name(gaGenID) + ", " + e.name(gaOriginalDigest) + ", " + e.name(gaConfirmedEnd)
	req := map[string]types.KeysAndAttributes{d.t.Generations: {Keys: keys, ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String(proj), ExpressionAttributeNames: e.Names()}}
	open := map[int64]bool{}
	err := d.batchGet(ctx, "read near candidates", req, func(_ string, it map[string]types.AttributeValue) error {
		r := fxReader{m: it}
		id := r.int(gaGenID)
		if r.err != nil {
			return r.err
		}
		open[id] = it[gaOriginalDigest] != nil && it[gaConfirmedEnd] == nil
		return nil
	})
	if err != nil {
		return nil, err
	}
	return open, nil
}
