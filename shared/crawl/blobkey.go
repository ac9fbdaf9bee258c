package crawl

import (
	"crypto/sha256"
	"encoding/hex"
)

// BodyKey is the content address of a raw body in the blob store:
// "raw/" + the first two hex digits of its SHA-256 + "/" + the rest.
func BodyKey(body []byte) string { return contentAddress(BodySHA256(body)) }

// BodySHA256 is a body's SHA-256, in hex: what identifies its content
// wherever it is kept (File.ContentID).
func BodySHA256(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

func contentAddress(h string) string { return "raw/" + h[:2] + "/" + h[2:] }

// ContentID identifies a file's body by its content, wherever the body
// is kept: the content address of its SHA-256 (a body packed in a WARC
// file has a key that names the file and offset instead), or its key,
// when the record predates BodySHA256 and the key was the address.
func (f File) ContentID() string {
	if len(f.BodySHA256) == 64 {
		return contentAddress(f.BodySHA256)
	}
	return f.BodyKey
}

// DocumentKey is where the parse stage keeps a crawl's parsed document.
func DocumentKey(crawlUUID string) string { return "doc/" + crawlUUID + ".json" }
