package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// recSender records the bodies sent to it, and fails while err is set.
type recSender struct {
	mu     sync.Mutex
	bodies [][]byte
	calls  int
	err    error
}

func (r *recSender) Send(_ context.Context, bodies ...[]byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if r.err != nil {
		return r.err
	}
	for _, b := range bodies {
		r.bodies = append(r.bodies, append([]byte(nil), b...))
	}
	return nil
}

// tasks decodes every body sent so far as a fetch task.
func (r *recSender) tasks(t *testing.T) []crawl.FetchTask {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []crawl.FetchTask{}
	for _, b := range r.bodies {
		var ft crawl.FetchTask
		if err := json.Unmarshal(b, &ft); err != nil {
			t.Fatalf("sent body %q is not a fetch task: %v", b, err)
		}
		out = append(out, ft)
	}
	return out
}

var testNow = time.Unix(1700000000, 0)

func openDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "crawl.db"))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newScheduler returns a scheduler over a fresh database whose clock
// stands at testNow.
func newScheduler(t *testing.T, store Store, p Policy) (*Scheduler, *recSender) {
	t.Helper()
	snd := &recSender{}
	s := New(store, snd, p, slog.New(slog.DiscardHandler))
	s.now = func() time.Time { return testNow }
	return s, snd
}

func noLimit() Policy { return Policy{MaxDepth: -1} }

func ptr[T any](v T) *T { return &v }

func mustGet(t *testing.T, db *sqlite.DB, u string) crawl.Candidate {
	t.Helper()
	c, err := db.GetCandidate(context.Background(), u)
	if err != nil {
		t.Fatalf("get candidate %s: %v", u, err)
	}
	return c
}

func candidates(t *testing.T, db *sqlite.DB) int {
	t.Helper()
	var n int
	if err := db.SQL().QueryRow(`SELECT count(*) FROM crawl_candidate`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// setState moves a stored candidate to a state, as the fetch stage would.
func setState(t *testing.T, db *sqlite.DB, u string, st crawl.CandidateState, due int64) {
	t.Helper()
	c := mustGet(t, db, u)
	c.State, c.DueAt = st, due
	if st == crawl.StateCrawled {
		at, code := testNow.Unix()-3600, crawl.ExitComplete
		c.LastCrawlTime, c.LastCrawlExitCode = &at, &code
	}
	if st == crawl.StateQueued {
		c.CrawlUUID, c.QueuedAt = uuid.NewString(), testNow.Unix()
	}
	if err := db.PutCandidate(context.Background(), c); err != nil {
		t.Fatalf("set state of %s: %v", u, err)
	}
}

const (
	home  = "http://example.com/"
	other = "http://other.org/page"
)

func seed(u string) crawl.EnqueueEvent { return crawl.EnqueueEvent{URL: u, Seed: true} }

// longURL returns a normalized URL of n bytes on home's host.
func longURL(n int) string { return home + strings.Repeat("a", n-len(home)) }
func link(u string, hops int) crawl.EnqueueEvent {
	return crawl.EnqueueEvent{URL: u, Parent: home, Hops: hops}
}

func TestAdmit(t *testing.T) {
	now := testNow.Unix()
	type candWant struct {
		url    string
		state  crawl.CandidateState
		exit   *crawl.ExitCode // nil: no exit code
		hops   int
		typ    crawl.CrawlType
		parent string
	}
	tests := []struct {
		name    string
		policy  Policy
		before  []crawl.EnqueueEvent
		setup   func(t *testing.T, db *sqlite.DB)
		ev      crawl.EnqueueEvent
		want    Outcome
		errKind crawl.Kind // set: Admit must fail with this kind
		cand    *candWant  // the candidate Admit leaves
		version int64      // if set, the candidate's expected version (1: untouched since insert)
		vurl    string     // whose version to check when cand is nil
		scope   map[string]bool
		absent  []string // URLs that must not be candidates
		total   int      // if set, how many candidates there are
	}{
		{
			name:   "normalizes a user's URL",
			policy: noLimit(),
			ev:     crawl.EnqueueEvent{URL: "HTTP://Example.COM:80/a/../b#x"},
			want:   Admitted,
			cand:   &candWant{url: "http://example.com/b", state: crawl.StateDue, typ: crawl.CrawlFirst},
			scope:  map[string]bool{"example.com": true},
			absent: []string{"HTTP://Example.COM:80/a/../b#x", "http://example.com/a/../b"},
			total:  1,
		},
		{
			name:   "seed flag adds the host to scope",
			policy: noLimit(),
			ev:     crawl.EnqueueEvent{URL: "https://seed.example:8443/start", Seed: true, Hops: 2},
			want:   Admitted,
			cand:   &candWant{url: "https://seed.example:8443/start", state: crawl.StateDue, hops: 2, typ: crawl.CrawlFirst},
			scope:  map[string]bool{"seed.example:8443": true, "seed.example": false},
		},
		{
			name:   "site adds its host too",
			policy: noLimit(),
			ev:     crawl.EnqueueEvent{URL: home, Site: "Docs.Example.com"},
			want:   Admitted,
			scope:  map[string]bool{"example.com": true, "docs.example.com": true},
		},
		{
			name:    "invalid site",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: home, Site: "exa mple.com"},
			errKind: crawl.KindInvalid,
		},
		{
			name:   "a user's URL with hops is no seed",
			policy: noLimit(),
			ev:     crawl.EnqueueEvent{URL: "http://example.net/x", Hops: 1},
			want:   Filtered,
			cand:   &candWant{url: "http://example.net/x", state: crawl.StateFiltered, exit: ptr(crawl.ExitOutOfScope), hops: 1, typ: crawl.CrawlFirst},
			scope:  map[string]bool{"example.net": false},
		},
		{
			name:   "discovered link on another host is out of scope",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link(other, 1),
			want:   Filtered,
			cand:   &candWant{url: other, state: crawl.StateFiltered, exit: ptr(crawl.ExitOutOfScope), hops: 1, typ: crawl.CrawlFirst, parent: home},
			scope:  map[string]bool{"other.org": false},
		},
		{
			name:   "discovered link at hop 0 adds no scope",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link(other, 0),
			want:   Filtered,
			scope:  map[string]bool{"other.org": false},
		},
		{
			name:   "relative link in a page is an invalid URL (the parser resolves links)",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     crawl.EnqueueEvent{URL: "/next", Parent: home, Hops: 1},
			want:   Filtered,
			cand:   &candWant{url: "/next", state: crawl.StateFiltered, exit: ptr(crawl.ExitInvalidURL), hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "discovered absolute link in scope",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     crawl.EnqueueEvent{URL: "http://example.com/next", Parent: home, Hops: 1, Priority: 3, MaxDepth: ptr(7)},
			want:   Admitted,
			cand:   &candWant{url: "http://example.com/next", state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "too deep",
			policy: Policy{MaxDepth: 1},
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("http://example.com/deep", 2),
			want:   Filtered,
			cand:   &candWant{url: "http://example.com/deep", state: crawl.StateFiltered, exit: ptr(crawl.ExitTooDeep), hops: 2, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "at max depth",
			policy: Policy{MaxDepth: 1},
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("http://example.com/deep", 1),
			want:   Admitted,
			cand:   &candWant{url: "http://example.com/deep", state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "event max_depth overrides the policy (tighter)",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     crawl.EnqueueEvent{URL: "http://example.com/d", Parent: home, Hops: 1, MaxDepth: ptr(0)},
			want:   Filtered,
			cand:   &candWant{url: "http://example.com/d", state: crawl.StateFiltered, exit: ptr(crawl.ExitTooDeep), hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "event max_depth overrides the policy (looser)",
			policy: Policy{MaxDepth: 0},
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     crawl.EnqueueEvent{URL: "http://example.com/d", Parent: home, Hops: 3, MaxDepth: ptr(5)},
			want:   Admitted,
		},
		{
			name:    "too deep, then found closer: admitted",
			policy:  Policy{MaxDepth: 1},
			before:  []crawl.EnqueueEvent{seed(home), link("http://example.com/x", 2)},
			ev:      link("http://example.com/x", 1),
			want:    Admitted,
			cand:    &candWant{url: "http://example.com/x", state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
			version: 2,
		},
		{
			name:    "too deep, found closer but still too deep",
			policy:  Policy{MaxDepth: 1},
			before:  []crawl.EnqueueEvent{seed(home), link("http://example.com/x", 4)},
			ev:      link("http://example.com/x", 3),
			want:    Filtered,
			cand:    &candWant{url: "http://example.com/x", state: crawl.StateFiltered, exit: ptr(crawl.ExitTooDeep), hops: 3, typ: crawl.CrawlFirst, parent: home},
			version: 2,
		},
		{
			name:    "too deep, found deeper",
			policy:  Policy{MaxDepth: 1},
			before:  []crawl.EnqueueEvent{seed(home), link("http://example.com/x", 2)},
			ev:      link("http://example.com/x", 5),
			want:    Deduped,
			cand:    &candWant{url: "http://example.com/x", state: crawl.StateFiltered, exit: ptr(crawl.ExitTooDeep), hops: 2, typ: crawl.CrawlFirst, parent: home},
			version: 1,
		},
		{
			name:   "include pattern not matched",
			policy: Policy{MaxDepth: -1, Include: []*regexp.Regexp{regexp.MustCompile(`^http://example\.com/docs/`)}},
			before: []crawl.EnqueueEvent{seed("http://example.com/docs/")},
			ev:     link("http://example.com/blog", 1),
			want:   Filtered,
			cand:   &candWant{url: "http://example.com/blog", state: crawl.StateFiltered, exit: ptr(crawl.ExitExcluded), hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "include pattern matched",
			policy: Policy{MaxDepth: -1, Include: []*regexp.Regexp{regexp.MustCompile(`^http://example\.com/docs/`)}},
			before: []crawl.EnqueueEvent{seed("http://example.com/docs/")},
			ev:     link("http://example.com/docs/page", 1),
			want:   Admitted,
		},
		{
			name:   "include pattern sees the normalized URL",
			policy: Policy{MaxDepth: -1, Include: []*regexp.Regexp{regexp.MustCompile(`^http://example\.com/docs/`)}},
			before: []crawl.EnqueueEvent{seed("http://example.com/docs/")},
			ev:     link("HTTP://EXAMPLE.com/docs/x/../page", 1),
			want:   Admitted,
			cand:   &candWant{url: "http://example.com/docs/page", state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "exclude pattern",
			policy: Policy{MaxDepth: -1, Exclude: []*regexp.Regexp{regexp.MustCompile(`\.pdf$`)}},
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("http://example.com/file.pdf", 1),
			want:   Filtered,
			cand:   &candWant{url: "http://example.com/file.pdf", state: crawl.StateFiltered, exit: ptr(crawl.ExitExcluded), hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "exclude wins over include",
			policy: Policy{MaxDepth: -1, Include: []*regexp.Regexp{regexp.MustCompile(`example`)}, Exclude: []*regexp.Regexp{regexp.MustCompile(`/private`)}},
			ev:     seed("http://example.com/private"),
			want:   Filtered,
			cand:   &candWant{url: "http://example.com/private", state: crawl.StateFiltered, exit: ptr(crawl.ExitExcluded), typ: crawl.CrawlFirst},
			scope:  map[string]bool{"example.com": true},
		},
		{
			name:   "link past the page's cap",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     crawl.EnqueueEvent{URL: "http://example.com/many", Parent: home, Hops: 1, Overflow: true},
			want:   Filtered,
			cand:   &candWant{url: "http://example.com/many", state: crawl.StateFiltered, exit: ptr(crawl.ExitTooManyURLs), hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "link past the page's cap, out of scope",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     crawl.EnqueueEvent{URL: other, Parent: home, Hops: 1, Overflow: true},
			want:   Filtered,
			cand:   &candWant{url: other, state: crawl.StateFiltered, exit: ptr(crawl.ExitOutOfScope), hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:    "link past one page's cap, found on another page within it",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home), {URL: "http://example.com/many", Parent: home, Hops: 1, Overflow: true}},
			ev:      crawl.EnqueueEvent{URL: "http://example.com/many", Parent: "http://example.com/other", Hops: 2},
			want:    Admitted,
			cand:    &candWant{url: "http://example.com/many", state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
			version: 2,
		},
		{
			name:    "duplicate enqueue",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home)},
			ev:      seed(home),
			want:    Deduped,
			cand:    &candWant{url: home, state: crawl.StateDue, typ: crawl.CrawlFirst},
			version: 1,
			total:   1,
		},
		{
			name:    "duplicate link, differently written",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home), link("http://example.com/a", 1)},
			ev:      link("http://EXAMPLE.com:80/a#frag", 1),
			want:    Deduped,
			version: 1,
			vurl:    "http://example.com/a",
			total:   2,
		},
		{
			name:    "duplicate found closer keeps the fewer hops",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home), link("http://example.com/a", 3)},
			ev:      link("http://example.com/a", 1),
			want:    Deduped,
			cand:    &candWant{url: "http://example.com/a", state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
			version: 2,
		},
		{
			name:   "forced on a crawled candidate",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			setup:  func(t *testing.T, db *sqlite.DB) { setState(t, db, home, crawl.StateCrawled, 0) },
			ev:     crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueForced},
			want:   Requeued,
			cand:   &candWant{url: home, state: crawl.StateDue, exit: ptr(crawl.ExitComplete), typ: crawl.CrawlForced},
		},
		{
			name:   "reenqueued on a crawled candidate",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			setup:  func(t *testing.T, db *sqlite.DB) { setState(t, db, home, crawl.StateCrawled, 0) },
			ev:     crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueReenqueued},
			want:   Requeued,
			cand:   &candWant{url: home, state: crawl.StateDue, exit: ptr(crawl.ExitComplete), typ: crawl.CrawlReenqueued},
		},
		{
			name:   "forced, crawled since it was asked for (the event delivered again)",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			setup: func(t *testing.T, db *sqlite.DB) {
				setState(t, db, home, crawl.StateCrawled, 0) // crawled at now-3600
				setState(t, db, home, crawl.StateDue, now+86400)
			},
			ev:      crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueForced, RequestedAt: now - 3601},
			want:    Deduped,
			version: 3, // the seed's and the two setStates': not written
			vurl:    home,
		},
		{
			name:   "reenqueued, crawled in the second it was asked for",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			setup:  func(t *testing.T, db *sqlite.DB) { setState(t, db, home, crawl.StateCrawled, 0) },
			ev:     crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueReenqueued, RequestedAt: now - 3600},
			want:   Requeued,
			cand:   &candWant{url: home, state: crawl.StateDue, exit: ptr(crawl.ExitComplete), typ: crawl.CrawlReenqueued},
		},
		{
			name:   "forced, asked for after the last crawl",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			setup: func(t *testing.T, db *sqlite.DB) {
				setState(t, db, home, crawl.StateCrawled, 0)
				setState(t, db, home, crawl.StateDue, now+86400)
			},
			ev:   crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueForced, RequestedAt: now - 60},
			want: Requeued,
			cand: &candWant{url: home, state: crawl.StateDue, exit: ptr(crawl.ExitComplete), typ: crawl.CrawlForced},
		},
		{
			name:   "forced on a candidate due later (scheduled recrawl)",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			setup:  func(t *testing.T, db *sqlite.DB) { setState(t, db, home, crawl.StateDue, now+86400) },
			ev:     crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueForced},
			want:   Requeued,
			cand:   &candWant{url: home, state: crawl.StateDue, typ: crawl.CrawlForced},
		},
		{
			name:    "forced on a queued candidate",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home)},
			setup:   func(t *testing.T, db *sqlite.DB) { setState(t, db, home, crawl.StateQueued, now) },
			ev:      crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueForced},
			want:    Deduped,
			cand:    &candWant{url: home, state: crawl.StateQueued, typ: crawl.CrawlFirst},
			version: 2,
		},
		{
			name:    "forced on a candidate already due",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home)},
			ev:      crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueReenqueued},
			want:    Deduped,
			version: 1,
			vurl:    home,
		},
		{
			name:   "forced, new URL",
			policy: noLimit(),
			ev:     crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueForced},
			want:   Admitted,
			cand:   &candWant{url: home, state: crawl.StateDue, typ: crawl.CrawlForced},
		},
		{
			name:   "KillOutOfScope: a discovered link on another host is not recorded",
			policy: Policy{MaxDepth: -1, KillOutOfScope: true},
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link(other, 1),
			want:   Killed,
			absent: []string{other},
			total:  1,
		},
		{
			name:   "KillOutOfScope: a user's URL off scope is still recorded",
			policy: Policy{MaxDepth: -1, KillOutOfScope: true},
			ev:     crawl.EnqueueEvent{URL: "http://example.net/x", Hops: 1},
			want:   Filtered,
			cand:   &candWant{url: "http://example.net/x", state: crawl.StateFiltered, exit: ptr(crawl.ExitOutOfScope), hops: 1, typ: crawl.CrawlFirst},
		},
		{
			name:   "KillOutOfScope: a link killed, then found once its host is seeded, is admitted",
			policy: Policy{MaxDepth: -1, KillOutOfScope: true},
			before: []crawl.EnqueueEvent{seed(home), link(other, 1), seed("http://other.org/")},
			ev:     link(other, 1),
			want:   Admitted,
			cand:   &candWant{url: other, state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "KillOutOfScope: an in-scope link too deep is still filtered",
			policy: Policy{MaxDepth: 0, KillOutOfScope: true},
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link(home+"deep", 1),
			want:   Filtered,
			cand:   &candWant{url: home + "deep", state: crawl.StateFiltered, exit: ptr(crawl.ExitTooDeep), hops: 1, typ: crawl.CrawlFirst, parent: home},
		},
		{
			name:   "reenqueued, new URL, is a first crawl",
			policy: noLimit(),
			ev:     crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueReenqueued},
			want:   Admitted,
			cand:   &candWant{url: home, state: crawl.StateDue, typ: crawl.CrawlFirst},
		},
		{
			name:    "forced on an out-of-scope link stays filtered",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home), link(other, 1)},
			ev:      crawl.EnqueueEvent{URL: other, Parent: home, Hops: 1, EnqueueType: crawl.EnqueueForced},
			want:    Deduped,
			version: 1,
			vurl:    other,
		},
		{
			name:    "out-of-scope candidate admitted once its host is seeded",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home), link(other, 1), seed("http://other.org/")},
			ev:      link(other, 1),
			want:    Admitted,
			cand:    &candWant{url: other, state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
			version: 2,
		},
		{
			name:    "invalid URL from a user",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: "http://exa mple.com/"},
			errKind: crawl.KindInvalid,
			total:   0,
		},
		{
			name:    "relative URL from a user",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: "/just/a/path"},
			errKind: crawl.KindInvalid,
			total:   0,
		},
		{
			name:    "mailto from a user",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: "mailto:someone@example.com"},
			errKind: crawl.KindInvalid,
			total:   0,
		},
		{
			name:   "invalid URL in a page",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("http://exa mple.com/", 1),
			want:   Filtered,
			cand:   &candWant{url: "http://exa mple.com/", state: crawl.StateFiltered, exit: ptr(crawl.ExitInvalidURL), hops: 1, typ: crawl.CrawlFirst, parent: home},
			total:  2,
		},
		{
			name:   "a link as long as a candidate's URL may be",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link(longURL(crawl.MaxKeptURLLength), 1),
			want:   Admitted,
			cand:   &candWant{url: longURL(crawl.MaxKeptURLLength), state: crawl.StateDue, hops: 1, typ: crawl.CrawlFirst, parent: home},
			total:  2,
		},
		{
			name:   "a link a byte longer is not kept",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link(longURL(crawl.MaxKeptURLLength+1), 1),
			want:   TooLong,
			absent: []string{longURL(crawl.MaxKeptURLLength + 1)},
			total:  1,
		},
		{
			// 800 bytes as written, 2,400 percent-encoded.
			name:   "a link that outgrows the bound once normalized is not kept",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link(home+strings.Repeat("é", 400), 1),
			want:   TooLong,
			total:  1,
		},
		{
			name:   "an invalid URL in a page too long to keep",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("http://exa mple.com/"+strings.Repeat("a", crawl.MaxKeptURLLength), 1),
			want:   TooLong,
			total:  1,
		},
		{
			name:   "a link whose host name is longer than DNS resolves",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("http://"+strings.Repeat("a", 1100)+".example:8080/", 1),
			want:   Filtered,
			cand: &candWant{url: "http://" + strings.Repeat("a", 1100) + ".example:8080/", state: crawl.StateFiltered,
				exit: ptr(crawl.ExitInvalidURL), hops: 1, typ: crawl.CrawlFirst, parent: home},
			total: 2,
		},
		{
			// 253 bytes, and the trailing dot of a fully qualified name.
			name:   "a link whose host name is as long as DNS resolves",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("http://"+strings.Repeat("a.", 123)+"example.:8080/", 1),
			want:   Filtered, // out of scope, and recorded
			cand: &candWant{url: "http://" + strings.Repeat("a.", 123) + "example.:8080/", state: crawl.StateFiltered,
				exit: ptr(crawl.ExitOutOfScope), hops: 1, typ: crawl.CrawlFirst, parent: home},
			total: 2,
		},
		{
			name:    "a user's URL whose host name is longer than DNS resolves",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: "http://" + strings.Repeat("a", 300) + ".example/"},
			errKind: crawl.KindInvalid,
			total:   0,
		},
		{
			name:    "a user's URL too long to keep",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: longURL(crawl.MaxKeptURLLength + 1)},
			errKind: crawl.KindInvalid,
			total:   0,
		},
		{
			name:    "invalid URL in a page, found again",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home), link("http://exa mple.com/", 1)},
			ev:      link("http://exa mple.com/", 1),
			want:    Deduped,
			version: 1,
			vurl:    "http://exa mple.com/",
			total:   2,
		},
		{
			name:   "mailto in a page",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("mailto:someone@example.com", 1),
			want:   Killed,
			absent: []string{"mailto:someone@example.com"},
			total:  1,
		},
		{
			name:   "javascript in a page",
			policy: noLimit(),
			before: []crawl.EnqueueEvent{seed(home)},
			ev:     link("javascript:void(0)", 1),
			want:   Killed,
			absent: []string{"javascript:void(0)"},
			total:  1,
		},
		{
			name:   "status of an unknown URL",
			policy: noLimit(),
			ev:     crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueStatus},
			want:   StatusAsk,
			absent: []string{home},
			scope:  map[string]bool{"example.com": false},
			total:  0,
		},
		{
			name:    "status of a known URL",
			policy:  noLimit(),
			before:  []crawl.EnqueueEvent{seed(home)},
			ev:      crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueStatus},
			want:    StatusAsk,
			version: 1,
			vurl:    home,
		},
		{
			name:    "export",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: home, EnqueueType: crawl.EnqueueExport},
			errKind: crawl.KindInvalid,
			absent:  []string{home},
			total:   0,
		},
		{
			name:    "invalid event",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: home, Hops: -1},
			errKind: crawl.KindInvalid,
			total:   0,
		},
		{
			name:    "unknown enqueue type",
			policy:  noLimit(),
			ev:      crawl.EnqueueEvent{URL: home, EnqueueType: "later"},
			errKind: crawl.KindInvalid,
			total:   0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			s, snd := newScheduler(t, db, tt.policy)
			for _, ev := range tt.before {
				if _, err := s.Admit(ctx, ev); err != nil {
					t.Fatalf("admit %+v: %v", ev, err)
				}
			}
			if tt.setup != nil {
				tt.setup(t, db)
			}
			got, err := s.Admit(ctx, tt.ev)
			if tt.errKind != crawl.KindOther {
				if err == nil {
					t.Fatalf("Admit = %q, nil; want a %v error", got, tt.errKind)
				}
				if k := crawl.KindOf(err); k != tt.errKind {
					t.Errorf("KindOf(%v) = %v, want %v", err, k, tt.errKind)
				}
				if crawl.IsTransient(err) {
					t.Errorf("%v is transient: it would be retried forever", err)
				}
			} else {
				if err != nil {
					t.Fatalf("Admit: %v", err)
				}
				if got != tt.want {
					t.Errorf("Admit = %q, want %q", got, tt.want)
				}
			}
			if w := tt.cand; w != nil {
				c := mustGet(t, db, w.url)
				if c.State != w.state || c.Hops != w.hops || c.CrawlType != w.typ || c.Parent != w.parent ||
					!reflect.DeepEqual(c.LastCrawlExitCode, w.exit) {
					t.Errorf("candidate %s = state %s hops %d type %v parent %q exit %v; want state %s hops %d type %v parent %q exit %v",
						w.url, c.State, c.Hops, c.CrawlType, c.Parent, fmtExit(c.LastCrawlExitCode),
						w.state, w.hops, w.typ, w.parent, fmtExit(w.exit))
				}
				if c.State == crawl.StateDue && c.DueAt != now {
					t.Errorf("due at %d, want now (%d)", c.DueAt, now)
				}
			}
			if tt.version != 0 {
				u := tt.vurl
				if tt.cand != nil {
					u = tt.cand.url
				}
				if c := mustGet(t, db, u); c.Version != tt.version {
					t.Errorf("candidate %s version %d, want %d", u, c.Version, tt.version)
				}
			}
			for h, want := range tt.scope {
				in, err := db.InScope(ctx, h)
				if err != nil {
					t.Fatal(err)
				}
				if in != want {
					t.Errorf("InScope(%s) = %v, want %v", h, in, want)
				}
			}
			for _, u := range tt.absent {
				if _, err := db.GetCandidate(ctx, u); !errors.Is(err, crawl.ErrNotFound) {
					t.Errorf("%s is a candidate (%v), want none", u, err)
				}
			}
			if tt.total != 0 || tt.errKind != crawl.KindOther {
				if n := candidates(t, db); n != tt.total {
					t.Errorf("%d candidates, want %d", n, tt.total)
				}
			}
			if snd.calls != 0 {
				t.Errorf("Admit sent %d fetch batches; only Release sends", snd.calls)
			}
		})
	}
}

func fmtExit(c *crawl.ExitCode) string {
	if c == nil {
		return "<nil>"
	}
	return c.String()
}

// conflictStore is the real store with a concurrent writer: the first
// times a candidate is read (once, or lose times) it is updated behind
// the reader's back, its priority raised by 10 each time.
type conflictStore struct {
	*sqlite.DB
	mu   sync.Mutex
	lose int
	hit  bool
}

func (c *conflictStore) GetCandidate(ctx context.Context, u string) (crawl.Candidate, error) {
	cand, err := c.DB.GetCandidate(ctx, u)
	if err != nil {
		return cand, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lose > 0 {
		c.lose--
		other := cand
		other.Priority += 10
		if perr := c.DB.PutCandidate(ctx, other); perr == nil {
			c.hit = true
		}
	}
	return cand, nil
}

// lostWriteScheduler returns a database holding the home page and
// http://example.com/a at 3 hops, and a scheduler over it whose first
// read of a candidate is followed by another writer's update.
func lostWriteScheduler(t *testing.T) (*sqlite.DB, *conflictStore, *Scheduler) {
	t.Helper()
	db := openDB(t)
	plain, _ := newScheduler(t, db, noLimit())
	for _, ev := range []crawl.EnqueueEvent{seed(home), link("http://example.com/a", 3)} {
		if _, err := plain.Admit(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	store := &conflictStore{DB: db, lose: 1}
	s, _ := newScheduler(t, store, noLimit())
	return db, store, s
}

func TestAdmitRetriesALostWrite(t *testing.T) {
	ctx := context.Background()
	db, store, s := lostWriteScheduler(t)
	out, err := s.Admit(ctx, link("http://example.com/a", 1))
	if err != nil {
		t.Fatalf("Admit: %v", err)
	}
	if !store.hit {
		t.Fatal("the concurrent write did not happen")
	}
	c := mustGet(t, db, "http://example.com/a")
	if out != Deduped || c.Hops != 1 || c.Priority != 10 || c.Version != 3 {
		t.Errorf("Admit = %q; candidate hops %d priority %d version %d; want deduped, hops 1, the other writer's priority 10, version 3",
			out, c.Hops, c.Priority, c.Version)
	}
}

// TestAdmitEachRetriesALostWrite: the candidates of one event are written
// together; the one whose write lost is decided again and written with
// the others that lost, and if it loses again, admitted on its own; a
// URL twice in the event is written once.
func TestAdmitEachRetriesALostWrite(t *testing.T) {
	for lose := 1; lose <= 2; lose++ {
		t.Run(fmt.Sprintf("lost %d times", lose), func(t *testing.T) {
			ctx := context.Background()
			db, store, s := lostWriteScheduler(t)
			store.lose = lose
			ev := crawl.EnqueueEvent{Parent: home, Hops: 1, URLs: []string{
				"http://example.com/a", "http://example.com/b", "http://example.com/b#top", "http://example.com/c"}}
			var got []string
			if err := s.AdmitEach(ctx, ev, func(e crawl.EnqueueEvent, out Outcome) { got = append(got, e.URL+" "+string(out)) }); err != nil {
				t.Fatalf("AdmitEach: %v", err)
			}
			if !store.hit || store.lose != 0 {
				t.Fatalf("the concurrent writes did not all happen (%d left)", store.lose)
			}
			want := []string{"http://example.com/a deduped", "http://example.com/b admitted", "http://example.com/b#top deduped", "http://example.com/c admitted"}
			if !slices.Equal(got, want) {
				t.Errorf("outcomes %q, want %q (in the event's order)", got, want)
			}
			if c := mustGet(t, db, "http://example.com/a"); c.Hops != 1 || c.Priority != 10*lose || c.Version != int64(2+lose) {
				t.Errorf("a: hops %d priority %d version %d; want hops 1, the other writer's priority %d, version %d", c.Hops, c.Priority, c.Version, 10*lose, 2+lose)
			}
			for _, u := range []string{"http://example.com/b", "http://example.com/c"} {
				if c := mustGet(t, db, u); c.Version != 1 || c.Hops != 1 || c.State != crawl.StateDue {
					t.Errorf("%s: %+v, want due at hop 1, version 1", u, c)
				}
			}
		})
	}
}

// failingSecondRead is a conflictStore whose second read of url fails.
type failingSecondRead struct {
	*conflictStore
	url   string
	reads int
}

var errRead = errors.New("read failed")

func (f *failingSecondRead) GetCandidate(ctx context.Context, u string) (crawl.Candidate, error) {
	if u == f.url {
		if f.reads++; f.reads == 2 {
			return crawl.Candidate{}, errRead
		}
	}
	return f.conflictStore.GetCandidate(ctx, u)
}

// TestAdmitEachSecondPassError: a URL whose write lost and whose second
// read then fails stops the event with that error, after the outcomes of
// the events before it are told; the others' writes stand.
func TestAdmitEachSecondPassError(t *testing.T) {
	ctx := context.Background()
	db, store, _ := lostWriteScheduler(t)
	s, _ := newScheduler(t, &failingSecondRead{conflictStore: store, url: "http://example.com/a"}, noLimit())
	ev := crawl.EnqueueEvent{Parent: home, Hops: 1, URLs: []string{"http://example.com/b", "http://example.com/a", "http://example.com/c"}}
	var got []string
	err := s.AdmitEach(ctx, ev, func(e crawl.EnqueueEvent, out Outcome) { got = append(got, e.URL+" "+string(out)) })
	if !errors.Is(err, errRead) {
		t.Fatalf("AdmitEach = %v, want the failed read", err)
	}
	if want := []string{"http://example.com/b admitted"}; !slices.Equal(got, want) {
		t.Errorf("outcomes %q, want %q", got, want)
	}
	for _, u := range []string{"http://example.com/b", "http://example.com/c"} {
		if c := mustGet(t, db, u); c.State != crawl.StateDue {
			t.Errorf("%s: %+v, want written due", u, c)
		}
	}
}

// admitAll admits events with s and fails the test on an error.
func admitAll(t *testing.T, s *Scheduler, evs ...crawl.EnqueueEvent) {
	t.Helper()
	for _, ev := range evs {
		if _, err := s.Admit(context.Background(), ev); err != nil {
			t.Fatalf("admit %+v: %v", ev, err)
		}
	}
}

func TestRelease(t *testing.T) {
	ctx := context.Background()
	now := testNow.Unix()
	type wantTask struct {
		url  string
		typ  crawl.CrawlType
		hops int
		max  *int
	}
	tests := []struct {
		name      string
		events    []crawl.EnqueueEvent
		setup     func(t *testing.T, db *sqlite.DB)
		limit     int
		want      []wantTask // in the order sent
		remaining int        // what a second release sends
	}{
		{
			name: "every due candidate, highest priority first",
			events: []crawl.EnqueueEvent{
				seed(home),
				{URL: "http://example.com/urgent", Parent: home, Hops: 1, Priority: 5, MaxDepth: ptr(3)},
				{URL: "http://example.com/forced", EnqueueType: crawl.EnqueueForced, Priority: 1},
				link(other, 1), // filtered: never released
			},
			limit: 10,
			want: []wantTask{
				{"http://example.com/urgent", crawl.CrawlFirst, 1, ptr(3)},
				{"http://example.com/forced", crawl.CrawlForced, 0, nil},
				{home, crawl.CrawlFirst, 0, nil},
			},
		},
		{
			name:      "limit",
			events:    []crawl.EnqueueEvent{seed(home), {URL: "http://example.com/b", Parent: home, Hops: 1, Priority: 2}, link("http://example.com/c", 1)},
			limit:     1,
			want:      []wantTask{{"http://example.com/b", crawl.CrawlFirst, 1, nil}},
			remaining: 2,
		},
		{
			name:      "zero limit",
			events:    []crawl.EnqueueEvent{seed(home)},
			limit:     0,
			want:      []wantTask{},
			remaining: 1,
		},
		{
			name:   "not yet due, crawled and queued candidates stay",
			events: []crawl.EnqueueEvent{seed(home), link("http://example.com/later", 1), link("http://example.com/done", 1), link("http://example.com/q", 1)},
			setup: func(t *testing.T, db *sqlite.DB) {
				setState(t, db, "http://example.com/later", crawl.StateDue, now+1)
				setState(t, db, "http://example.com/done", crawl.StateCrawled, 0)
				setState(t, db, "http://example.com/q", crawl.StateQueued, now)
			},
			limit: 10,
			want:  []wantTask{{home, crawl.CrawlFirst, 0, nil}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			s, snd := newScheduler(t, db, noLimit())
			admitAll(t, s, tt.events...)
			if tt.setup != nil {
				tt.setup(t, db)
			}
			n, err := s.Release(ctx, tt.limit)
			if err != nil {
				t.Fatalf("Release: %v", err)
			}
			tasks := snd.tasks(t)
			if n != len(tt.want) || len(tasks) != len(tt.want) {
				t.Fatalf("Release = %d and sent %d tasks, want %d", n, len(tasks), len(tt.want))
			}
			seen, first := map[string]bool{}, map[string]bool{}
			for i, ft := range tasks {
				first[ft.URL] = true
				w := tt.want[i]
				if ft.URL != w.url || ft.CrawlType != w.typ || ft.Hops != w.hops || !reflect.DeepEqual(ft.MaxDepth, w.max) {
					t.Errorf("task %d = %+v, want %+v", i, ft, w)
				}
				if _, err := uuid.Parse(ft.CrawlUUID); err != nil || seen[ft.CrawlUUID] {
					t.Errorf("task %d crawl_uuid %q: not a fresh uuid", i, ft.CrawlUUID)
				}
				seen[ft.CrawlUUID] = true
				c := mustGet(t, db, ft.URL)
				if c.State != crawl.StateQueued || c.CrawlUUID != ft.CrawlUUID || c.QueuedAt != now || c.CrawlType != w.typ {
					t.Errorf("candidate %s after release: state %s uuid %q queued %d type %v", ft.URL, c.State, c.CrawlUUID, c.QueuedAt, c.CrawlType)
				}
			}

			// Released candidates are not released again: a second
			// release sends only the due ones the first left, a third none.
			for i, want := range []int{tt.remaining, 0} {
				before := len(snd.tasks(t))
				n, err := s.Release(ctx, 10)
				if err != nil {
					t.Fatal(err)
				}
				again := snd.tasks(t)[before:]
				if n != want || len(again) != want {
					t.Errorf("release %d: %d, sent %d tasks; want %d", i+2, n, len(again), want)
				}
				for _, ft := range again {
					if seen[ft.CrawlUUID] || first[ft.URL] {
						t.Errorf("release %d sent %s again", i+2, ft.URL)
					}
				}
			}
		})
	}
}

func TestReleaseSkipsACandidateChangedMeanwhile(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s, _ := newScheduler(t, db, noLimit())
	admitAll(t, s, seed(home), link("http://example.com/a", 1))
	store := &dueConflictStore{DB: db, victim: "http://example.com/a"}
	rs, snd := newScheduler(t, store, noLimit())
	n, err := rs.Release(ctx, 10)
	if err != nil {
		t.Fatalf("Release: %v", err)
	}
	tasks := snd.tasks(t)
	if n != 1 || len(tasks) != 1 || tasks[0].URL != home {
		t.Fatalf("Release = %d, tasks %+v; want only %s", n, tasks, home)
	}
	if c := mustGet(t, db, "http://example.com/a"); c.State != crawl.StateDue || c.CrawlUUID != "" {
		t.Errorf("changed candidate was released anyway: %+v", c)
	}
	// The next release picks it up.
	if n, err := rs.Release(ctx, 10); err != nil || n != 1 {
		t.Errorf("next Release = %d, %v; want 1", n, err)
	}
}

// dueConflictStore changes victim behind the scheduler's back right
// after DueCandidates has read it.
type dueConflictStore struct {
	*sqlite.DB
	victim string
	done   bool
}

func (d *dueConflictStore) DueCandidates(ctx context.Context, now int64, limit int) ([]crawl.Candidate, error) {
	cs, err := d.DB.DueCandidates(ctx, now, limit)
	if err != nil || d.done {
		return cs, err
	}
	d.done = true
	c, err := d.DB.GetCandidate(ctx, d.victim)
	if err != nil {
		return nil, err
	}
	c.Priority--
	return cs, d.DB.PutCandidate(ctx, c)
}

func TestRequeue(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name       string
		staleAfter time.Duration
		advance    time.Duration // how far the clock moves between release and requeue
		want       int
	}{
		{"everything queued, at once", 0, 0, 2},
		{"not stale yet", time.Hour, 30 * time.Minute, 0},
		{"stale", time.Hour, 2 * time.Hour, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			s, snd := newScheduler(t, db, noLimit())
			admitAll(t, s, seed(home), link("http://example.com/a", 1), link("http://example.com/crawled", 1))
			if n, err := s.Release(ctx, 10); err != nil || n != 3 {
				t.Fatalf("Release = %d, %v", n, err)
			}
			first := map[string]string{}
			for _, ft := range snd.tasks(t) {
				first[ft.URL] = ft.CrawlUUID
			}
			setState(t, db, "http://example.com/crawled", crawl.StateCrawled, 0)
			crawledBefore := mustGet(t, db, "http://example.com/crawled")

			later := testNow.Add(tt.advance)
			s.now = func() time.Time { return later }
			n, err := s.Requeue(ctx, tt.staleAfter, 10)
			if err != nil {
				t.Fatalf("Requeue: %v", err)
			}
			tasks := snd.tasks(t)[3:]
			if n != tt.want || len(tasks) != tt.want {
				t.Fatalf("Requeue = %d, sent %d; want %d", n, len(tasks), tt.want)
			}
			for _, ft := range tasks {
				if ft.URL == "http://example.com/crawled" {
					t.Errorf("a crawled candidate was requeued")
				}
				if ft.CrawlUUID == first[ft.URL] || ft.CrawlUUID == "" {
					t.Errorf("%s requeued as crawl %q, want a new crawl_uuid (was %q)", ft.URL, ft.CrawlUUID, first[ft.URL])
				}
				c := mustGet(t, db, ft.URL)
				if c.State != crawl.StateQueued || c.CrawlUUID != ft.CrawlUUID || c.QueuedAt != later.Unix() {
					t.Errorf("candidate %s after requeue: %+v", ft.URL, c)
				}
			}
			if c := mustGet(t, db, "http://example.com/crawled"); !reflect.DeepEqual(c, crawledBefore) {
				t.Errorf("crawled candidate changed: %+v", c)
			}
		})
	}
}

func TestReleaseLostSendIsRequeued(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s, snd := newScheduler(t, db, noLimit())
	admitAll(t, s, seed(home))
	snd.err = errors.New("queue unavailable")
	if _, err := s.Release(ctx, 10); err == nil {
		t.Fatal("Release with a failing queue succeeded")
	}
	lost := mustGet(t, db, home)
	if lost.State != crawl.StateQueued {
		t.Fatalf("state after a lost send = %s", lost.State)
	}
	snd.err = nil
	if n, err := s.Release(ctx, 10); err != nil || n != 0 {
		t.Errorf("Release = %d, %v; a queued candidate is not due", n, err)
	}
	n, err := s.Requeue(ctx, 0, 10)
	if err != nil || n != 1 {
		t.Fatalf("Requeue = %d, %v; want 1", n, err)
	}
	tasks := snd.tasks(t)
	if len(tasks) != 1 || tasks[0].URL != home || tasks[0].CrawlUUID == lost.CrawlUUID {
		t.Errorf("requeued tasks %+v; want %s with a crawl_uuid other than %s", tasks, home, lost.CrawlUUID)
	}
}

// TestReleaseOnAdmit: under ReleaseOnAdmit a page's new links are written
// once, as queued, and their fetch tasks go out in one Send; a link
// already known and not due is left as it is, and a link admitted again
// is deduped without a second task. A send that fails leaves the new
// candidates queued, for Requeue.
func TestReleaseOnAdmit(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := noLimit()
	p.ReleaseOnAdmit = true
	s, snd := newScheduler(t, db, p)
	admitAll(t, s, seed(home))
	if tasks := snd.tasks(t); len(tasks) != 1 || tasks[0].URL != home {
		t.Fatalf("tasks after the seed: %+v, want the seed's", tasks)
	}
	// The seed crawled, due again in an hour: a link to it stays so.
	setState(t, db, home, crawl.StateDue, testNow.Add(time.Hour).Unix())
	page := crawl.EnqueueEvent{URLs: []string{"http://example.com/a", "http://example.com/b", home}, Parent: home, Hops: 1}
	calls := snd.calls
	if err := s.AdmitEach(ctx, page, nil); err != nil {
		t.Fatal(err)
	}
	if snd.calls != calls+1 {
		t.Errorf("%d sends for a page's links, want 1", snd.calls-calls)
	}
	tasks := snd.tasks(t)[1:]
	if len(tasks) != 2 {
		t.Fatalf("tasks for the page: %+v, want the two new links'", tasks)
	}
	for _, task := range tasks {
		c := mustGet(t, db, task.URL)
		if c.State != crawl.StateQueued || c.CrawlUUID != task.CrawlUUID || c.QueuedAt != testNow.Unix() || c.CrawlType != crawl.CrawlFirst {
			t.Errorf("%s: %+v, want queued as %s", task.URL, c, task.CrawlUUID)
		}
		if c.Version != 1 {
			t.Errorf("%s written %d times, want once", task.URL, c.Version)
		}
	}
	if c := mustGet(t, db, home); c.State != crawl.StateDue {
		t.Errorf("the known seed is %s, want due as it was", c.State)
	}
	if n, err := s.Release(ctx, 10); err != nil || n != 0 {
		t.Errorf("Release = %d, %v: nothing is due, the links went out on admission", n, err)
	}
	// The same page again (a redelivery): deduped, no task.
	if err := s.AdmitEach(ctx, page, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(snd.tasks(t)); n != 3 {
		t.Errorf("%d tasks after the page was admitted twice, want 3", n)
	}
	// A send that fails: the error is the admission's, and the new link
	// is queued without a message, which Requeue releases again.
	snd.err = errors.New("queue unavailable")
	if err := s.AdmitEach(ctx, link("http://example.com/c", 1), nil); err == nil {
		t.Fatal("an admission whose tasks could not be sent succeeded")
	}
	snd.err = nil
	lost := mustGet(t, db, "http://example.com/c")
	if lost.State != crawl.StateQueued {
		t.Fatalf("after a failed send: %s, want queued", lost.State)
	}
	before := len(snd.tasks(t))
	if _, err := s.Requeue(ctx, 0, 10); err != nil {
		t.Fatal(err)
	}
	requeued := false
	for _, task := range snd.tasks(t)[before:] {
		requeued = requeued || task.URL == lost.URL && task.CrawlUUID != lost.CrawlUUID
	}
	if !requeued {
		t.Errorf("Requeue sent %+v; want a new crawl of %s", snd.tasks(t)[before:], lost.URL)
	}
}

// room lets n tasks of each host through (HostRoom).
type room struct {
	n     int
	taken map[string]int
}

func (r *room) Take(host string, _ time.Duration) bool {
	if r.taken[host] >= r.n {
		return false
	}
	r.taken[host]++
	return true
}

// TestReleaseWithinRoom: a host's candidates past its room stay due, on
// admission as on release, and go out once it has room again.
func TestReleaseWithinRoom(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	p := noLimit()
	p.ReleaseOnAdmit = true
	r := &room{n: 2, taken: map[string]int{}}
	p.Room = r
	s, snd := newScheduler(t, db, p)
	admitAll(t, s, seed(home), seed("http://other.example/"))
	setState(t, db, home, crawl.StateDue, testNow.Add(time.Hour).Unix())
	setState(t, db, "http://other.example/", crawl.StateDue, testNow.Add(time.Hour).Unix())
	r.taken = map[string]int{}
	seeds := len(snd.tasks(t))
	page := crawl.EnqueueEvent{URLs: []string{"http://example.com/a", "http://example.com/b", "http://example.com/c",
		"http://other.example/a"}, Parent: home, Hops: 1}
	if err := s.AdmitEach(ctx, page, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, task := range snd.tasks(t)[seeds:] {
		got = append(got, task.URL)
	}
	if want := []string{"http://example.com/a", "http://example.com/b", "http://other.example/a"}; !slices.Equal(got, want) {
		t.Errorf("released on admission %q, want %q", got, want)
	}
	if c := mustGet(t, db, "http://example.com/c"); c.State != crawl.StateDue {
		t.Errorf("the link past the host's room is %s, want due", c.State)
	}
	if n, err := s.Release(ctx, 10); err != nil || n != 0 {
		t.Errorf("Release = %d, %v; want nothing while the host has no room", n, err)
	}
	r.taken["example.com"] = 0
	if n, err := s.Release(ctx, 10); err != nil || n != 1 {
		t.Errorf("Release = %d, %v; want the one left, now that the host has room", n, err)
	}
	if c := mustGet(t, db, "http://example.com/c"); c.State != crawl.StateQueued {
		t.Errorf("after the release: %s, want queued", c.State)
	}
}
