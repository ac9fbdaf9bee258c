// Package dynamo is the DynamoDB home of the crawler's metadata: the
// same store the SQLite adapter provides on one machine, in four tables
// shaped after the seeds (see docs/aws.md for the item layouts):
//
//   - candidates (crawl_candidate): one item per normalized URL, with
//     the frontier state; sparse GSIs find due and stale-queued URLs per
//     host without a Scan.
//   - crawl log (crawl_log with its request, file and redirect rows):
//     one item per crawl, expired by TTL (seed 000: the log is cleaned
//     up, candidates keep the essentials).
//   - generations (entity_generation and its summaries): items under
//     the URL; the text piles themselves live in S3.
//   - control: the crawl's scope, the agents (seed 000 agent) and the
//     per-host politeness gate.
//
// Every state transition is a conditional write.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// API is the part of the DynamoDB client the store uses.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Tables names the four tables (the stack's outputs).
type Tables struct {
	Candidates  string
	CrawlLog    string
	Generations string
	Control     string
}

// The GSIs, as template.yaml declares them.
const (
	IndexDueByHost  = "due-by-host" // candidates: due_host (S), due_at (N); only state=due
	IndexOriginals  = "originals"   // generations: original_digest (S), first_seen_key (S); open, indexable originals
	IndexDuplicates = "duplicates"  // generations: dup_of (N), first_seen_key (S); open duplicate statuses
)

// DB is the DynamoDB store.
type DB struct {
	api    API
	t      Tables
	now    func() time.Time
	logTTL time.Duration
	blobs  Blobs // text piles (see WithBlobs)

	byName releaseHostCache // duePartition's memory
}

// Option configures a DB.
type Option func(*DB)

// WithCrawlLogRetention sets how long crawl log items live before
// DynamoDB's TTL removes them (default 30 days).
func WithCrawlLogRetention(d time.Duration) Option { return func(db *DB) { db.logTTL = d } }

// WithClock sets the store's clock (tests).
func WithClock(now func() time.Time) Option { return func(db *DB) { db.now = now } }

// New returns a store over the given tables.
func New(api API, t Tables, opts ...Option) *DB {
	db := &DB{api: api, t: t, now: time.Now, logTTL: 30 * 24 * time.Hour}
	for _, o := range opts {
		o(db)
	}
	return db
}

// Schema returns the tables' definitions: what template.yaml declares,
// for tests and local emulators (a test checks the two agree).
func Schema(t Tables) []*dynamodb.CreateTableInput {
	s := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	n := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeN}
	}
	key := func(hash, rng string) []types.KeySchemaElement {
		k := []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}}
		if rng != "" {
			k = append(k, types.KeySchemaElement{AttributeName: aws.String(rng), KeyType: types.KeyTypeRange})
		}
		return k
	}
	gsi := func(name, hash, rng string) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{IndexName: aws.String(name), KeySchema: key(hash, rng),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}
	}
	// The generations table's indexes carry only what the duplicate
	// bookkeeping reads (GenIndexAttributes), not a generation's search
	// text, headlines and summaries: DynamoDB bills an index write by
	// the size of what it projects, so with ALL every original was
	// billed twice its size.
	genGSI := func(name, hash, rng string) types.GlobalSecondaryIndex {
		g := gsi(name, hash, rng)
		g.Projection = &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: GenIndexAttributes}
		return g
	}
	od := types.BillingModePayPerRequest
	return []*dynamodb.CreateTableInput{
		{TableName: aws.String(t.Candidates), BillingMode: od, KeySchema: key("url", ""),
			AttributeDefinitions: []types.AttributeDefinition{s("url"), s("due_host"), n("due_at")},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
				gsi(IndexDueByHost, "due_host", "due_at")}},
		{TableName: aws.String(t.CrawlLog), BillingMode: od, KeySchema: key("crawl_uuid", ""),
			AttributeDefinitions: []types.AttributeDefinition{s("crawl_uuid")}},
		{TableName: aws.String(t.Generations), BillingMode: od, KeySchema: key("url", "sk"),
			AttributeDefinitions: []types.AttributeDefinition{s("url"), s("sk"), s("original_digest"), n("dup_of"), s("first_seen_key")},
			GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
				genGSI(IndexOriginals, "original_digest", "first_seen_key"), genGSI(IndexDuplicates, "dup_of", "first_seen_key")}},
		{TableName: aws.String(t.Control), BillingMode: od, KeySchema: key("pk", "sk"),
			AttributeDefinitions: []types.AttributeDefinition{s("pk"), s("sk")}},
	}
}

// TTLAttribute is the crawl log's time-to-live attribute (Unix seconds).
const TTLAttribute = "expires_at"

// CreateTables creates the tables if they do not exist (local emulators
// and tests; on AWS the stack creates them).
func CreateTables(ctx context.Context, api interface {
	CreateTable(context.Context, *dynamodb.CreateTableInput, ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	UpdateTimeToLive(context.Context, *dynamodb.UpdateTimeToLiveInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}, t Tables) error {
	for _, in := range Schema(t) {
		_, err := api.CreateTable(ctx, in)
		var inUse *types.ResourceInUseException
		if err != nil && !errors.As(err, &inUse) {
			return fmt.Errorf("create table %s: %w", *in.TableName, err)
		}
	}
	if _, err := api.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(t.CrawlLog),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(TTLAttribute), Enabled: aws.Bool(true)}}); err != nil {
		// DynamoDB answers "TimeToLive is already enabled" as a ValidationException.
		if !strings.Contains(err.Error(), "already enabled") {
			return fmt.Errorf("enable TTL on %s: %w", t.CrawlLog, err)
		}
	}
	return nil
}

// conditionFailed reports whether err is a failed condition.
func conditionFailed(err error) bool {
	var c *types.ConditionalCheckFailedException
	return errors.As(err, &c)
}
