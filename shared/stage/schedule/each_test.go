package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// TestAdmitEach: an event of several URLs admits each as its own event
// would; a user's URL that cannot be admitted does not stop the others
// and is named in the error; admitting the event again (a redelivery)
// changes nothing.
func TestAdmitEach(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s, _ := newScheduler(t, db, noLimit())
	admitAll(t, s, seed(home))
	links := crawl.EnqueueEvent{URLs: []string{home + "a", home + "b", other, "/relative"}, Parent: home, Hops: 1}
	var got []string
	each := func(ev crawl.EnqueueEvent, out Outcome) { got = append(got, ev.URL+" "+string(out)) }
	if err := s.AdmitEach(ctx, links, each); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("outcomes %q, want one for each of the 4 URLs", got)
	}
	for _, u := range []string{home + "a", home + "b"} {
		if c := mustGet(t, db, u); c.State != crawl.StateDue || c.Hops != 1 || c.Parent != home {
			t.Errorf("%s: %+v, want due at hop 1 from the home page", u, c)
		}
	}
	for u, code := range map[string]crawl.ExitCode{other: crawl.ExitOutOfScope, "/relative": crawl.ExitInvalidURL} {
		if c := mustGet(t, db, u); c.LastCrawlExitCode == nil || *c.LastCrawlExitCode != code {
			t.Errorf("%s: exit %v, want %v", u, fmtExit(c.LastCrawlExitCode), code)
		}
	}
	before := candidates(t, db)
	again := got
	got = nil
	if err := s.AdmitEach(ctx, links, each); err != nil || candidates(t, db) != before || len(got) != len(again) {
		t.Errorf("admitted again: %v, %d candidates (was %d), outcomes %q", err, candidates(t, db), before, got)
	}

	// A user's event: the invalid URL is refused, the others admitted.
	user := crawl.EnqueueEvent{URLs: []string{home + "c", "not a url", home + "d"}}
	got = nil
	err := s.AdmitEach(ctx, user, each)
	if crawl.KindOf(err) != crawl.KindInvalid || !strings.Contains(err.Error(), `1 of the event's 3 URLs refused`) ||
		!strings.Contains(err.Error(), `"not a url"`) {
		t.Errorf("error %v, want KindInvalid naming the refused URL", err)
	}
	if !slices.Equal(got, []string{home + "c " + string(Admitted), home + "d " + string(Admitted)}) {
		t.Errorf("outcomes %q, want c and d admitted", got)
	}
}

// readCounter is the real store, counting candidate reads by URL, each
// read held a moment so that concurrent admissions overlap.
type readCounter struct {
	*sqlite.DB
	mu    sync.Mutex
	reads map[string]int
}

func (r *readCounter) GetCandidate(ctx context.Context, u string) (crawl.Candidate, error) {
	r.mu.Lock()
	r.reads[u]++
	r.mu.Unlock()
	time.Sleep(time.Millisecond)
	return r.DB.GetCandidate(ctx, u)
}

// TestConcurrentPagesReadEachLinkOnce: the pages of a batch, admitted at
// once, share most links; each new link's candidate is read once, not
// once a page, and every page's links are all admitted or deduped.
func TestConcurrentPagesReadEachLinkOnce(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	store := &readCounter{DB: db, reads: map[string]int{}}
	s, _ := newScheduler(t, store, noLimit())
	admitAll(t, s, seed(home))
	const pages, links = 10, 40
	var nav []string
	for i := range links {
		nav = append(nav, fmt.Sprintf("%snav/%d", home, i))
	}
	var wg sync.WaitGroup
	outs := make([]map[Outcome]int, pages)
	for p := range pages {
		outs[p] = map[Outcome]int{}
		// Each page: the shared navigation, in an order of its own, and
		// a link of its own.
		urls := append(slices.Clone(nav), fmt.Sprintf("%sown/%d", home, p))
		rand.New(rand.NewPCG(uint64(p), 1)).Shuffle(len(urls), func(i, j int) { urls[i], urls[j] = urls[j], urls[i] })
		wg.Go(func() {
			err := s.AdmitEach(ctx, crawl.EnqueueEvent{URLs: urls, Parent: home, Hops: 1}, func(_ crawl.EnqueueEvent, o Outcome) { outs[p][o]++ })
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	admitted := 0
	for p, o := range outs {
		if o[Admitted]+o[Deduped] != links+1 {
			t.Errorf("page %d: outcomes %v, want %d admitted or deduped", p, o, links+1)
		}
		admitted += o[Admitted]
	}
	if admitted != links+pages {
		t.Errorf("%d admitted, want each of the %d URLs once", admitted, links+pages)
	}
	if n := candidates(t, db); n != 1+links+pages {
		t.Errorf("%d candidates, want %d", n, 1+links+pages)
	}
	for u, n := range store.reads {
		if n > 1 && u != home {
			t.Errorf("%s read %d times, want once", u, n)
		}
	}
}
