package itemsize

import (
	"testing"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestItemSize(t *testing.T) {
	item := map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: "abc"},                                                                   // 2 + 3
		"n":  &ddbtypes.AttributeValueMemberN{Value: "12345"},                                                                 // 1 + 4
		"ok": &ddbtypes.AttributeValueMemberBOOL{Value: true},                                                                 // 2 + 1
		"l":  &ddbtypes.AttributeValueMemberL{Value: []ddbtypes.AttributeValue{&ddbtypes.AttributeValueMemberS{Value: "xy"}}}, // 1 + 3 + 1 + 2
	}
	if got, want := Of(item), 5+5+3+7; got != want {
		t.Errorf("Of %d, want %d", got, want)
	}
}

func TestSets(t *testing.T) {
	item := map[string]ddbtypes.AttributeValue{
		"ss": &ddbtypes.AttributeValueMemberSS{Value: []string{"ab", "cde"}},                                                        // 2 + 5
		"ns": &ddbtypes.AttributeValueMemberNS{Value: []string{"1", "1234"}},                                                        // 2 + 2 + 3
		"bs": &ddbtypes.AttributeValueMemberBS{Value: [][]byte{{1, 2}, {3}}},                                                        // 2 + 3
		"m":  &ddbtypes.AttributeValueMemberM{Value: map[string]ddbtypes.AttributeValue{"k": &ddbtypes.AttributeValueMemberNULL{}}}, // 1 + 3 + 1 + 1 + 1
	}
	if got, want := Of(item), 7+7+5+7; got != want {
		t.Errorf("Of %d, want %d", got, want)
	}
}
