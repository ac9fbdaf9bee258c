package dynamo

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
)

// testClient returns a client for the DynamoDB emulator that `make test`
// starts (infra/dynamodb-local.sh); the tests are skipped, saying so,
// when none is configured.
func testClient(t testing.TB) *dynamodb.Client {
	t.Helper()
	ep := os.Getenv("CRAWLER_TEST_DYNAMODB")
	if ep == "" {
		t.Skip("CRAWLER_TEST_DYNAMODB is not set: run `make test`, which starts DynamoDB Local")
	}
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ep),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
}

// testTables creates a fresh set of tables for one test.
func testTables(t testing.TB, api *dynamodb.Client) Tables {
	t.Helper()
	p := "t" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	tb := Tables{Candidates: p + "-candidates", CrawlLog: p + "-crawl-log", Generations: p + "-generations", Control: p + "-control"}
	if err := CreateTables(context.Background(), api, tb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{tb.Candidates, tb.CrawlLog, tb.Generations, tb.Control} {
			api.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n)})
		}
	})
	return tb
}

// testDB returns a store over fresh tables.
func testDB(t testing.TB, opts ...Option) *DB {
	api := testClient(t)
	return New(api, testTables(t, api), opts...)
}

func TestCreateTablesTwice(t *testing.T) {
	api := testClient(t)
	tb := testTables(t, api)
	if err := CreateTables(context.Background(), api, tb); err != nil {
		t.Fatalf("second CreateTables: %v", err)
	}
	out, err := api.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(tb.Candidates)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.Table.GlobalSecondaryIndexes); n != 1 {
		t.Fatalf("candidates table has %d GSIs, want 1", n)
	}
}

// TestIndexWritesBilledByProjection: the emulator bills a write to a
// generation that the originals index lists by the index's projection,
// not the whole item (GenIndexAttributes): what the cost benchmark's
// figures rest on (BENCHMARKS.md, "Cost per million pages"). A
// generation of over 3 KB costs its size unlisted, and 1 unit more
// listed (with ProjectionType ALL it was twice its size).
func TestIndexWritesBilledByProjection(t *testing.T) {
	db := testDB(t)
	put := func(sk string, listed bool) float64 {
		t.Helper()
		it := map[string]types.AttributeValue{gaURL: fxS("http://example.com/"), gaSK: fxS(sk),
			gaGenID: fxN(1), gaFirstSeenKey: fxS(sk), gaSearchTextGz: &types.AttributeValueMemberB{Value: make([]byte, 3000)}}
		if listed {
			it[gaOriginalDigest] = fxS("digest")
		}
		out, err := db.api.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(db.t.Generations),
			Item: it, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil || out.ConsumedCapacity == nil {
			t.Fatalf("put: %v (capacity %v)", err, out)
		}
		return aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
	}
	unlisted, listed := put("gen#1", false), put("gen#2", true)
	if unlisted < 3 || listed != unlisted+1 {
		t.Errorf("write units: %v unlisted, %v listed; want 3 or more, and 1 more listed (the index's write is its small projection)", unlisted, listed)
	}
}
