package awsmeter

import (
	"context"
	"errors"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// sqsChunk is SQS's billing unit: every started 64 KiB of a request's
// payload is billed as one request.
const sqsChunk = 64 << 10

// countMiddleware counts one operation call at the initialize step.
type countMiddleware struct{ m *Meter }

func (*countMiddleware) ID() string { return "awsmeter" }

func (c *countMiddleware) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
	middleware.InitializeOutput, middleware.Metadata, error,
) {
	service, op := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
	if service == "DynamoDB" {
		in.Parameters = askCapacity(in.Parameters)
	}
	out, md, err := next.HandleInitialize(ctx, in)

	u := Op{Calls: 1}
	attempts := int64(1)
	if r, ok := retry.GetAttemptResults(md); ok && len(r.Results) > 0 {
		attempts = int64(len(r.Results))
	}
	u.Retries = attempts - 1
	if err != nil {
		u.Errors = 1
	}
	switch service {
	case "SQS":
		u.Billed = attempts * chunks(sqsPayload(in.Parameters, out.Result))
		if r, ok := out.Result.(*sqs.ReceiveMessageOutput); ok && err == nil && len(r.Messages) == 0 {
			u.Empty = 1
		}
	case "DynamoDB":
		if err == nil {
			reported := false
			u.RCU, u.WCU, reported = consumed(op, out.Result)
			tin, ok1 := in.Parameters.(*dynamodb.TransactWriteItemsInput)
			tout, ok2 := out.Result.(*dynamodb.TransactWriteItemsOutput)
			if ok1 && ok2 && reported {
				u.WCU = txWriteUnits(tin, tout)
			}
			if !reported {
				u.Unreported = 1
			}
		} else {
			u.EstWCU = refusedWrite(in.Parameters, err)
		}
	case "S3":
		switch v := out.Result.(type) {
		case *s3.GetObjectOutput:
			if v.ContentLength != nil {
				u.Bytes = *v.ContentLength
			}
		}
		if v, ok := in.Parameters.(*s3.PutObjectInput); ok && err == nil && v.ContentLength != nil {
			u.Bytes = *v.ContentLength
		}
	}
	c.m.record(service+"."+op, u)
	return out, md, err
}

// chunks is how many requests SQS bills for one carrying payload bytes.
func chunks(payload int) int64 {
	if payload <= sqsChunk {
		return 1
	}
	return int64((payload + sqsChunk - 1) / sqsChunk)
}

// sqsPayload is the payload SQS bills for a call: the bodies and
// message attributes sent, or received.
func sqsPayload(in, out any) int {
	n := 0
	switch v := in.(type) {
	case *sqs.SendMessageInput:
		n += len(deref(v.MessageBody)) + attrSize(v.MessageAttributes)
	case *sqs.SendMessageBatchInput:
		for _, e := range v.Entries {
			n += len(deref(e.MessageBody)) + attrSize(e.MessageAttributes)
		}
	}
	if v, ok := out.(*sqs.ReceiveMessageOutput); ok {
		for _, m := range v.Messages {
			n += len(deref(m.Body)) + attrSize(m.MessageAttributes)
		}
	}
	return n
}

func attrSize(attrs map[string]sqstypes.MessageAttributeValue) int {
	n := 0
	for k, a := range attrs {
		n += len(k) + len(deref(a.DataType)) + len(deref(a.StringValue)) + len(a.BinaryValue)
		for _, s := range a.StringListValues {
			n += len(s)
		}
		for _, b := range a.BinaryListValues {
			n += len(b)
		}
	}
	return n
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// askCapacity returns a copy of a DynamoDB input that asks for the
// consumed capacity, or the input itself if it asks already or cannot.
func askCapacity(in any) any {
	set := func(r *ddbtypes.ReturnConsumedCapacity) bool {
		if *r == ddbtypes.ReturnConsumedCapacityTotal || *r == ddbtypes.ReturnConsumedCapacityIndexes {
			return false
		}
		*r = ddbtypes.ReturnConsumedCapacityTotal
		return true
	}
	switch v := in.(type) {
	case *dynamodb.GetItemInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.PutItemInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.UpdateItemInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.DeleteItemInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.QueryInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.ScanInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.BatchGetItemInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.BatchWriteItemInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.TransactGetItemsInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.TransactWriteItemsInput:
		// By table and index: see txcost.go.
		c := *v
		if c.ReturnConsumedCapacity != ddbtypes.ReturnConsumedCapacityIndexes {
			c.ReturnConsumedCapacity = ddbtypes.ReturnConsumedCapacityIndexes
			return &c
		}
	case *dynamodb.ExecuteStatementInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.BatchExecuteStatementInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	case *dynamodb.ExecuteTransactionInput:
		c := *v
		if set(&c.ReturnConsumedCapacity) {
			return &c
		}
	}
	return in
}

// consumed reads the capacity a DynamoDB answer reports: read and write
// units, and whether it reported any. An answer that says only
// CapacityUnits is counted as reads or writes by its operation.
func consumed(op string, out any) (rcu, wcu float64, reported bool) {
	var ccs []ddbtypes.ConsumedCapacity
	one := func(c *ddbtypes.ConsumedCapacity) {
		if c != nil {
			ccs = append(ccs, *c)
		}
	}
	switch v := out.(type) {
	case *dynamodb.GetItemOutput:
		one(v.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		one(v.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		one(v.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		one(v.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		one(v.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		one(v.ConsumedCapacity)
	case *dynamodb.ExecuteStatementOutput:
		one(v.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		ccs = v.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		ccs = v.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		ccs = v.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		ccs = v.ConsumedCapacity
	case *dynamodb.BatchExecuteStatementOutput:
		ccs = v.ConsumedCapacity
	case *dynamodb.ExecuteTransactionOutput:
		ccs = v.ConsumedCapacity
	default:
		return 0, 0, true // not an operation that reports capacity
	}
	for _, c := range ccs {
		reported = true
		r, w := deref64(c.ReadCapacityUnits), deref64(c.WriteCapacityUnits)
		if r == 0 && w == 0 {
			if writes(op) {
				w = deref64(c.CapacityUnits)
			} else {
				r = deref64(c.CapacityUnits)
			}
		}
		rcu += r
		wcu += w
	}
	return rcu, wcu, reported
}

func writes(op string) bool {
	switch op {
	case "PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems":
		return true
	}
	return false
}

func deref64(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// refusedWrite estimates the write units of a write DynamoDB refused on
// a condition (billed, not reported): one per conditional write, two per
// action of a canceled transaction, as for 1 KB items.
func refusedWrite(in any, err error) float64 {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return 0
	}
	switch ae.ErrorCode() {
	case "ConditionalCheckFailedException":
		return 1
	case "TransactionCanceledException":
		if v, ok := in.(*dynamodb.TransactWriteItemsInput); ok {
			return 2 * float64(len(v.TransactItems))
		}
	}
	return 0
}
