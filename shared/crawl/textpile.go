package crawl

import (
	"golang.org/x/crypto/blake2b"
)

// ComputeDigest returns the blake2b-512 digest over the pile's fields.
// Each field is written with its length first, so moving text from one
// field to the next changes the digest.
func (p TextPile) ComputeDigest() []byte {
	h, _ := blake2b.New512(nil) // only fails for a key over 64 bytes
	for _, f := range []string{p.Text, p.SecondaryText, p.BigHeadlines, p.SmallHeadlines, p.CodeText, p.QuoteText} {
		var n [8]byte
		l := uint64(len(f))
		for i := range n {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return h.Sum(nil)
}

// Empty reports whether every field is empty.
func (p TextPile) Empty() bool {
	return p.Text == "" && p.SecondaryText == "" && p.BigHeadlines == "" &&
		p.SmallHeadlines == "" && p.CodeText == "" && p.QuoteText == ""
}
