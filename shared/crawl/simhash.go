package crawl

import (
	"math/bits"
	"unicode"
	"unicode/utf8"
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
// as features, each weighted by its count. A word is a run of letters
// and digits, lower-cased. ok is false when the content has fewer than
// MinSimHashWords words. It reads the text once, hashing each word as it
// goes (no word is copied): it runs on every page summarized.
func (p TextPile) SimHash() (h uint64, ok bool) {
	var ones [64]int32 // per bit: the features that have it set
	// The features' bits are counted eight at a time: lanes[k] holds
	// the counts of bits 8k to 8k+7, one byte each (spreadBits), and
	// goes into ones before a byte can overflow. Counting bit by bit
	// was most of SimHash's time.
	var lanes [8]uint64
	inLanes := 0
	flush := func() {
		for k, l := range lanes {
			for j := range 8 {
				ones[8*k+j] += int32(l >> (8 * j) & 0xff)
			}
		}
		lanes, inLanes = [8]uint64{}, 0
	}
	var w [3]uint64 // the last three words' hashes
	words, features := 0, int32(0)
	var buf [utf8.UTFMax]byte // a character, lower-cased
	add := func(word uint64) {
		w[0], w[1], w[2] = w[1], w[2], word
		if words++; words < 3 {
			return
		}
		f := shingleHash(w)
		for k := range lanes {
			lanes[k] += spreadBits[byte(f>>(8*k))]
		}
		if inLanes++; inLanes == 255 {
			flush()
		}
		features++
	}
	for _, field := range []string{p.BigHeadlines, p.SmallHeadlines, p.Text, p.CodeText, p.QuoteText} {
		const offset, prime = 14695981039346656037, 1099511628211
		word, in := uint64(offset), false
		for i := 0; i < len(field); {
			// A letter or digit goes into the word's hash, lower-cased;
			// anything else ends the word. ASCII is taken a byte at a
			// time, without decoding.
			c := field[i]
			switch {
			case 'a' <= c && c <= 'z' || '0' <= c && c <= '9':
				word, in = (word^uint64(c))*prime, true
				i++
				continue
			case 'A' <= c && c <= 'Z':
				word, in = (word^uint64(c+'a'-'A'))*prime, true
				i++
				continue
			case c >= utf8.RuneSelf:
				r, n := utf8.DecodeRuneInString(field[i:])
				i += n
				if unicode.IsLetter(r) || unicode.IsDigit(r) {
					for _, b := range buf[:utf8.EncodeRune(buf[:], unicode.ToLower(r))] {
						word = (word ^ uint64(b)) * prime
					}
					in = true
					continue
				}
			default:
				i++
			}
			if in {
				add(word)
				word, in = offset, false
			}
		}
		if in {
			add(word)
		}
	}
	if words < MinSimHashWords {
		return 0, false
	}
	flush()
	for i, n := range ones {
		if 2*n > features { // more features with the bit set than without
			h |= 1 << i
		}
	}
	return h, true
}

// spreadBits[b] has bit j of b in byte j, as 0 or 1: added up, each
// byte counts how many of the bytes added had that bit set.
var spreadBits = func() (t [256]uint64) {
	for b := range t {
		for j := range 8 {
			t[b] |= uint64(b>>j&1) << (8 * j)
		}
	}
	return t
}()

// shingleHash mixes three words' FNV-1a hashes, each rotated by its
// place, with a SplitMix64 finalizer, so that every output bit depends
// on every input bit: SimHash needs the bits of its feature hashes
// independent.
func shingleHash(w [3]uint64) uint64 {
	h := w[0] ^ bits.RotateLeft64(w[1], 21) ^ bits.RotateLeft64(w[2], 42)
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
