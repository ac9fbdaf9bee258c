package pipeline

import (
	"context"
	"sync"

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
//
// The database knows a body once its crawl is recorded; two fetch
// workers with the same bytes in hand before that (a mirror fetched
// right after its original: the host is free again as soon as a body is
// read) would each store it. So the bodies kept lately by this process
// are remembered too, and a body being kept makes a second keeper of
// the same bytes wait for its key.
type keptOnce struct {
	blobs  *blobfs.Store
	db     *sqlite.DB
	mu     *sync.Mutex
	recent map[string]string        // SHA-256 → key, kept by this process lately
	being  map[string]chan struct{} // SHA-256 being kept now; closed when it is
}

// recentBodies bounds keptOnce.recent: past it the map starts over (the
// database knows the older ones by then).
const recentBodies = 4096

func newKeptOnce(blobs *blobfs.Store, db *sqlite.DB) keptOnce {
	return keptOnce{blobs: blobs, db: db, mu: &sync.Mutex{}, recent: map[string]string{}, being: map[string]chan struct{}{}}
}

func (k keptOnce) Keep(ctx context.Context, x warc.Exchange) (string, error) {
	sha := crawl.BodySHA256(x.Body)
	for {
		k.mu.Lock()
		if key, ok := k.recent[sha]; ok {
			k.mu.Unlock()
			return key, nil
		}
		ch, busy := k.being[sha]
		if !busy {
			k.being[sha] = make(chan struct{})
			k.mu.Unlock()
			break
		}
		k.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	key, err := k.keep(ctx, sha, x)
	k.mu.Lock()
	close(k.being[sha])
	delete(k.being, sha)
	if err == nil {
		if len(k.recent) >= recentBodies {
			clear(k.recent)
		}
		k.recent[sha] = key
	}
	k.mu.Unlock()
	return key, err
}

func (k keptOnce) keep(ctx context.Context, sha string, x warc.Exchange) (string, error) {
	key, ok, err := k.db.BodyKeyOf(ctx, sha)
	if err != nil {
		return "", err
	}
	if ok {
		return key, nil
	}
	return k.blobs.Keep(ctx, x)
}
