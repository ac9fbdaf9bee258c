package awsmeter

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The answers are what DynamoDB Local 2.x gave for these transactions
// (ReturnConsumedCapacity=INDEXES, 2026-11-26); want is what DynamoDB
// bills: two write units per started KB of each item.
func TestTxWriteUnits(t *testing.T) {
	s := func(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: v} }
	put := func(item map[string]ddbtypes.AttributeValue) ddbtypes.TransactWriteItem {
		return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: aws.String("t"), Item: item}}
	}
	small := func(k string) ddbtypes.TransactWriteItem { return put(map[string]ddbtypes.AttributeValue{"pk": s(k)}) }
	check := ddbtypes.TransactWriteItem{ConditionCheck: &ddbtypes.ConditionCheck{TableName: aws.String("t"),
		Key: map[string]ddbtypes.AttributeValue{"pk": s("a")}, ConditionExpression: aws.String("attribute_exists(pk)")}}
	big := put(map[string]ddbtypes.AttributeValue{"pk": s("d2"), "v": s(strings.Repeat("a", 1500))})
	tableOnly := func(u float64) []ddbtypes.ConsumedCapacity {
		return []ddbtypes.ConsumedCapacity{{TableName: aws.String("t"), CapacityUnits: aws.Float64(u), Table: &ddbtypes.Capacity{CapacityUnits: aws.Float64(u)}}}
	}
	for _, tc := range []struct {
		name     string
		items    []ddbtypes.TransactWriteItem
		reported []ddbtypes.ConsumedCapacity
		want     float64
	}{
		{"one small put", []ddbtypes.TransactWriteItem{small("i")}, tableOnly(2), 2},
		{"two small puts, reported as one", []ddbtypes.TransactWriteItem{small("d"), small("e")}, tableOnly(2), 4},
		{"three small puts, reported as one", []ddbtypes.TransactWriteItem{small("d"), small("e"), small("f")}, tableOnly(2), 6},
		{"a put and a condition check", []ddbtypes.TransactWriteItem{small("f"), check}, tableOnly(2), 4},
		{"a 1.5 KB put and a small one", []ddbtypes.TransactWriteItem{big, small("e")}, tableOnly(6), 6},
		{"an index's share is added as reported", []ddbtypes.TransactWriteItem{small("d"), small("e")},
			[]ddbtypes.ConsumedCapacity{{TableName: aws.String("t"), CapacityUnits: aws.Float64(4), Table: &ddbtypes.Capacity{CapacityUnits: aws.Float64(2)},
				GlobalSecondaryIndexes: map[string]ddbtypes.Capacity{"g": {CapacityUnits: aws.Float64(2)}}}}, 6},
		{"more reported than the floor is kept", []ddbtypes.TransactWriteItem{small("d")}, tableOnly(8), 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := txWriteUnits(&dynamodb.TransactWriteItemsInput{TransactItems: tc.items},
				&dynamodb.TransactWriteItemsOutput{ConsumedCapacity: tc.reported})
			if got != tc.want {
				t.Errorf("write units %v, want %v", got, tc.want)
			}
		})
	}
}
