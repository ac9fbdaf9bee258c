package dynamo

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
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
	if n := len(out.Table.GlobalSecondaryIndexes); n != 2 {
		t.Fatalf("candidates table has %d GSIs, want 2", n)
	}
}
