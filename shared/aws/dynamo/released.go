package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Release records. A candidate released to fetch (state queued) leaves
// the due-by-host GSI, and nothing indexes it while it is queued: a
// second GSI of queued candidates cost two more write units a page, one
// to enter it at the release and one to leave it when the crawl is
// recorded. What finds a queued candidate instead, when its fetch
// message is lost (StaleQueued) or its site is disabled (holdSite), is
// the release record that PutCandidate writes before it writes any
// candidate as queued:
//
//	pk="released", sk=queued_at (20 digits)+"#"+uuid, urls_gz=the URLs
//
// one item per release time and write: one for a release of a hundred
// URLs, gzipped (a KB or two). A record is deleted by the first
// StaleQueued that finds none of its URLs still queued from that
// release, so the records are the releases of the last StaleAfter and
// those whose candidates are being released again.
const (
	ctlReleased   = "released"
	relURLs       = "urls_gz"
	maxRecordURLs = 1 << 20 // bytes of URLs read back from one record
)

// releaseSK is a release record's sort key: records sort by release time.
func releaseSK(queuedAt int64) string {
	return fmt.Sprintf("%020d#%s", max(queuedAt, 0), uuid.NewString())
}

// recordRelease writes the release records of the candidates of cs that
// are queued: one per release time. It comes before the candidates'
// writes, so that no candidate is ever queued without a record. It
// returns each candidate's record key ("" for none).
func (d *DB) recordRelease(ctx context.Context, cs []crawl.Candidate) ([]string, error) {
	sks := make([]string, len(cs))
	byTime := map[int64][]int{}
	for i, c := range cs {
		// What the candidate write refuses (no host) gets no record.
		if c.State == crawl.StateQueued && c.URL != "" && c.Host != "" {
			byTime[c.QueuedAt] = append(byTime[c.QueuedAt], i)
		}
	}
	for at, idx := range byTime {
		urls := make([]string, len(idx))
		for j, i := range idx {
			urls[j] = cs[i].URL
		}
		gz, err := gzipString(strings.Join(urls, "\n"))
		if err != nil {
			return nil, fmt.Errorf("record release of %d URLs: %w", len(urls), err)
		}
		sk := releaseSK(at)
		_, err = d.api.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(d.t.Control),
			Item: map[string]types.AttributeValue{
				ctlPK: fxS(ctlReleased), ctlSK: fxS(sk), relURLs: &types.AttributeValueMemberB{Value: gz},
			},
		})
		if err != nil {
			return nil, fmt.Errorf("record release of %d URLs: %w", len(urls), err)
		}
		for _, i := range idx {
			sks[i] = sk
		}
	}
	return sks, nil
}

// dropUnused deletes the release records (sks, as recordRelease
// returned them) none of whose candidates was written (errs): a release
// that lost to another writer leaves nothing behind. A record left by a
// failed delete only costs the read that finds it unused (StaleQueued).
func (d *DB) dropUnused(ctx context.Context, sks []string, errs []error) {
	used := map[string]bool{}
	for i, sk := range sks {
		if sk != "" {
			used[sk] = used[sk] || written(errs[i])
		}
	}
	for sk, u := range used {
		if !u {
			_ = d.deleteRelease(ctx, sk)
		}
	}
}

// releaseRecord is one release record as read back: its key, its
// release time and the candidates it names that are still queued from
// that release (state queued, queued_at the record's).
type releaseRecord struct {
	sk     string
	at     int64
	queued []crawl.Candidate
}

// releases calls fn for each release record of a release at or before
// upTo, oldest first, with the record's candidates that are still queued
// from it, read strongly consistent (a record is deleted on what this
// read shows). fn returns false to stop.
func (d *DB) releases(ctx context.Context, upTo int64, fn func(releaseRecord) (bool, error)) error {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.t.Control),
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk < :sk"),
		ExpressionAttributeNames:  map[string]string{"#pk": ctlPK, "#sk": ctlSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": fxS(ctlReleased), ":sk": fxS(fmt.Sprintf("%020d$", max(upTo, 0)))},
		ConsistentRead:            aws.Bool(true),
	}
	for {
		page, err := d.api.Query(ctx, in)
		if err != nil {
			return fmt.Errorf("read release records: %w", err)
		}
		for _, it := range page.Items {
			rec, urls, err := decodeRelease(it)
			if err != nil {
				return err
			}
			cands, err := d.batchGetCandidates(ctx, urls)
			if err != nil {
				return err
			}
			for _, c := range cands {
				if c.State == crawl.StateQueued && c.QueuedAt == rec.at {
					rec.queued = append(rec.queued, c)
				}
			}
			sortCandidates(rec.queued, queuedFirst)
			if more, err := fn(rec); err != nil || !more {
				return err
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// decodeRelease reads a release record's key, time and URLs.
func decodeRelease(it map[string]types.AttributeValue) (releaseRecord, []string, error) {
	sk, err := fxReadS(it, ctlSK)
	if err != nil {
		return releaseRecord{}, nil, fmt.Errorf("read release record: %w", err)
	}
	rec := releaseRecord{sk: sk}
	if _, err := fmt.Sscanf(sk, "%020d#", &rec.at); err != nil {
		return rec, nil, fmt.Errorf("release record %s: %w", sk, err)
	}
	b, ok := it[relURLs].(*types.AttributeValueMemberB)
	if !ok {
		return rec, nil, fmt.Errorf("release record %s: no %s", sk, relURLs)
	}
	s, err := gunzipString(b.Value, maxRecordURLs)
	if err != nil {
		return rec, nil, fmt.Errorf("release record %s: %w", sk, err)
	}
	if s == "" {
		return rec, nil, nil
	}
	return rec, strings.Split(s, "\n"), nil
}

// deleteRelease deletes a release record none of whose candidates is
// queued from it any more.
func (d *DB) deleteRelease(ctx context.Context, sk string) error {
	_, err := d.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(d.t.Control), Key: ctlKey(ctlReleased, sk)})
	if err != nil {
		return fmt.Errorf("delete release record %s: %w", sk, err)
	}
	return nil
}

// batchGetCandidates reads the candidates of urls, strongly consistent,
// 100 to a request; URLs with no candidate are left out.
func (d *DB) batchGetCandidates(ctx context.Context, urls []string) ([]crawl.Candidate, error) {
	var out []crawl.Candidate
	for len(urls) > 0 {
		n := min(len(urls), 100)
		keys := make([]map[string]types.AttributeValue, 0, n)
		seen := map[string]bool{}
		for _, u := range urls[:n] {
			if u != "" && !seen[u] {
				seen[u] = true
				keys = append(keys, map[string]types.AttributeValue{caURL: fxS(u)})
			}
		}
		urls = urls[n:]
		req := map[string]types.KeysAndAttributes{d.t.Candidates: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		err := d.batchGet(ctx, "read released candidates", req, func(_ string, it map[string]types.AttributeValue) error {
			c, err := decodeCandidate(it)
			if err != nil {
				return err
			}
			out = append(out, c)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
