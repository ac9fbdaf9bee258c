package dynamo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// The due-by-host GSI is keyed by host, and a release reads it partition
// by partition (duePartitions): the hosts it knows by name (the scope's,
// and every host that has been a site root's) and outsidePartition.
// DynamoDB cannot list a GSI's partition keys without a scan, so a due
// URL of any other host is written under that one shared partition,
// which every release reads as well. Such URLs come from collect-all
// sites, whose links that leave every site are crawled one hop
// (docs/sites.md): without it, their recrawls, and their retries once
// robots.txt answers, would be due forever and never released. The
// SQLite store reads its frontier whatever the host, and the contract's
// DueOutsideScope case holds both to it.
//
// A host's partition is chosen when its candidate is written. A host
// that later becomes one a release reads by name (a seed added on it)
// keeps its URLs already due under outsidePartition until they are
// written again: they are released all the same. A host never stops
// being one: the scope only grows, and a site's roots' hosts are
// registered for good when the site is put (pk "site-host" in the
// control table), so a root taken out of a site leaves no partition
// unread. So nothing written under a host's name is left unread.
const outsidePartition = "outside#release"

// releaseHostTTL is how long a host found not to be one a release reads
// by name is taken as such without asking again (a seed added on it
// meanwhile only sends its URLs to outsidePartition for that long). A
// host found to be one is one for good.
const releaseHostTTL = time.Minute

// maxReleaseHostCache bounds the hosts remembered; past it the memory
// starts over.
const maxReleaseHostCache = 10000

// releaseHostCache remembers, per store, which hosts a release reads by
// name, so that a candidate write asks once per host, not every time.
type releaseHostCache struct {
	mu  sync.Mutex
	in  map[string]bool      // hosts a release reads by name
	out map[string]time.Time // hosts it does not, as of when
	// asking: the writes of one new host at once (PutCandidates writes
	// sixteen at a time) share one question.
	asking singleflight.Group
}

// duePartition is the due-by-host partition a due candidate of host is
// written under: host itself when a release reads it by name, else
// outsidePartition.
func (d *DB) duePartition(ctx context.Context, host string) (string, error) {
	now := d.now()
	c := &d.byName
	c.mu.Lock()
	in := c.in[host]
	at, out := c.out[host]
	c.mu.Unlock()
	switch {
	case in:
		return host, nil
	case out && now.Sub(at) < releaseHostTTL:
		return outsidePartition, nil
	}
	v, err, _ := c.asking.Do(host, func() (any, error) { return d.readsByName(ctx, host) })
	if err != nil {
		return "", fmt.Errorf("due partition of %s: %w", host, err)
	}
	in = v.(bool)
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.in)+len(c.out) >= maxReleaseHostCache {
		c.in, c.out = nil, nil
	}
	if in {
		if c.in == nil {
			c.in = map[string]bool{}
		}
		c.in[host] = true
		delete(c.out, host)
		return host, nil
	}
	if c.out == nil {
		c.out = map[string]time.Time{}
	}
	c.out[host] = now
	return outsidePartition, nil
}

// readsByName reports whether a release reads host's due URLs by its
// name: a scope host, or a host that has been a site root's. Both sets
// only grow, so the answer yes holds for good.
func (d *DB) readsByName(ctx context.Context, host string) (bool, error) {
	if in, err := d.InScope(ctx, host); err != nil || in {
		return in, err
	}
	in, err := d.hasHost(ctx, ctlSiteHost, host)
	if err != nil {
		return false, fmt.Errorf("site hosts: %w", err)
	}
	return in, nil
}
