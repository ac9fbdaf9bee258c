package schedule

import (
	"context"
	"fmt"
	"slices"
	"strings"
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

// readCounter is the real store, counting candidate reads and writes.
type readCounter struct {
	*sqlite.DB
	reads, writes int
	alone         int // writes by PutCandidate, one URL a write
}

func (c *readCounter) GetCandidate(ctx context.Context, u string) (crawl.Candidate, error) {
	c.reads++
	return c.DB.GetCandidate(ctx, u)
}

func (c *readCounter) PutCandidate(ctx context.Context, cand crawl.Candidate) error {
	c.writes++
	c.alone++
	return c.DB.PutCandidate(ctx, cand)
}

func (c *readCounter) PutCandidates(ctx context.Context, cs []crawl.Candidate) []error {
	c.writes += len(cs)
	return c.DB.PutCandidates(ctx, cs)
}

// TestGuessRuledOutNew: with GuessRuledOutNew, a page's links that are
// ruled out and unknown to the scheduler are written without a read;
// the same links stored already, given to a scheduler that does not know
// them, are read after their guessed write fails, come out as a read
// would have them, and are written together again, not one by one; a
// link known at more hops is read, not guessed.
func TestGuessRuledOutNew(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	store := &readCounter{DB: db}
	policy := noLimit()
	policy.GuessRuledOutNew = true
	s, _ := newScheduler(t, store, policy)
	admitAll(t, s, seed(home))
	var urls []string
	for i := range 10 {
		urls = append(urls, fmt.Sprintf("http://other.org/%d", i))
	}
	admit := func(s *Scheduler, hops int, urls ...string) map[Outcome]int {
		t.Helper()
		outs := map[Outcome]int{}
		if err := s.AdmitEach(ctx, crawl.EnqueueEvent{URLs: urls, Parent: home, Hops: hops}, func(_ crawl.EnqueueEvent, o Outcome) { outs[o]++ }); err != nil {
			t.Fatal(err)
		}
		return outs
	}
	before := store.reads
	if outs := admit(s, 2, urls...); outs[Filtered] != 10 || store.reads != before {
		t.Errorf("10 new out-of-scope links: outcomes %v, %d candidate reads; want 10 filtered, none read", outs, store.reads-before)
	}
	for _, u := range urls {
		if c := mustGet(t, db, u); c.State != crawl.StateFiltered || c.Hops != 2 || c.LastCrawlExitCode == nil || *c.LastCrawlExitCode != crawl.ExitOutOfScope {
			t.Errorf("%s: %+v, want filtered out-of-scope at hop 2", u, c)
		}
	}

	// Another scheduler, which knows none of them: each guess fails and
	// is read; at more hops they are deduped, at fewer their hops fall.
	other, _ := newScheduler(t, store, policy)
	before = store.reads
	if outs := admit(other, 3, urls[:5]...); outs[Deduped] != 5 || store.reads-before != 5 {
		t.Errorf("stored links at more hops: outcomes %v, %d reads; want 5 deduped, 5 reads", outs, store.reads-before)
	}
	before, alone := store.reads, store.alone
	if outs := admit(other, 1, urls[5:]...); outs[Filtered] != 5 || store.reads-before != 5 || store.alone != alone {
		t.Errorf("stored links at fewer hops: outcomes %v, %d reads, %d written alone; want 5 filtered, 5 reads, none alone",
			outs, store.reads-before, store.alone-alone)
	}
	for i, u := range urls {
		if want := map[bool]int{true: 2, false: 1}[i < 5]; mustGet(t, db, u).Hops != want {
			t.Errorf("%s: hops %d, want %d", u, mustGet(t, db, u).Hops, want)
		}
	}
	// Known to this scheduler at 2 hops, found at 1: read, not guessed
	// (a guess would fail its write and be written again).
	before, writes := store.reads, store.writes
	if outs := admit(s, 1, urls[0]); outs[Filtered] != 1 || store.reads-before != 1 || store.writes-writes != 1 {
		t.Errorf("a known link at fewer hops: outcomes %v, %d reads, %d writes; want filtered after 1 read, 1 write",
			outs, store.reads-before, store.writes-writes)
	}
}

// scopeCounter is the real store, counting scope reads.
type scopeCounter struct {
	*sqlite.DB
	reads int
}

func (c *scopeCounter) InScope(ctx context.Context, host string) (bool, error) {
	c.reads++
	return c.DB.InScope(ctx, host)
}

// TestOutOfScopeHostsRemembered: links to a host outside the scope ask
// the store once, not once a link; a minute later it is asked again, so
// that a seed another scheduler added (another Lambda environment) is
// seen; a seed this scheduler adds counts at once.
func TestOutOfScopeHostsRemembered(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	store := &scopeCounter{DB: db}
	now := testNow
	s, _ := newScheduler(t, store, Policy{MaxDepth: -1, KillOutOfScope: true})
	s.now = func() time.Time { return now }
	admitAll(t, s, seed(home))
	var urls []string
	for i := range 20 {
		urls = append(urls, fmt.Sprintf("http://other.org/%d", i))
	}
	admit := func(urls ...string) map[Outcome]int {
		t.Helper()
		outs := map[Outcome]int{}
		if err := s.AdmitEach(ctx, crawl.EnqueueEvent{URLs: urls, Parent: home, Hops: 1}, func(_ crawl.EnqueueEvent, o Outcome) { outs[o]++ }); err != nil {
			t.Fatal(err)
		}
		return outs
	}
	before := store.reads
	if outs := admit(urls[:10]...); outs[Killed] != 10 || store.reads-before != 1 {
		t.Errorf("10 links to one other host: outcomes %v, %d scope reads; want 10 killed, 1 read", outs, store.reads-before)
	}
	// Another scheduler seeds the host.
	other, _ := newScheduler(t, db, noLimit())
	admitAll(t, other, seed("http://other.org/"))
	now = now.Add(30 * time.Second)
	if outs := admit(urls[10]); outs[Killed] != 1 {
		t.Errorf("within the minute: %v, want killed as remembered", outs)
	}
	now = now.Add(31 * time.Second)
	if outs := admit(urls[11]); outs[Admitted] != 1 {
		t.Errorf("past the minute: %v, want admitted (the other scheduler's seed seen)", outs)
	}
	// A seed of this scheduler's own counts at once.
	if outs := admit("http://third.example/y"); outs[Killed] != 1 {
		t.Errorf("a third host: %v, want killed", outs)
	}
	admitAll(t, s, seed("http://third.example/"))
	if outs := admit("http://third.example/x"); outs[Admitted] != 1 {
		t.Errorf("a host this scheduler seeded: %v, want admitted", outs)
	}
}
