package crawl

import (
	"crypto/sha256"
	"encoding/hex"
)

// BodyKey is the content address of a raw body in the blob store:
// "raw/" + the first two hex digits of its SHA-256 + "/" + the rest.
func BodyKey(body []byte) string {
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	return "raw/" + h[:2] + "/" + h[2:]
}

// DocumentKey is where the parse stage keeps a crawl's parsed document.
func DocumentKey(crawlUUID string) string { return "doc/" + crawlUUID + ".json" }
