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
// synthetic site of 40,000 pages the collector's share of the crawl
// grew from 2% to 6.5% with the maps' strings (BENCHMARKS.md).
//
// Two strings share a key with a probability of about n²/2¹²⁹ for n keys:
// for a million, 10⁻²⁷, far below the rate of memory errors.
type MemKey [2]uint64

// MemKeys makes the MemKeys of one map (its seeds are its own).
type MemKeys struct{ a, b maphash.Seed }

// NewMemKeys returns a MemKeys with fresh random seeds.
func NewMemKeys() MemKeys { return MemKeys{a: maphash.MakeSeed(), b: maphash.MakeSeed()} }

// Of returns s's key.
func (k MemKeys) Of(s string) MemKey {
	return MemKey{maphash.String(k.a, s), maphash.String(k.b, s)}
}
