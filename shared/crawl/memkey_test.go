package crawl_test

import (
	"fmt"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

func TestMemKeys(t *testing.T) {
	k := crawl.NewMemKeys()
	// Strings that differ in one byte, in length, or only past a
	// typical hash block; the empty string; a NUL.
	strs := []string{"", "\x00", "a", "b", "ab", "ba", "http://example.org/", "http://example.org",
		"http://example.org/" + string(make([]byte, 200)) + "x", "http://example.org/" + string(make([]byte, 200)) + "y"}
	for i := range 20000 {
		strs = append(strs, fmt.Sprintf("http://example.org/page/%d.html", i))
	}
	seen := map[crawl.MemKey]string{}
	for _, s := range strs {
		key := k.Of(s)
		if key != k.Of(s) {
			t.Fatalf("Of(%q) is not the same twice", s)
		}
		if other, ok := seen[key]; ok {
			t.Fatalf("Of(%q) == Of(%q)", s, other)
		}
		seen[key] = s
		if key[0] == key[1] {
			t.Errorf("Of(%q): both halves %x: the two seeds gave one hash", s, key[0])
		}
	}
	// Another map's keys are its own.
	if other := crawl.NewMemKeys(); other.Of("a") == k.Of("a") {
		t.Error("two MemKeys gave one key for the same string: the seeds are not fresh")
	}
}
