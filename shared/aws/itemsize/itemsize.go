// Package itemsize computes a DynamoDB item's size as DynamoDB bills
// it, for the writers that keep an item within a write unit and for the
// cost meter.
package itemsize

import ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

// Of is an item's size as DynamoDB counts it: each attribute's
// name and value in bytes (numbers about one byte per two digits plus
// one, lists and maps three bytes plus one a member), after
// "Item sizes and formats" in the DynamoDB Developer Guide.
func Of(item map[string]ddbtypes.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v ddbtypes.AttributeValue) int {
	switch v := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return len(v.Value)
	case *ddbtypes.AttributeValueMemberN:
		return numberSize(v.Value)
	case *ddbtypes.AttributeValueMemberB:
		return len(v.Value)
	case *ddbtypes.AttributeValueMemberBOOL, *ddbtypes.AttributeValueMemberNULL:
		return 1
	case *ddbtypes.AttributeValueMemberSS:
		return sum(v.Value, func(s string) int { return len(s) })
	case *ddbtypes.AttributeValueMemberNS:
		return sum(v.Value, numberSize)
	case *ddbtypes.AttributeValueMemberBS:
		return sum(v.Value, func(b []byte) int { return len(b) })
	case *ddbtypes.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *ddbtypes.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	}
	return 0
}

func numberSize(s string) int { return (len(s)+1)/2 + 1 }

// sum adds size over the members of a set.
func sum[T any](xs []T, size func(T) int) int {
	n := 0
	for _, x := range xs {
		n += size(x)
	}
	return n
}
