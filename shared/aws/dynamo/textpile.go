package dynamo

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/warc"
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
// (warc.Packer): a record kept there costs a share of one PUT, and its
// key names the object and the record's place in it.
type resourceKeeper interface {
	KeepResources(ctx context.Context, rs []warc.Resource) ([]string, error)
}

// keepBlobs writes a new generation's bulk to the blob store and names
// it in the generation's item: its text pile (text_pile_key; none for
// an exact duplicate, whose pile is its original's) and, into a store
// that packs records, its link_summary (link_summary_key, the attribute
// leaving the item). Into a packing store (resourceKeeper) both go in
// one call, to the file shared with the others summarized at once; into
// a plain store the pile is written once per digest at TextPileKey (a
// pile already stored is left alone), and the links stay in the item
// (for its side item, sideItem).
//
// The links are write-only on the crawl path, and at about 320 links a
// page they were about half of the side item's 6 write units a page on
// the documentation tree (BENCHMARKS.md).
func (d *DB) keepBlobs(ctx context.Context, n *crawl.NewGeneration, item map[string]types.AttributeValue) error {
	var pile []byte
	if p := n.TextPile; p != nil && !n.Exact() {
		b := TextPileBlob{TextPile: *p, Tokens: n.Tokens}
		b.ID = TextPileID(p.Digest)
		var err error
		if pile, err = json.Marshal(b); err != nil {
			return fmt.Errorf("store text pile %x: %w", p.Digest, err)
		}
	}
	k, packs := d.blobs.(resourceKeeper)
	if !packs {
		if pile == nil {
			return nil
		}
		key, err := d.putPile(ctx, n.TextPile.Digest, pile)
		if err != nil {
			return fmt.Errorf("store text pile: %w", err)
		}
		item[gaTextPileKey] = fxS(key)
		searchFromPile(item)
		return nil
	}
	var rs []warc.Resource
	var attrs []string
	if pile != nil {
		rs = append(rs, warc.Resource{URI: "urn:crawler:text-pile:" + hex.EncodeToString(n.TextPile.Digest), ContentType: "application/json", Data: pile})
		attrs = append(attrs, gaTextPileKey)
	}
	if b, ok := item[gaLinks].(*types.AttributeValueMemberB); ok {
		rs = append(rs, warc.Resource{URI: "urn:crawler:link-summary:" + n.Generation.UUID, ContentType: "application/gzip", Data: b.Value})
		attrs = append(attrs, gaLinksKey)
	}
	keys, err := k.KeepResources(ctx, rs)
	if err != nil {
		return fmt.Errorf("store text pile and links: %w", err)
	}
	for i, a := range attrs {
		item[a] = fxS(keys[i])
	}
	delete(item, gaLinks)
	if pile != nil {
		searchFromPile(item)
	}
	return nil
}

// searchFromPile leaves the search text and headlines out of an item
// whose own text pile is kept in the blob store: Search reads them from
// the pile (scanSearchable), and in the item they were two of the side
// item's three write units a page on the documentation tree
// (BENCHMARKS.md, "#15, 2026-11-27 night"). An exact duplicate, which
// keeps no pile of its own, keeps its search text in its item: it may
// take over as the original.
func searchFromPile(item map[string]types.AttributeValue) {
	delete(item, gaSearchTextGz)
	delete(item, gaSearchHeadlines)
}

// putPile writes a text pile into a plain blob store at TextPileKey,
// unless it is there already.
func (d *DB) putPile(ctx context.Context, digest, data []byte) (string, error) {
	if d.blobs == nil {
		return "", fmt.Errorf("the store has no blob store (WithBlobs)")
	}
	key := TextPileKey(digest)
	exists, err := d.blobExists(ctx, key)
	if err != nil {
		return "", err
	}
	if exists {
		return key, nil
	}
	if err := d.blobs.Put(ctx, key, data); err != nil {
		return "", err
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
