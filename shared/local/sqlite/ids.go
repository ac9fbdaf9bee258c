package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// idCache keeps the ids of URLs and tokens the writer has looked up or
// added: a page names hundreds of URLs and tokens, most of them stored
// already, and an index lookup of each costs more than the rest of the
// page's rows. Only the writer goroutine uses it, and it drops it all
// when a transaction is rolled back (the ids it added name no row).
type idCache struct {
	// urls and tokens are keyed by crawl.MemKey, not by the string: on
	// a large crawl they are most of the live heap, which the garbage
	// collector then never scans.
	keys         crawl.MemKeys
	urls, tokens map[crawl.MemKey]int64
	// mimetypes and agents: a handful each, named by every crawl. A
	// mimetype's row was written again on every lookup (an upsert), a
	// dirty page in every commit.
	mimetypes, agents map[string]int64
	// tokensLoaded: tokens holds every row of the token table, so a
	// token not in it is new (loaded once, while the table is small
	// enough to keep; false again once the map starts over).
	tokensLoaded, tokensTried bool
}

// maxCachedIDs bounds each map (about 35 bytes an entry when full): past
// it the map starts over, which costs lookups, never correctness (barring
// two strings sharing a crawl.MemKey, see there).
const maxCachedIDs = 200_000

func newIDCache() idCache {
	return idCache{keys: crawl.NewMemKeys(), urls: map[crawl.MemKey]int64{}, tokens: map[crawl.MemKey]int64{},
		mimetypes: map[string]int64{}, agents: map[string]int64{}}
}

func (c *idCache) reset() {
	clear(c.urls)
	clear(c.tokens)
	clear(c.mimetypes)
	clear(c.agents)
	c.tokensLoaded, c.tokensTried = false, false
}

// put adds an id, and says whether the map had to start over.
func put[K comparable](m map[K]int64, k K, id int64) (cleared bool) {
	if len(m) >= maxCachedIDs {
		clear(m)
		cleared = true
	}
	m[k] = id
	return cleared
}

// urlID returns the id of u in the url table, adding it if needed.
func (w *wtx) urlID(ctx context.Context, u string) (int64, error) {
	return w.cachedURLID(ctx, u, false)
}

// newURLID is urlID for a URL that is most likely not stored yet (a new
// candidate's): it tries the insert first.
func (w *wtx) newURLID(ctx context.Context, u string) (int64, error) {
	return w.cachedURLID(ctx, u, true)
}

func (w *wtx) cachedURLID(ctx context.Context, u string, likelyNew bool) (int64, error) {
	c := &w.d.ids
	id, err := cachedID(ctx, w, c.urls, c.keys.Of(u), u, `SELECT url_id FROM url WHERE url=?`,
		`INSERT INTO url(url) VALUES(?) ON CONFLICT(url) DO NOTHING RETURNING url_id`, likelyNew)
	if err != nil {
		return 0, fmt.Errorf("url id of %s: %w", u, err)
	}
	return id, nil
}

// mimetypeID returns the id of m in the mimetype table, adding it if
// needed.
func (w *wtx) mimetypeID(ctx context.Context, m string) (int64, error) {
	id, err := cachedID(ctx, w, w.d.ids.mimetypes, m, m, `SELECT mimetype_id FROM mimetype WHERE mimetype=?`,
		`INSERT INTO mimetype(mimetype) VALUES(?) ON CONFLICT(mimetype) DO NOTHING RETURNING mimetype_id`, false)
	if err != nil {
		return 0, fmt.Errorf("mimetype id of %s: %w", m, err)
	}
	return id, nil
}

// cachedID returns the id of key in a table of unique keys, from cache
// (under k) or else from the table (adding the key if needed), and
// caches it. get returns the row's id; add inserts the key and returns
// the new row's id (nothing when the key is there). One index search
// answers a key looked up where it is most likely found: a key most
// likely new (a URL first found) is added first, and only looked up if
// that adds nothing; any other is looked up first.
func cachedID[K comparable](ctx context.Context, w *wtx, cache map[K]int64, k K, key, get, add string, likelyNew bool) (int64, error) {
	if id, ok := cache[k]; ok {
		return id, nil
	}
	first, then := get, add
	if likelyNew {
		first, then = add, get
	}
	var id int64
	err := w.QueryRowContext(ctx, first, key).Scan(&id)
	if notFound(err) {
		err = w.QueryRowContext(ctx, then, key).Scan(&id)
	}
	if err != nil {
		return 0, err
	}
	put(cache, k, id)
	return id, nil
}

// agentID returns the id of a registered agent.
func (w *wtx) agentID(ctx context.Context, agentUUID string) (int64, error) {
	c := &w.d.ids
	if id, ok := c.agents[agentUUID]; ok {
		return id, nil
	}
	var id int64
	if err := w.QueryRowContext(ctx, `SELECT agent_id FROM agent WHERE agent_uuid=?`, agentUUID).Scan(&id); err != nil {
		return 0, fmt.Errorf("agent %s: %w", agentUUID, err)
	}
	put(c.agents, agentUUID, id)
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

// tokenIDs returns the ids of tokens, adding those not stored yet (64
// a statement).
func (w *wtx) tokenIDs(ctx context.Context, tokens []string) ([]int64, error) {
	c := &w.d.ids
	if !c.tokensTried {
		c.tokensTried = true
		if err := w.loadTokens(ctx); err != nil {
			return nil, err
		}
	}
	ids := make([]int64, len(tokens))
	// The tokens not in the cache, by text: one may be in several piles.
	// Once the table is past the cache, they are looked up a few hundred
	// a statement: a statement a token held the writer more than a
	// minute for a page of 825,000 new words (an exploratory test).
	uncached := map[string][]int{}
	var order []any
	for i, t := range tokens {
		if id, ok := c.tokens[c.keys.Of(t)]; ok {
			ids[i] = id
			continue
		}
		if _, ok := uncached[t]; !ok {
			order = append(order, t)
		}
		uncached[t] = append(uncached[t], i)
	}
	cleared := false // the cache started over: it no longer holds the whole table
	found := func(id int64, t string) {
		if put(c.tokens, c.keys.Of(t), id) {
			cleared = true
		}
		for _, i := range uncached[t] {
			ids[i] = id
		}
		delete(uncached, t)
	}
	// scan reads (token_id, token_text) rows into found.
	scan := func(rows *sql.Rows, what string) error {
		defer rows.Close()
		for rows.Next() {
			var id int64
			var t string
			if err := rows.Scan(&id, &t); err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			found(id, t)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	if !c.tokensLoaded {
		for chunk := range slices.Chunk(order, 500) {
			rows, err := w.QueryContext(ctx, `SELECT token_id, token_text FROM token WHERE token_text IN (?`+strings.Repeat(`,?`, len(chunk)-1)+`)`, chunk...)
			if err != nil {
				return nil, fmt.Errorf("look up tokens: %w", err)
			}
			if err := scan(rows, "look up tokens"); err != nil {
				return nil, err
			}
		}
	}
	// The rest are new, added 64 a statement.
	fresh := slices.DeleteFunc(order, func(t any) bool { _, ok := uncached[t.(string)]; return !ok })
	for chunk := range slices.Chunk(fresh, 64) {
		q := `INSERT INTO token(token_text) VALUES (?)` + strings.Repeat(`,(?)`, len(chunk)-1) + ` RETURNING token_id, token_text`
		rows, err := w.QueryContext(ctx, q, chunk...)
		if err != nil {
			return nil, fmt.Errorf("insert tokens: %w", err)
		}
		if err := scan(rows, "insert tokens"); err != nil {
			return nil, err
		}
	}
	if cleared {
		c.tokensLoaded = false
	}
	if len(uncached) > 0 {
		return nil, fmt.Errorf("token ids: %d tokens neither found nor added", len(uncached))
	}
	return ids, nil
}

// loadTokens fills the cache with the token table, if it is small
// enough to keep.
func (w *wtx) loadTokens(ctx context.Context) error {
	c := &w.d.ids
	var n int
	if err := w.QueryRowContext(ctx, `SELECT count(*) FROM token`).Scan(&n); err != nil {
		return fmt.Errorf("count tokens: %w", err)
	}
	if n >= maxCachedIDs/2 {
		return nil
	}
	rows, err := w.QueryContext(ctx, `SELECT token_id, token_text FROM token`)
	if err != nil {
		return fmt.Errorf("load tokens: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var t string
		if err := rows.Scan(&id, &t); err != nil {
			return fmt.Errorf("load tokens: %w", err)
		}
		c.tokens[c.keys.Of(t)] = id
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("load tokens: %w", err)
	}
	c.tokensLoaded = true
	return nil
}
