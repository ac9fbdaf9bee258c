package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// The crawl report reads whole tables: one Scan page after another,
// eventually consistent (half a read unit per 4 KB). A report of a
// million crawls reads the crawl log once, about 1 KB an item: some
// 125,000 read units, a few cents on demand.

// scanPages runs a Scan to its end, handing each page to f.
func (d *DB) scanPages(ctx context.Context, in *dynamodb.ScanInput, f func(*dynamodb.ScanOutput) error) error {
	for {
		out, err := d.api.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("scan %s: %w", aws.ToString(in.TableName), err)
		}
		if err := f(out); err != nil {
			return err
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// scanAll hands every item of a table, filtered, to f.
func (d *DB) scanAll(ctx context.Context, in *dynamodb.ScanInput, f func(map[string]types.AttributeValue) error) error {
	return d.scanPages(ctx, in, func(out *dynamodb.ScanOutput) error {
		for _, it := range out.Items {
			if err := f(it); err != nil {
				return err
			}
		}
		return nil
	})
}

// openGenerations is the filter of a Scan of the generations table that
// keeps the open generations marked duplicate (dup) or not.
func openGenerations(e *fxExpr, dup bool) string {
	return "begins_with(" + e.name(gaSK) + ", " + e.value(fxS(skGenPrefix)) + ") AND attribute_not_exists(" +
		e.name(gaConfirmedEnd) + ") AND " + e.name(gaMarkedDuplicate) + " = " + e.value(fxBool(dup))
}

// EachCrawl hands every crawl in the crawl log (those its TTL has not
// yet removed), with its stored body's size, to f. A crawl the
// summarizer found a duplicate is handed on as one (crawl.ReportedExit):
// a crawl whose summary item says so, or that opened a generation as a
// duplicate (one with a duplicate history, kept when it later takes
// over as an original; its UUID is the crawl's, crawl.GenerationUUID: a
// first generation's crawl puts no summary item). Those are read first,
// with a Scan of the generations table that keeps only them.
func (d *DB) EachCrawl(ctx context.Context, f func(crawl.CrawlLog, *int64) error) error {
	dupCrawls, dupGens := map[string]bool{}, map[string]bool{}
	e := &fxExpr{}
	err := d.scanAll(ctx, &dynamodb.ScanInput{
		TableName: aws.String(d.t.Generations),
		FilterExpression: aws.String("(begins_with(" + e.name(gaSK) + ", " + e.value(fxS(skCrawlPrefix)) + ") AND " +
			e.name(gaExitCode) + " = " + e.value(fxN(int64(crawl.ExitDuplicate))) + ") OR (begins_with(" + e.name(gaSK) + ", " +
			e.value(fxS(skGenPrefix)) + ") AND attribute_exists(" + e.name(gaDupHistory) + "))"),
		ProjectionExpression:      aws.String(e.name(gaSK) + ", " + e.name(gaGenUUID)),
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	}, func(it map[string]types.AttributeValue) error {
		sk, err := fxReadS(it, gaSK)
		if err != nil {
			return fmt.Errorf("read the duplicate crawls: %w", err)
		}
		if c, ok := strings.CutPrefix(sk, skCrawlPrefix); ok {
			dupCrawls[c] = true
			return nil
		}
		g, err := fxReadS(it, gaGenUUID)
		if err != nil {
			return fmt.Errorf("read the duplicate crawls: %w", err)
		}
		dupGens[g] = true
		return nil
	})
	if err != nil {
		return err
	}
	return d.scanAll(ctx, &dynamodb.ScanInput{TableName: aws.String(d.t.CrawlLog)}, func(it map[string]types.AttributeValue) error {
		cr, err := decodeCrawlLog(it)
		if err != nil {
			return fmt.Errorf("read the crawl log: %w", err)
		}
		id := cr.Log.CrawlUUID
		cr.Log.ExitCode = crawl.ReportedExit(cr.Log.ExitCode, dupCrawls[id] || dupGens[crawl.GenerationUUID(id)])
		var size *int64
		if cr.File != nil {
			size = cr.File.FileSize
		}
		return f(cr.Log, size)
	})
}

// EachCandidate hands every candidate to f.
func (d *DB) EachCandidate(ctx context.Context, f func(crawl.Candidate) error) error {
	return d.scanAll(ctx, &dynamodb.ScanInput{TableName: aws.String(d.t.Candidates)}, func(it map[string]types.AttributeValue) error {
		c, err := decodeCandidate(it)
		if err != nil {
			return fmt.Errorf("read the candidates: %w", err)
		}
		return f(c)
	})
}

// DuplicateCount counts the open generations marked duplicate.
func (d *DB) DuplicateCount(ctx context.Context) (int, error) {
	e := &fxExpr{}
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(d.t.Generations),
		FilterExpression:          aws.String(openGenerations(e, true)),
		Select:                    types.SelectCount,
		ExpressionAttributeNames:  e.Names(),
		ExpressionAttributeValues: e.Values(),
	}
	count := 0
	err := d.scanPages(ctx, in, func(out *dynamodb.ScanOutput) error { count += int(out.Count); return nil })
	if err != nil {
		return 0, fmt.Errorf("count duplicates: %w", err)
	}
	return count, nil
}
