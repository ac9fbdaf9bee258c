package dynamo

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// FuzzDecodeGenItem feeds the generation item decoder items written in
// DynamoDB's JSON ({"S":..}, {"N":..}, {"BOOL":..}, {"M":{..}},
// {"L":[..]}): it never panics, and an item it accepts has its id and
// times, each read from a number that parses.
func FuzzDecodeGenItem(f *testing.F) {
	good, _ := json.Marshal(toJSON(goodGenItem()))
	f.Add(good)
	for _, s := range []string{
		`{"url":{"S":"http://a/"},"sk":{"S":"g#1"},"entity_generation_id":{"N":"1"},"first_seen_unix_utc":{"N":"5"},"last_seen_unix_utc":{"N":"x"}}`,
		`{"file_summary":{"S":"not a map"}}`,
		`{"duplicate_summary":{"L":[{"S":"x"},{"M":{}}]}}`,
		`{"document_description":{"M":{"title":{"N":"1e400"}}}}`,
		`{}`,
		// A text's content key is left out and made from its digest.
		`{"url":{"S":"http://a/"},"sk":{"S":"g#1"},"entity_generation_id":{"N":"1"},"first_seen_unix_utc":{"N":"5"},"last_seen_unix_utc":{"N":"5"},"text_pile_digest":{"S":"ab01"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		it, ok := itemFromJSON(b)
		if !ok {
			return
		}
		g, err := decodeGenItem(it)
		if err != nil {
			return
		}
		for _, k := range []string{gaGenID, gaFirstSeen, gaLastSeen} {
			n, ok := it[k].(*types.AttributeValueMemberN)
			if !ok {
				t.Fatalf("accepted an item whose %s is %T", k, it[k])
			}
			if _, err := strconv.ParseInt(n.Value, 10, 64); err != nil {
				t.Fatalf("accepted an item whose %s is %q", k, n.Value)
			}
		}
		if g.File != nil && it[gaFile] == nil {
			t.Fatal("a file summary out of nothing")
		}
		if _, stored := it[gaContentKey]; !stored && g.Digest != "" && g.ContentKey != textContentKey(g.Digest) {
			t.Fatalf("content key %q for a text of digest %s with none stored", g.ContentKey, g.Digest)
		}
		if ck, ok := it[gaContentKey].(*types.AttributeValueMemberS); ok && g.ContentKey != ck.Value {
			t.Fatalf("content key %q, stored %q", g.ContentKey, ck.Value)
		}
	})
}

// itemFromJSON reads an item in DynamoDB's JSON form, leaving out the
// attributes that are not well formed; false if b is no JSON object.
func itemFromJSON(b []byte) (map[string]types.AttributeValue, bool) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return nil, false
	}
	it := map[string]types.AttributeValue{}
	for k, v := range raw {
		if av, ok := fromJSON(v, 0); ok {
			it[k] = av
		}
	}
	return it, true
}

// fromJSON reads one attribute value in DynamoDB's JSON form.
func fromJSON(b json.RawMessage, depth int) (types.AttributeValue, bool) {
	var v map[string]json.RawMessage
	if depth > 8 || json.Unmarshal(b, &v) != nil || len(v) != 1 {
		return nil, false
	}
	for k, x := range v {
		switch k {
		case "S", "N":
			var s string
			if json.Unmarshal(x, &s) != nil {
				return nil, false
			}
			if k == "S" {
				return &types.AttributeValueMemberS{Value: s}, true
			}
			return &types.AttributeValueMemberN{Value: s}, true
		case "BOOL":
			var t bool
			if json.Unmarshal(x, &t) != nil {
				return nil, false
			}
			return &types.AttributeValueMemberBOOL{Value: t}, true
		case "M":
			var m map[string]json.RawMessage
			if json.Unmarshal(x, &m) != nil {
				return nil, false
			}
			out := map[string]types.AttributeValue{}
			for mk, mv := range m {
				if av, ok := fromJSON(mv, depth+1); ok {
					out[mk] = av
				}
			}
			return &types.AttributeValueMemberM{Value: out}, true
		case "L":
			var l []json.RawMessage
			if json.Unmarshal(x, &l) != nil {
				return nil, false
			}
			out := []types.AttributeValue{}
			for _, e := range l {
				if av, ok := fromJSON(e, depth+1); ok {
					out = append(out, av)
				}
			}
			return &types.AttributeValueMemberL{Value: out}, true
		}
	}
	return nil, false
}

// toJSON writes an item in DynamoDB's JSON form (S, N, BOOL, M, L).
func toJSON(m map[string]types.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = valueJSON(v)
	}
	return out
}

func valueJSON(v types.AttributeValue) any {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return map[string]any{"S": x.Value}
	case *types.AttributeValueMemberN:
		return map[string]any{"N": x.Value}
	case *types.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": x.Value}
	case *types.AttributeValueMemberM:
		return map[string]any{"M": toJSON(x.Value)}
	case *types.AttributeValueMemberL:
		l := []any{}
		for _, e := range x.Value {
			l = append(l, valueJSON(e))
		}
		return map[string]any{"L": l}
	}
	return nil
}

// FuzzDecodeCandidateAndSite feeds the candidate and site item decoders
// items in DynamoDB's JSON: they never panic, and what they accept has
// finite rates and a site's filters whole.
func FuzzDecodeCandidateAndSite(f *testing.F) {
	for _, s := range []string{
		`{"url":{"S":"http://a/"},"state":{"S":"due"},"host":{"S":"a"},"mrate":{"N":"0.375"},"mrate_counter":{"N":"3"},"site_id":{"S":"docs"}}`,
		`{"url":{"S":"http://a/"},"mrate":{"N":"NaN"}}`, `{"url":{"S":"http://a/"},"mrate":{"N":"1e400"}}`,
		`{"sk":{"S":"docs"},"Roots":{"L":[{"S":"http://a/"}]},"Filters":{"L":[{"M":{"Pattern":{"S":"x"},"Type":{"N":"1"}}}]},"State":{"N":"1"},"SpeedSum":{"N":"10"},"AVGSpeedCounter":{"N":"2"}}`,
		`{"sk":{"S":"docs"},"Filters":{"L":[{"S":"not a map"}]}}`, `{"sk":{"S":"docs"},"SpeedSum":{"N":"Inf"},"AVGSpeedCounter":{"N":"1"}}`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		it, ok := itemFromJSON(b)
		if !ok {
			return
		}
		if c, err := decodeCandidate(it); err == nil && (math.IsNaN(c.MRate) || math.IsInf(c.MRate, 0)) {
			t.Fatalf("accepted a candidate of MRate %v", c.MRate)
		}
		s, err := decodeSite(it)
		if err != nil {
			return
		}
		if math.IsNaN(s.AVGSpeed) || math.IsInf(s.AVGSpeed, 0) {
			t.Fatalf("accepted a site of average speed %v", s.AVGSpeed)
		}
		if l, ok := it[stFilters].(*types.AttributeValueMemberL); ok && len(l.Value) != len(s.Filters) {
			t.Fatalf("%d filters read of %d", len(s.Filters), len(l.Value))
		}
	})
}
