package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// TestKnownURLsAnswerAsTheStoreWould feeds one random stream of events
// to a long-lived scheduler (which dedupes from what it has seen) and,
// event by event, to new schedulers (which must read every candidate),
// each over its own database, with other schedulers' changes mixed in:
// every outcome and every stored candidate must be the same. So must
// those of new schedulers that admit each event with AdmitEach and
// GuessRuledOutNew: knowing nothing, they write every ruled-out URL as
// new, and must come to the same answer when it is stored already.
func TestKnownURLsAnswerAsTheStoreWould(t *testing.T) {
	ctx := context.Background()
	policy := Policy{MaxDepth: 3, Exclude: []*regexp.Regexp{regexp.MustCompile(`/private/`)}}
	urls := []string{home, home + "a", home + "b", home + "private/c", "http://other.org/d", "http://example.com:8080/e", home + "f",
		"HTTP://EXAMPLE.com:80/a", home + "b#top"} // not normalized: known only once normalized
	for round := range 20 {
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		cachedDB, freshDB, guessDB, guessLongDB := openDB(t), openDB(t), openDB(t), openDB(t)
		cached, _ := newScheduler(t, cachedDB, policy)
		guessing := policy
		guessing.GuessRuledOutNew = true
		guessLong, _ := newScheduler(t, guessLongDB, guessing)
		for i := range 200 {
			u := urls[rng.IntN(len(urls))]
			ev := link(u, rng.IntN(6))
			switch r := rng.IntN(20); {
			case r == 0:
				ev = seed(u)
			case r == 1:
				ev.EnqueueType = crawl.EnqueueForced
			case r == 2:
				ev.EnqueueType = crawl.EnqueueReenqueued
			case r == 3:
				ev.Overflow = true
			case r == 4:
				// Another scheduler admits the URL from a seed's page (its
				// hops go down, a filter may lift); a third crawls it.
				for _, db := range []*sqlite.DB{cachedDB, freshDB, guessDB, guessLongDB} {
					other, _ := newScheduler(t, db, policy)
					if _, err := other.Admit(ctx, link(u, 1)); err != nil {
						t.Fatal(err)
					}
				}
				continue
			case r == 5:
				for _, db := range []*sqlite.DB{cachedDB, freshDB, guessDB, guessLongDB} {
					if c, err := db.GetCandidate(ctx, u); err == nil && c.State == crawl.StateDue {
						setState(t, db, u, crawl.StateCrawled, 0)
					}
				}
				continue
			}
			fresh, _ := newScheduler(t, freshDB, policy)
			want, werr := fresh.Admit(ctx, ev)
			got, gerr := cached.Admit(ctx, ev)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || got != want {
				t.Fatalf("round %d event %d %+v: got %s, %v; a scheduler reading the store: %s, %v", round, i, ev, got, gerr, want, werr)
			}
			// Guessing schedulers: a new one each event, and a long-lived one.
			guesser, _ := newScheduler(t, guessDB, guessing)
			for _, g := range []*Scheduler{guesser, guessLong} {
				var guessed Outcome
				ferr := g.AdmitEach(ctx, ev, func(_ crawl.EnqueueEvent, o Outcome) { guessed = o })
				if fmt.Sprint(ferr) != fmt.Sprint(werr) || guessed != want {
					t.Fatalf("round %d event %d %+v: guessing, got %s, %v; a scheduler reading the store: %s, %v", round, i, ev, guessed, ferr, want, werr)
				}
			}
			wc, _ := freshDB.GetCandidate(ctx, u)
			for name, db := range map[string]*sqlite.DB{"remembering": cachedDB, "guessing": guessDB, "guessing, long-lived": guessLongDB} {
				if c, _ := db.GetCandidate(ctx, u); !reflect.DeepEqual(c, wc) {
					t.Fatalf("round %d event %d %+v: %s, candidate\n%+v\nwant\n%+v", round, i, ev, name, c, wc)
				}
			}
		}
	}
}
