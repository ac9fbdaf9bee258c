package awsmeter

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"
)

// TestTransactionsOnDynamoDBLocal runs the transactions of
// TestTxWriteUnits on DynamoDB Local: the meter counts what DynamoDB
// bills (two units per started KB of each item), and the log shows what
// the emulator reported (`infra/with-emulators.sh go test -v -run
// TestTransactionsOnDynamoDBLocal ./shared/aws/awsmeter`).
func TestTransactionsOnDynamoDBLocal(t *testing.T) {
	ep := os.Getenv("CRAWLER_TEST_DYNAMODB")
	if ep == "" {
		t.Skip("CRAWLER_TEST_DYNAMODB is not set: run `make test`, which starts DynamoDB Local")
	}
	ctx := context.Background()
	m := New()
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(ep),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), APIOptions: []func(*middleware.Stack) error{m.AddTo}})
	table := "tx-" + uuid.NewString()[:8]
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(table), BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}}}); err != nil {
		t.Fatal(err)
	}
	put := func(k string, size int) ddbtypes.TransactWriteItem {
		item := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: k}}
		if size > 0 {
			item["v"] = &ddbtypes.AttributeValueMemberS{Value: strings.Repeat("a", size)}
		}
		return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: aws.String(table), Item: item}}
	}
	for _, tc := range []struct {
		name  string
		items []ddbtypes.TransactWriteItem
		bills float64
	}{
		{"one small put", []ddbtypes.TransactWriteItem{put("a", 0)}, 2},
		{"two small puts", []ddbtypes.TransactWriteItem{put("b", 0), put("c", 0)}, 4},
		{"three small puts", []ddbtypes.TransactWriteItem{put("d", 0), put("e", 0), put("f", 0)}, 6},
		{"a 1.5 KB put and a small one", []ddbtypes.TransactWriteItem{put("g", 1500), put("h", 0)}, 6},
	} {
		m.Take()
		out, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tc.items})
		if err != nil {
			t.Fatal(err)
		}
		var reported float64
		for _, c := range out.ConsumedCapacity {
			reported += aws.ToFloat64(c.CapacityUnits)
		}
		got := m.Take()["DynamoDB.TransactWriteItems"].WCU
		t.Logf("%s: DynamoDB Local reported %.1f write units, the meter counts %.1f, DynamoDB bills %.0f", tc.name, reported, got, tc.bills)
		if got != tc.bills {
			t.Errorf("%s: the meter counts %.1f write units, DynamoDB bills %.0f", tc.name, got, tc.bills)
		}
	}
}
