package dynamo

import (
	"maps"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// goodGenItem is a generation item as newGenItem writes it, with a file
// summary, a redirect, a description and a duplicate history.
func goodGenItem() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		gaURL: fxS("http://a.test/"), gaSK: fxS(genSK(100, 7)), gaGenID: fxN(7), gaGenUUID: fxS("u-7"),
		gaFirstSeen: fxN(100), gaLastSeen: fxN(200), gaMarkedDuplicate: fxBool(false), gaContentKey: fxS("k"),
		gaNoIndex: fxBool(false), gaOpenDups: fxN(0), gaLinkCount: fxN(3),
		gaFile: &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{gaFileSize: fxN(10), gaMIMEType: fxS("text/html")}},
		gaRedirect: &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{gaToURL: fxS("http://b.test/"),
			gaInfoSource: fxN(1), gaBySecurityPolicy: fxBool(false)}},
		gaDescription: &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{gaIndexiness: fxN(2), gaTitle: fxS("T")}},
		gaDupHistory:  encodeHistory([]dupStatus{{Of: 3, OfURL: "http://c.test/", Start: 100}}),
	}
}

// TestDecodeGenItemRefusesMalformed: a malformed stored value is an
// error naming the attribute, never a field dropped or zeroed.
func TestDecodeGenItemRefusesMalformed(t *testing.T) {
	if g, err := decodeGenItem(goodGenItem()); err != nil || g.ID != 7 || g.File == nil || *g.File.FileSize != 10 ||
		g.Redirect.ToURL != "http://b.test/" || *g.Description.Title != "T" || len(g.History) != 1 || g.Links != 3 {
		t.Fatalf("a good item: %+v, %v", g, err)
	}
	nested := func(attr, k string, v types.AttributeValue) func(map[string]types.AttributeValue) {
		return func(it map[string]types.AttributeValue) {
			m := maps.Clone(it[attr].(*types.AttributeValueMemberM).Value)
			m[k] = v
			it[attr] = &types.AttributeValueMemberM{Value: m}
		}
	}
	for _, c := range []struct {
		name   string
		damage func(map[string]types.AttributeValue)
		want   string
	}{
		{"an id that is not a number", func(it map[string]types.AttributeValue) { it[gaGenID] = fxS("7") }, "attribute entity_generation_id is"},
		{"a last_seen that does not parse", func(it map[string]types.AttributeValue) {
			it[gaLastSeen] = &types.AttributeValueMemberN{Value: "2e"}
		}, gaLastSeen},
		{"no first_seen", func(it map[string]types.AttributeValue) { delete(it, gaFirstSeen) }, "no " + gaFirstSeen},
		{"a confirmed end of the wrong type", func(it map[string]types.AttributeValue) { it[gaConfirmedEnd] = fxS("soon") }, gaConfirmedEnd},
		{"a link count that does not parse", func(it map[string]types.AttributeValue) {
			it[gaLinkCount] = &types.AttributeValueMemberN{Value: "three"}
		}, gaLinkCount},
		{"a file size that is a string", nested(gaFile, gaFileSize, fxS("10")), "in " + gaFile},
		{"a redirect source that is a bool", nested(gaRedirect, gaInfoSource, fxBool(true)), "in " + gaRedirect},
		{"a title that is a number", nested(gaDescription, gaTitle, fxN(1)), "in " + gaDescription},
		{"a file summary that is not a map", func(it map[string]types.AttributeValue) { it[gaFile] = fxS("x") }, gaFile},
		{"a duplicate history entry that is not a map", func(it map[string]types.AttributeValue) {
			it[gaDupHistory] = &types.AttributeValueMemberL{Value: []types.AttributeValue{fxS("x")}}
		}, gaDupHistory},
		{"a duplicate history start that does not parse", func(it map[string]types.AttributeValue) {
			it[gaDupHistory] = &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{
				Value: map[string]types.AttributeValue{gaDupOfID: fxN(3), gaDupStart: &types.AttributeValueMemberN{Value: "x"}}}}}
		}, "in " + gaDupHistory},
	} {
		t.Run(c.name, func(t *testing.T) {
			it := goodGenItem()
			c.damage(it)
			g, err := decodeGenItem(it)
			if err == nil {
				t.Fatalf("decoded %+v", g)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "http://a.test/") {
				t.Errorf("error %q does not name %q and the item", err, c.want)
			}
		})
	}
}

func TestDecodeRehomeMarkerRefusesMalformed(t *testing.T) {
	good := rehomeMarker{FromURL: "http://a.test/", FromSK: "g#1", FromID: 1, At: 5, ToURL: "http://b.test/", ToSK: "g#2", ToID: 2, Digest: "ab"}
	enc := good.encode().(*types.AttributeValueMemberM).Value
	if m, err := decodeRehomeMarker(enc); err != nil || m != good {
		t.Fatalf("round trip: %+v, %v", m, err)
	}
	bad := maps.Clone(enc)
	bad["to_id"] = fxS("2")
	if _, err := decodeRehomeMarker(bad); err == nil || !strings.Contains(err.Error(), "to_id") {
		t.Errorf("a to_id that is a string: err %v", err)
	}
}
