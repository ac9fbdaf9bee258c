package crawl

import (
	"math/bits"
	"strings"
	"unicode"
)

// Near-duplicates (issue #18): two pages whose content differs only in a
// few words (a print version, a mirror with another banner, a date in
// the corner) are near-duplicates when the SimHashes of their text piles
// differ in at most NearDistance of 64 bits, as in Manku, Jain and Das
// Sarma, "Detecting near-duplicates for web crawling" (WWW 2007), which
// found 64 bits and a distance of 3 right for web pages. Written here
// rather than taken from a library: the Go SimHash packages are
// unmaintained, and the fingerprint is stored, so its every detail
// (features, hash, weights) must stay fixed; it is thirty lines.

// NearDistance is the largest Hamming distance between the SimHashes of
// two near-duplicate texts.
const NearDistance = 3

// MinSimHashWords is the fewest content words a text pile needs for a
// SimHash: a handful of words gives a fingerprint that many unrelated
// short pages share (they are still compared exactly, by digest).
const MinSimHashWords = 50

// SimHashBands splits a fingerprint into the four 16-bit bands a store
// indexes: two fingerprints within NearDistance (3) bits agree on at
// least one of the four (pigeonhole), so a lookup by band finds every
// candidate.
func SimHashBands(h uint64) [4]uint16 {
	return [4]uint16{uint16(h), uint16(h >> 16), uint16(h >> 32), uint16(h >> 48)}
}

// Near reports whether two fingerprints are within NearDistance bits.
func Near(a, b uint64) bool { return bits.OnesCount64(a^b) <= NearDistance }

// SimHash returns the 64-bit SimHash of the pile's content (its text,
// headlines, code and quotes; not its page chrome), with word 3-grams
// as features, each weighted by its count. ok is false when the content
// has fewer than MinSimHashWords words.
func (p TextPile) SimHash() (h uint64, ok bool) {
	var v [64]int32
	var w [3]string // the last three words
	words := 0
	for _, f := range []string{p.BigHeadlines, p.SmallHeadlines, p.Text, p.CodeText, p.QuoteText} {
		for word := range strings.FieldsFuncSeq(f, notWordRune) {
			w[0], w[1], w[2] = w[1], w[2], strings.ToLower(word)
			if words++; words < 3 {
				continue
			}
			f := shingleHash(w)
			for i := range v {
				if f&(1<<i) != 0 {
					v[i]++
				} else {
					v[i]--
				}
			}
		}
	}
	if words < MinSimHashWords {
		return 0, false
	}
	for i, x := range v {
		if x > 0 {
			h |= 1 << i
		}
	}
	return h, true
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// shingleHash is FNV-1a over the three words (a zero byte between them)
// and a SplitMix64 finalizer, so that every output bit depends on every
// input bit: SimHash needs the bits of its feature hashes independent.
func shingleHash(w [3]string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i, s := range w {
		if i > 0 {
			h = (h ^ 0) * prime
		}
		for j := 0; j < len(s); j++ {
			h = (h ^ uint64(s[j])) * prime
		}
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
