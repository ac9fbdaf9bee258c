package schedule

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
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
