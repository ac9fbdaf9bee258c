package pipeline

import (
	"context"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/blobfs"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// keptOnce keeps a fetched body in the data directory's WARC files
// unless a body with the same SHA-256 is kept already (the same page
// fetched again without validators, or a mirror at another URL), whose
// key it returns instead: a body is stored once, as when each body was
// a file named by its hash.
type keptOnce struct {
	blobs *blobfs.Store
	db    *sqlite.DB
}

func (k keptOnce) Keep(ctx context.Context, x warc.Exchange) (string, error) {
	key, ok, err := k.db.BodyKeyOf(ctx, crawl.BodySHA256(x.Body))
	if err != nil {
		return "", err
	}
	if ok {
		return key, nil
	}
	return k.blobs.Keep(ctx, x)
}
