package dynamo

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Blobs is the blob store (S3) that keeps the summary's text piles: a
// pile can be far larger than a DynamoDB item, and nothing but a search
// index rebuild or an export reads one whole.
type Blobs interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
}

// blobExister is a blob store that can tell whether a key exists without
// reading it (s3blob.Store: a HEAD request).
type blobExister interface {
	Exists(ctx context.Context, key string) (bool, error)
}

// WithBlobs sets the blob store ApplySummary writes text piles to.
func WithBlobs(b Blobs) Option { return func(db *DB) { db.blobs = b } }

// SetBlobs sets the blob store ApplySummary writes text piles to (for
// wiring that builds the store first).
func (d *DB) SetBlobs(b Blobs) { d.blobs = b }

// TextPileKey is the blob key of the text pile with the given digest.
func TextPileKey(digest []byte) string { return "pile/" + hex.EncodeToString(digest) + ".json" }

// TextPileBlob is what a text pile's blob holds: the pile (seed 002
// text_pile, its ID being TextPileID of its digest) and, when the
// summarizer counted them, its tokens (seed 002 token_statistics, by
// token text).
type TextPileBlob struct {
	crawl.TextPile
	Tokens map[string]int `json:"tokens,omitempty"`
}

// resourceKeeper is a blob store that packs records many to an object
// (warc.Packer): a text pile kept there costs a share of one PUT, and
// its key names the object and the record's place in it.
type resourceKeeper interface {
	KeepResource(ctx context.Context, uri, contentType string, data []byte) (string, error)
}

// putTextPile writes a new generation's text pile to the blob store and
// returns its key ("" when it writes none): the pile of an exact
// duplicate was written by its original's summary. Into a store that packs records
// (resourceKeeper) each new generation's pile is kept, in a file shared
// with the others summarized at once; into a plain store, once per
// digest at TextPileKey (a pile already stored is left alone).
func (d *DB) putTextPile(ctx context.Context, n *crawl.NewGeneration) (string, error) {
	p := n.TextPile
	if p == nil || n.Exact() {
		return "", nil
	}
	if d.blobs == nil {
		return "", fmt.Errorf("store text pile: the store has no blob store (WithBlobs)")
	}
	b := TextPileBlob{TextPile: *p, Tokens: n.Tokens}
	b.ID = TextPileID(p.Digest)
	data, err := json.Marshal(b)
	if err != nil {
		return "", fmt.Errorf("store text pile %x: %w", p.Digest, err)
	}
	if k, ok := d.blobs.(resourceKeeper); ok {
		key, err := k.KeepResource(ctx, "urn:crawler:text-pile:"+hex.EncodeToString(p.Digest), "application/json", data)
		if err != nil {
			return "", fmt.Errorf("store text pile: %w", err)
		}
		return key, nil
	}
	key := TextPileKey(p.Digest)
	exists, err := d.blobExists(ctx, key)
	if err != nil {
		return "", fmt.Errorf("store text pile: %w", err)
	}
	if exists {
		return key, nil
	}
	if err := d.blobs.Put(ctx, key, data); err != nil {
		return "", fmt.Errorf("store text pile: %w", err)
	}
	return key, nil
}

// blobExists reports whether a key is in the blob store: with a HEAD
// request when the store has one, else by reading it.
func (d *DB) blobExists(ctx context.Context, key string) (bool, error) {
	if e, ok := d.blobs.(blobExister); ok {
		return e.Exists(ctx, key)
	}
	_, err := d.blobs.Get(ctx, key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, crawl.ErrNotFound):
		return false, nil
	default:
		return false, err
	}
}
