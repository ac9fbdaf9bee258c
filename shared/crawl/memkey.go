package crawl

import "hash/maphash"

// MemKey is a string's key in a process's own in-memory maps (the
// writer's URL and token ids, a scheduler's known URLs): 128 bits of two
// independently seeded hashes, never stored or sent.
//
// Why not the string: a map keyed by strings holds a pointer an entry,
// so the garbage collector scans all of it at every cycle, and on a
// large crawl these maps are most of the live heap (hundreds of
// thousands of URLs). A map keyed by MemKey holds no pointers and is
// never scanned, and an entry takes a third of the memory. On the
// synthetic site the collector's share of the crawl grew from 1.7% at
// 10,000 pages to 6.5% at 40,000 with the maps' strings (BENCHMARKS.md,
// "The Java API's documentation, and the synthetic site again").
//
// Two strings sharing a key would be taken for one (a URL given another's
// id, a link deduped as known): for an ideal hash that happens with a
// probability of about n²/2¹²⁹ for n keys, 10⁻²⁷ for a million, far below
// the rate of memory errors. maphash is not a cryptographic hash, but its
// seeds are random and never leave the process, so a site cannot choose
// URLs that collide.
type MemKey [2]uint64

// MemKeys makes the MemKeys of one map (its seeds are its own).
type MemKeys struct{ a, b maphash.Seed }

// NewMemKeys returns a MemKeys with fresh random seeds.
func NewMemKeys() MemKeys { return MemKeys{a: maphash.MakeSeed(), b: maphash.MakeSeed()} }

// Of returns s's key.
func (k MemKeys) Of(s string) MemKey {
	return MemKey{maphash.String(k.a, s), maphash.String(k.b, s)}
}
