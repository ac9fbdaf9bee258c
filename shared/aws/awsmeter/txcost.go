package awsmeter

import (
	"math"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/serverless-crawler/crawler/shared/aws/itemsize"
)

// Why a transaction's write units are computed here and not only read
// from the answer: DynamoDB bills each action of a TransactWriteItems
// two write units per started KB of its item, and DynamoDB Local
// (2.x, which the cost benchmark runs on) reports less for a
// transaction of several items on one table. With
// ReturnConsumedCapacity=INDEXES it reported a table share of 2.0 for
// two or three 100-byte Puts (AWS: 4 and 6) and 6.0 for a 1.5 KB Put
// with a 100-byte one (AWS: 6). So the table's share is the larger of
// what was reported and txTableFloor; the indexes' share is taken as
// reported.

// txTableFloor returns the write units DynamoDB bills a transaction's
// actions on their tables: two per started KB of a Put's item, and two
// for every other action (an Update, a Delete or a ConditionCheck, whose
// item's size the request does not tell; 1 KB is the least they bill).
func txTableFloor(in *dynamodb.TransactWriteItemsInput) float64 {
	var units float64
	for _, a := range in.TransactItems {
		if a.Put != nil {
			units += 2 * math.Max(1, math.Ceil(float64(itemsize.Of(a.Put.Item))/1024))
			continue
		}
		units += 2
	}
	return units
}

// txWriteUnits returns a successful transaction's write units: its
// tables' share, at least txTableFloor, and its indexes' as reported.
func txWriteUnits(in *dynamodb.TransactWriteItemsInput, out *dynamodb.TransactWriteItemsOutput) float64 {
	var table, indexes float64
	for _, c := range out.ConsumedCapacity {
		switch {
		case c.Table != nil:
			table += deref64(c.Table.CapacityUnits)
			for _, g := range c.GlobalSecondaryIndexes {
				indexes += deref64(g.CapacityUnits)
			}
			for _, l := range c.LocalSecondaryIndexes {
				indexes += deref64(l.CapacityUnits)
			}
		case c.WriteCapacityUnits != nil:
			table += *c.WriteCapacityUnits
		default:
			table += deref64(c.CapacityUnits)
		}
	}
	return math.Max(table, txTableFloor(in)) + indexes
}
