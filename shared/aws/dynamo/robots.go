package dynamo

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// robots.txt files shared by the fetcher's execution environments:
// control items pk="robots#"+origin, sk="robots.txt", with the HTTP
// status, the gzipped body and when it was fetched. The fetcher decides
// freshness from fetched_at_ms and its own TTLs.

// maxRobotsItem keeps a gzipped robots.txt well inside DynamoDB's 400 KB
// item limit; a larger one (rare: RFC 9309 asks crawlers to read 500 KiB)
// is not shared, and each environment fetches it itself.
const maxRobotsItem = 350 << 10

func robotsKey(origin string) map[string]types.AttributeValue {
	return ctlKey("robots#"+origin, "robots.txt")
}

// GetRobots returns the shared robots.txt of an origin, or
// crawl.ErrNotFound.
func (d *DB) GetRobots(ctx context.Context, origin string) (crawl.RobotsFile, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.t.Control), Key: robotsKey(origin)})
	if err != nil {
		return crawl.RobotsFile{}, fmt.Errorf("get robots.txt of %s: %w", origin, err)
	}
	if out.Item == nil {
		return crawl.RobotsFile{}, crawl.ErrNotFound
	}
	st, ok1 := out.Item["status"].(*types.AttributeValueMemberN)
	at, ok2 := out.Item["fetched_at_ms"].(*types.AttributeValueMemberN)
	body, ok3 := out.Item["body_gz"].(*types.AttributeValueMemberB)
	if !ok1 || !ok2 || !ok3 {
		return crawl.RobotsFile{}, fmt.Errorf("robots.txt item of %s is malformed", origin)
	}
	var status, ms int64
	if _, err := fmt.Sscan(st.Value, &status); err != nil {
		return crawl.RobotsFile{}, fmt.Errorf("robots.txt item of %s: status: %w", origin, err)
	}
	if _, err := fmt.Sscan(at.Value, &ms); err != nil {
		return crawl.RobotsFile{}, fmt.Errorf("robots.txt item of %s: fetched_at_ms: %w", origin, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body.Value))
	if err != nil {
		return crawl.RobotsFile{}, fmt.Errorf("robots.txt item of %s: %w", origin, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return crawl.RobotsFile{}, fmt.Errorf("robots.txt item of %s: %w", origin, err)
	}
	return crawl.RobotsFile{Status: int(status), Body: b, FetchedAt: time.UnixMilli(ms)}, nil
}

// PutRobots shares an origin's robots.txt, unless a later fetch of it is
// already shared.
func (d *DB) PutRobots(ctx context.Context, origin string, f crawl.RobotsFile) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(f.Body)
	zw.Close()
	if buf.Len() > maxRobotsItem {
		return fmt.Errorf("share robots.txt of %s: %d bytes gzipped, over %d", origin, buf.Len(), maxRobotsItem)
	}
	item := robotsKey(origin)
	item["origin"] = &types.AttributeValueMemberS{Value: origin}
	item["status"] = &types.AttributeValueMemberN{Value: fmt.Sprint(f.Status)}
	item["fetched_at_ms"] = &types.AttributeValueMemberN{Value: fmt.Sprint(f.FetchedAt.UnixMilli())}
	item["body_gz"] = &types.AttributeValueMemberB{Value: buf.Bytes()}
	_, err := d.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.t.Control), Item: item,
		ConditionExpression:       aws.String("attribute_not_exists(fetched_at_ms) OR fetched_at_ms < :at"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": item["fetched_at_ms"]}})
	if conditionFailed(err) {
		return nil // a fresher copy is there
	}
	if err != nil {
		return fmt.Errorf("share robots.txt of %s: %w", origin, err)
	}
	return nil
}
