package sqlite

import (
	"context"
	"fmt"
)

// idCache keeps the ids of URLs and tokens the writer has looked up or
// added: a page names hundreds of URLs and tokens, most of them stored
// already, and an index lookup of each costs more than the rest of the
// page's rows. Only the writer goroutine uses it, and it drops it all
// when a transaction is rolled back (the ids it added name no row).
type idCache struct {
	urls, tokens map[string]int64
}

// maxCachedIDs bounds each map (about 100 bytes an entry): past it the
// map starts over, which costs lookups, never correctness.
const maxCachedIDs = 200_000

func newIDCache() idCache {
	return idCache{urls: map[string]int64{}, tokens: map[string]int64{}}
}

func (c *idCache) reset() {
	clear(c.urls)
	clear(c.tokens)
}

func put(m map[string]int64, k string, id int64) {
	if len(m) >= maxCachedIDs {
		clear(m)
	}
	m[k] = id
}

// urlID returns the id of u in the url table, adding it if needed.
func (w *wtx) urlID(ctx context.Context, u string) (int64, error) {
	c := &w.g.d.ids
	if id, ok := c.urls[u]; ok {
		return id, nil
	}
	var id int64
	err := w.QueryRowContext(ctx, `SELECT url_id FROM url WHERE url=?`, u).Scan(&id)
	if notFound(err) {
		err = w.QueryRowContext(ctx, `INSERT INTO url(url) VALUES(?) RETURNING url_id`, u).Scan(&id)
	}
	if err != nil {
		return 0, fmt.Errorf("url id of %s: %w", u, err)
	}
	put(c.urls, u, id)
	return id, nil
}

// optURLID is urlID for an optional URL.
func (w *wtx) optURLID(ctx context.Context, u *string) (*int64, error) {
	if u == nil {
		return nil, nil
	}
	id, err := w.urlID(ctx, *u)
	if err != nil {
		return nil, err
	}
	return &id, nil
}

// tokenIDs returns the ids of tokens, adding those not stored yet.
func (w *wtx) tokenIDs(ctx context.Context, tokens []string) ([]int64, error) {
	c := &w.g.d.ids
	ids := make([]int64, len(tokens))
	for i, t := range tokens {
		if id, ok := c.tokens[t]; ok {
			ids[i] = id
			continue
		}
		err := w.QueryRowContext(ctx, `SELECT token_id FROM token WHERE token_text=?`, t).Scan(&ids[i])
		if notFound(err) {
			err = w.QueryRowContext(ctx, `INSERT INTO token(token_text) VALUES(?) RETURNING token_id`, t).Scan(&ids[i])
		}
		if err != nil {
			return nil, fmt.Errorf("token id of %q: %w", t, err)
		}
		put(c.tokens, t, ids[i])
	}
	return ids, nil
}
