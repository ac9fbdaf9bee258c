package urlnorm

import (
	"hash/maphash"
	"strings"
	"sync"
)

// Resolutions are remembered across pages. A site names the same
// targets from page after page (its navigation, in relative form), and
// resolving by the standard's parser was a sixth of parsing a page of
// the Python documentation (BENCHMARKS.md). Written here because no URL
// library keeps such a cache, and only this package knows when two
// bases resolve a reference alike.
//
// When they do, by the standard's parsing rules:
//   - The fragment is parsed on its own, whatever came before it: a
//     reference resolves as the part before its '#' does, with the
//     fragment added. So the cache holds the part before the '#', and a
//     plain fragment is taken as it is (see fragment).
//   - A relative reference resolves against the base's scheme, userinfo,
//     host, port and path without its last segment ("shorten the
//     path"), unless it is empty or begins with '?' (or is a scheme
//     followed by nothing or '?'), which keeps the base's whole path or
//     query. So such a reference resolves alike against every base in
//     one directory, and the key is the base up to its last '/'; the
//     others' key is the whole base (the base's fragment never counts).
//   - A reference with a byte the parser strips (controls, spaces, tabs,
//     newlines) is not cached: where its parts begin is not where they
//     seem to.

// maxCachedPerShard bounds the cache: a shard that fills is emptied.
// 16 shards of 4,096 entries hold a large site's navigation in a few
// megabytes.
const (
	cacheShards       = 16
	maxCachedPerShard = 4096
)

// cacheKey is what a resolution depends on: the base (its directory,
// or all of it without its fragment) and the reference up to its '#'.
type cacheKey struct{ base, ref string }

type cached struct {
	r   Result
	err error
}

type cacheShard struct {
	mu sync.Mutex
	m  map[cacheKey]cached
}

var (
	resolutions [cacheShards]cacheShard
	cacheSeed   = maphash.MakeSeed()
)

// cacheable reports whether ref may go through the cache (see above).
func cacheable(ref string) bool {
	if len(ref) > 2048 {
		return false
	}
	for i := 0; i < len(ref); i++ {
		if ref[i] <= ' ' || ref[i] == 0x7f {
			return false
		}
	}
	return true
}

// dirOnly reports whether a reference with no fragment resolves alike
// against every base of one directory (see above).
func dirOnly(ref string) bool {
	if ref == "" || ref[0] == '?' {
		return false
	}
	if i := strings.IndexByte(ref, ':'); i > 0 && isScheme(ref[:i]) {
		if rest := ref[i+1:]; rest == "" || rest[0] == '?' {
			return false
		}
	}
	return true
}

// isScheme reports whether s is written as a URL scheme: an ASCII
// letter, then letters, digits, '+', '-' and '.'.
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20 // lower-case a letter
		switch {
		case 'a' <= c && c <= 'z':
		case i > 0 && ('0' <= s[i] && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// directory is the serialized base up to and including the last '/' of
// its path: what a reference that is dirOnly resolves against.
func directory(whole string) string {
	if i := strings.IndexByte(whole, '?'); i >= 0 {
		whole = whole[:i]
	}
	return whole[:strings.LastIndexByte(whole, '/')+1]
}

func (b *Base) resolveCached(ref string) (Result, error) {
	if b.whole == "" || !cacheable(ref) {
		return b.resolve(ref)
	}
	pre, frag, hasFrag := strings.Cut(ref, "#")
	k := cacheKey{b.whole, pre}
	if dirOnly(pre) {
		k.base = b.dir
	}
	s := &resolutions[maphash.String(cacheSeed, pre)%cacheShards]
	s.mu.Lock()
	c, ok := s.m[k]
	s.mu.Unlock()
	if !ok {
		c.r, c.err = b.resolve(pre)
		// The reference may be a slice of a whole page: kept, it is copied.
		k.ref = strings.Clone(pre)
		s.mu.Lock()
		if len(s.m) >= maxCachedPerShard || s.m == nil {
			s.m = make(map[cacheKey]cached, 256)
		}
		s.m[k] = c
		s.mu.Unlock()
	}
	if c.err != nil {
		return b.resolve(ref) // the error, naming the reference as written
	}
	if hasFrag {
		c.r.Fragment, c.r.HasFrag = fragment(frag), true
	}
	return c.r, nil
}

// fragment is a reference's fragment as Result reports it: as written
// when the standard would percent-encode none of it and it holds no
// escape to decode, else as the parser and decodeFragment make it.
func fragment(f string) string {
	plain := true
	for i := 0; i < len(f) && plain; i++ {
		c := f[i]
		plain = c > ' ' && c < 0x7f && c != '"' && c != '<' && c != '>' && c != '`' && c != '%'
	}
	if plain {
		return f
	}
	u, err := parser.Parse("http://h/#" + f)
	if err != nil { // a fragment cannot fail to parse; if it did, as written
		return f
	}
	href := u.Href(false)
	return decodeFragment(href[strings.IndexByte(href, '#')+1:])
}
