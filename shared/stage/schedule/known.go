package schedule

import (
	"math"
	"sync"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// knownURLs remembers the candidates this scheduler has read or written,
// so that a link found again (most links of most pages: navigation,
// indexes) is deduped without reading its candidate. It only answers
// what reading the candidate would: a candidate's hops only go down and
// one that is not filtered never becomes filtered (admit), so
//
//   - a URL seen not filtered at h hops dedupes a plain event (not forced
//     or reenqueued) at h hops or more;
//   - a URL seen filtered at h hops dedupes a plain event at h hops or
//     more that the filters still rule out.
//
// Whatever another scheduler changed since (on AWS many run at once) can
// only lower the hops or lift the filter, which keeps both answers true.
// The one exception, Policy.FiltersAtRelease (the embedded home, where
// one scheduler admits and releases), filters a due URL at release by
// the run's filters, which are the admissions' too, and tells saw.
type knownURLs struct {
	mu sync.Mutex
	// urls is keyed by crawl.MemKey, not by the URL: the garbage
	// collector never scans a map without pointers (crawl/memkey.go).
	keys crawl.MemKeys
	urls map[crawl.MemKey]known
}

// known is what the scheduler saw of a URL, in 8 bytes: the map's
// entries stay small (crawl.MemKey).
type known struct {
	hops     int32 // a candidate's hops (a count of pages: far below 2³¹)
	filtered bool
}

// maxKnownURLs bounds the memory (35-56 bytes a URL, about 14 MB when
// full): past it the map starts over, which costs reads, never
// correctness (barring two URLs sharing a crawl.MemKey, see there).
const maxKnownURLs = 250_000

func (k *knownURLs) dedupes(url string, hops int, ruledOut bool) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.urls == nil {
		return false
	}
	e, ok := k.urls[k.keys.Of(url)]
	return ok && hops >= int(e.hops) && (!e.filtered || ruledOut)
}

// has reports whether url is known, whatever its hops and state.
func (k *knownURLs) has(url string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.urls == nil {
		return false
	}
	_, ok := k.urls[k.keys.Of(url)]
	return ok
}

func (k *knownURLs) saw(c crawl.Candidate) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.urls == nil {
		k.keys = crawl.NewMemKeys()
	}
	if k.urls == nil || len(k.urls) >= maxKnownURLs {
		k.urls = map[crawl.MemKey]known{}
	}
	key := k.keys.Of(c.URL)
	if c.Hops > math.MaxInt32 {
		delete(k.urls, key) // not kept: read the candidate
		return
	}
	k.urls[key] = known{hops: int32(c.Hops), filtered: c.State == crawl.StateFiltered}
}
