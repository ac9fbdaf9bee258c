package e2e

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/s3blob"
	"github.com/serverless-crawler/crawler/shared/aws/sqsq"
	"github.com/serverless-crawler/crawler/shared/aws/stack"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// deployed is the stack under test, as its outputs and parameters say.
type deployed struct {
	stack.Deployed
	clients stack.Clients
	db      *dynamo.DB
	queues  map[string]*sqsq.Queue // by output name
	delay   time.Duration          // DefaultDelay
	recrawl time.Duration          // RecrawlPeriod
}

var (
	work        = stack.WorkQueues
	deadLetters = stack.DeadLetterQueues
)

func openStack(t *testing.T) *deployed {
	t.Helper()
	name := os.Getenv("CRAWLER_E2E_STACK")
	if name == "" {
		t.Skip("CRAWLER_E2E_STACK is not set: run `make e2e`, which deploys the stack and names it")
	}
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d, err := stack.Describe(ctx, cloudformation.NewFromConfig(cfg), name)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	c, err := stack.NewClients(ctx, stack.WithS3)
	if err != nil {
		t.Fatal(err)
	}
	s := &deployed{Deployed: d, clients: c, db: dynamo.New(c.DynamoDB, tables), queues: map[string]*sqsq.Queue{}}
	s.db.SetBlobs(s3blob.New(c.S3, d.Outputs[stack.OutBucket]))
	for _, q := range append(slices.Clone(work), deadLetters...) {
		if d.Outputs[q] == "" {
			t.Fatalf("stack %s has no output %s", name, q)
		}
		s.queues[q] = sqsq.New(c.SQS, d.Outputs[q])
	}
	if s.delay, err = time.ParseDuration(d.Parameters["DefaultDelay"]); err != nil {
		t.Fatalf("parameter DefaultDelay: %v", err)
	}
	if s.recrawl, err = time.ParseDuration(d.Parameters["RecrawlPeriod"]); err != nil {
		t.Fatalf("parameter RecrawlPeriod: %v", err)
	}
	return s
}

// settle waits until the crawl is done: no message in any queue (visible,
// in flight or delayed), three times in a row two seconds apart.
func (s *deployed) settle(t *testing.T, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var qs []stack.NamedQueue
	for _, q := range work {
		qs = append(qs, stack.NamedQueue{Name: q, Queue: s.queues[q]})
	}
	if err := stack.WaitSettled(ctx, qs, 2*time.Second, 3, nil); err != nil {
		t.Fatalf("the crawl did not settle within %v: %v", within, err)
	}
}

func (s *deployed) send(t *testing.T, bodies ...[]byte) {
	t.Helper()
	if err := s.queues["EnqueueQueueUrl"].Send(context.Background(), bodies...); err != nil {
		t.Fatal(err)
	}
}

// purge empties the dead-letter queues, so that a rerun against the same
// stack sees only its own.
func (s *deployed) purge(t *testing.T) {
	for _, q := range deadLetters {
		if _, err := s.clients.SQS.PurgeQueue(context.Background(), &sqs.PurgeQueueInput{QueueUrl: aws.String(s.Outputs[q])}); err != nil {
			t.Fatalf("purge %s: %v", q, err)
		}
	}
}

// copies returns the statuses of two pages with one content: the
// original and the one marked duplicate (the second when neither is).
func (s *deployed) copies(t *testing.T, a, b string) (orig, dup crawl.URLStatus) {
	t.Helper()
	var st [2]crawl.URLStatus
	for i, u := range []string{a, b} {
		var err error
		if st[i], err = s.db.Status(context.Background(), u); err != nil || st[i].Generation == nil {
			t.Fatalf("%s: status %+v, %v", u, st[i], err)
		}
	}
	if st[0].Generation.MarkedDuplicate {
		return st[1], st[0]
	}
	return st[0], st[1]
}

// candidate returns a URL's candidate and its last crawl.
func (s *deployed) candidate(t *testing.T, u string) (crawl.Candidate, crawl.Crawl) {
	t.Helper()
	ctx := context.Background()
	c, err := s.db.GetCandidate(ctx, u)
	if err != nil {
		t.Errorf("candidate %s: %v", u, err)
		return c, crawl.Crawl{}
	}
	if c.CrawlUUID == "" {
		return c, crawl.Crawl{}
	}
	cr, err := s.db.GetCrawl(ctx, c.CrawlUUID)
	if err != nil {
		t.Errorf("crawl %s of %s: %v", c.CrawlUUID, u, err)
	}
	return c, cr
}

func exitOf(c crawl.Candidate) crawl.ExitCode {
	if c.LastCrawlExitCode == nil {
		return crawl.ExitUnknown
	}
	return *c.LastCrawlExitCode
}

// fetchAgents returns the agents that recorded the fetch crawls.
func (s *deployed) fetchAgents(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	p := dynamodb.NewScanPaginator(s.clients.DynamoDB, &dynamodb.ScanInput{TableName: aws.String(s.Outputs[stack.OutCrawlLog])})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if a, ok := it["agent_uuid"].(*types.AttributeValueMemberS); ok {
				out[a.Value]++
			}
		}
	}
	return out
}

// The crawl of the test site through the deployed functions, then its
// recrawl by the schedule.
func TestDeployedStack(t *testing.T) {
	s := openStack(t)
	ctx := context.Background()
	s.purge(t)
	site := newSite()
	defer site.Close()
	u := func(p string) string { return site.URL + p }

	seed, _ := json.Marshal(crawl.EnqueueEvent{Version: 1, URL: u("/")})
	malformed, err := os.ReadFile("../../../events/enqueue-malformed.json")
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	s.send(t, seed, malformed)
	s.settle(t, 3*time.Minute)
	settled := time.Now()
	t.Logf("first crawl settled after %v", settled.Sub(started).Round(time.Second))
	s.saveLogs(t, "fresh", started.Add(-time.Second), settled)
	if time.Since(started) > s.recrawl {
		t.Fatalf("the first crawl took longer than the recrawl period %v; deploy with a longer RecrawlPeriod", s.recrawl)
	}

	t.Run("every URL requested once, the disallowed one never", func(t *testing.T) {
		counts := map[string]int{}
		for _, h := range site.hits() {
			counts[h.Path]++
		}
		want := append(append(append(append([]string{"/robots.txt", "/files/notes.txt", "/missing.html"}, pages...), dups...), mirrors...), chain...)
		for _, p := range want {
			if counts[p] != 1 {
				t.Errorf("%s requested %d times, want once", p, counts[p])
			}
		}
		if n := counts[disallowed]; n != 0 {
			t.Errorf("%s, disallowed by robots.txt, was requested %d times", disallowed, n)
		}
	})
	t.Run("politeness across concurrent invocations", func(t *testing.T) { s.checkPoliteness(t, site) })
	t.Run("candidates and crawl log", func(t *testing.T) {
		for p, want := range map[string]crawl.ExitCode{
			"/": crawl.ExitComplete, "/a.html": crawl.ExitComplete, "/b.html": crawl.ExitComplete,
			"/changing.html": crawl.ExitComplete, "/chain/end.html": crawl.ExitComplete, "/files/notes.txt": crawl.ExitComplete,
			"/missing.html": crawl.ExitHTTPClientError, disallowed: crawl.ExitRobotsDisallowed,
			"/chain/1": crawl.ExitRedirect, "/chain/2": crawl.ExitRedirect,
		} {
			c, cr := s.candidate(t, u(p))
			if got := exitOf(c); got != want {
				t.Errorf("%s: exit %v, want %v", p, got, want)
			}
			if cr.Log.URL != u(p) || cr.Log.ExitCode != want {
				t.Errorf("%s: crawl log %+v, want its URL with exit %v", p, cr.Log, want)
			}
			// A crawl counts when it sent a request: robots.txt's refusal
			// is logged, but not counted (crawler status's crawls).
			wantN := 1
			if !want.Requested() {
				wantN = 0
			}
			if n, err := s.db.CrawlCount(ctx, u(p)); err != nil || n != wantN {
				t.Errorf("%s: %d crawls (%v), want %d", p, n, err, wantN)
			}
		}
	})
	t.Run("generations and bodies", func(t *testing.T) {
		bodies := warc.NewPacker(s3blob.New(s.clients.S3, s.Outputs[stack.OutBucket]), warc.PackConfig{})
		for _, p := range append(slices.Clone(pages), "/files/notes.txt") {
			body, _, _, _ := site.body(p)
			_, cr := s.candidate(t, u(p))
			if cr.File == nil || cr.File.ContentID() != crawl.BodyKey([]byte(body)) {
				t.Errorf("%s: file %+v, want the content of what the site served", p, cr.File)
				continue
			}
			// Bodies are packed in WARC files on S3 (warc.Packer), each
			// read back with a ranged GET of its record.
			if _, ok := warc.ParseRef(cr.File.BodyKey); !ok {
				t.Errorf("%s: body key %q does not name a record in a WARC file", p, cr.File.BodyKey)
			}
			got, err := bodies.Get(ctx, cr.File.BodyKey)
			if err != nil || string(got) != body {
				t.Errorf("%s: S3 %s holds %q (%v), want %q", p, cr.File.BodyKey, got, err, body)
			}
			st, err := s.db.Status(ctx, u(p))
			if err != nil || st.Generation == nil || st.Generation.Generations != 1 {
				t.Errorf("%s: status %+v, %v; want one generation", p, st, err)
			}
		}
		hits, err := s.db.Search(ctx, "tugboat zephyrine", 5)
		if err != nil || len(hits) == 0 || hits[0].URL != u("/a.html") {
			t.Errorf("search: %+v, %v; want %s first", hits, err, u("/a.html"))
		}
	})
	t.Run("duplicates", func(t *testing.T) {
		// /dup-a.html and /dup-b.html say the same: one is the original, the
		// other its exact duplicate (the one first seen later; within one
		// second, either).
		orig, dup := s.copies(t, u(dups[0]), u(dups[1]))
		if !dup.ExactDuplicate || dup.Status != crawl.StatusDuplicate || dup.Generation.DuplicateOf != orig.URL || !dup.Generation.MarkedDuplicate {
			t.Errorf("duplicate %s: %+v %+v; want an exact duplicate of %s", dup.URL, dup, dup.Generation, orig.URL)
		}
		if orig.ExactDuplicate || orig.Status != crawl.StatusComplete || orig.Generation.MarkedDuplicate {
			t.Errorf("original %s: %+v %+v; want complete, not a duplicate", orig.URL, orig, orig.Generation)
		}
	})
	t.Run("near duplicates", func(t *testing.T) {
		// The mirrors' content is the same, their chrome is not: one is
		// the other's duplicate, found by SimHash, and not an exact one.
		orig, dup := s.copies(t, u(mirrors[0]), u(mirrors[1]))
		if dup.ExactDuplicate || dup.Status != crawl.StatusDuplicate || dup.Generation.DuplicateOf != orig.URL || !dup.Generation.MarkedDuplicate {
			t.Errorf("near duplicate %s: %+v %+v; want a duplicate of %s, not exact", dup.URL, dup, dup.Generation, orig.URL)
		}
		if orig.Status != crawl.StatusComplete || orig.Generation.MarkedDuplicate {
			t.Errorf("original %s: %+v %+v; want complete, not a duplicate", orig.URL, orig, orig.Generation)
		}
	})
	t.Run("redirect chain", func(t *testing.T) {
		for from, to := range map[string]struct {
			to        string
			permanent bool
		}{"/chain/1": {"/chain/2", true}, "/chain/2": {"/chain/end.html", false}} {
			_, cr := s.candidate(t, u(from))
			if r := cr.Redirect; r == nil || r.ToURL != u(to.to) || r.IsPermanent != to.permanent {
				t.Errorf("%s: redirect %+v, want to %s (permanent %v)", from, r, to.to, to.permanent)
			}
		}
		end, _ := s.candidate(t, u("/chain/end.html"))
		if end.NRedirs != 2 || end.OrigURL != u("/chain/1") {
			t.Errorf("/chain/end.html: n-redirs %d from %q, want 2 from /chain/1", end.NRedirs, end.OrigURL)
		}
	})
	t.Run("malformed event in the dead-letter queue with its reason", func(t *testing.T) { s.checkDeadLetters(t, malformed) })

	// The recrawl: the schedule releases every URL again once RecrawlPeriod
	// has passed; the validated pages are asked for conditionally.
	first := map[string]crawl.URLStatus{}
	for _, p := range validated {
		first[p], _ = s.db.Status(ctx, u(p))
	}
	site.version.Store(2)
	deadline := time.Now().Add(s.recrawl + 3*time.Minute)
	for _, p := range validated {
		for {
			n, err := s.db.CrawlCount(ctx, u(p))
			if err == nil && n >= 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d crawls %v after the first crawl (%v); the recrawl schedule did not release it", p, n, time.Since(started).Round(time.Second), err)
			}
			time.Sleep(2 * time.Second)
		}
	}
	s.settle(t, 2*time.Minute)
	t.Logf("recrawl settled %v after the first crawl began", time.Since(started).Round(time.Second))
	s.saveLogs(t, "recrawl", settled, time.Now())

	t.Run("recrawl asks conditionally, 304 moves last seen on", func(t *testing.T) {
		for _, p := range validated {
			hs := site.hitsOf(p)
			if len(hs) < 2 {
				t.Errorf("%s requested %d times, want a recrawl", p, len(hs))
				continue
			}
			_, etag, _, _ := site.body(p)
			wantStatus, wantExit := 304, crawl.ExitUnchanged
			switch p {
			case "/changing.html":
				etag, wantStatus, wantExit = `"changing-1"`, 200, crawl.ExitComplete
			}
			if h := hs[1]; h.IfNoneMatch != etag || h.Status != wantStatus {
				t.Errorf("%s recrawl: If-None-Match %q answered %d, want %q answered %d", p, h.IfNoneMatch, h.Status, etag, wantStatus)
			}
			c, _ := s.candidate(t, u(p))
			if exitOf(c) != wantExit {
				t.Errorf("%s recrawl: exit %v, want %v", p, exitOf(c), wantExit)
			}
			st, err := s.db.Status(ctx, u(p))
			if err != nil || st.Generation == nil || first[p].Generation == nil {
				t.Errorf("%s: status %+v, %v", p, st, err)
				continue
			}
			g, g0 := st.Generation, first[p].Generation
			switch {
			case p == "/changing.html":
				if g.Generations != 2 || g.UUID == g0.UUID || g.Title == nil || *g.Title != "Notice 2" {
					t.Errorf("%s: generation %+v, want a second one titled Notice 2", p, g)
				}
			case g.Generations != 1 || g.UUID != g0.UUID || g.LastSeen <= g0.LastSeen:
				t.Errorf("%s: generation %+v after %+v, want the same one seen later", p, g, g0)
			}
		}
		hits, err := s.db.Search(ctx, "quixotica", 5)
		if err != nil || len(hits) == 0 || hits[0].URL != u("/changing.html") || !strings.Contains(hits[0].Title, "Notice 2") {
			t.Errorf("search after the change: %+v, %v; want Notice 2", hits, err)
		}
	})
	t.Run("politeness through the recrawl", func(t *testing.T) { s.checkPoliteness(t, site) })
	t.Run("no other dead letters", func(t *testing.T) { s.checkDeadLetters(t, malformed) })
	t.Run("the README's recipes with AWS CLI v1", func(t *testing.T) { s.checkRecipes(t, u("/recipe/bare"), u("/recipe/event")) })
	t.Run("site events", func(t *testing.T) { s.checkSiteEvents(t, u("/")) })
}

// checkSiteEvents sends site events (seed 001) to the deployed enqueue
// queue: a site is added, then disabled, through the deployed scheduler;
// a malformed one is dead-lettered with its reason.
func (s *deployed) checkSiteEvents(t *testing.T, root string) {
	ctx := context.Background()
	add, _ := json.Marshal(crawl.SiteEvent{Type: crawl.SiteEventType, Version: 1, Op: crawl.SiteAdd, ID: "e2e", Roots: []string{root},
		MaxURLs: func(n int64) *int64 { return &n }(500)})
	bad, err := os.ReadFile("../../../events/site-malformed.json")
	if err != nil {
		t.Fatal(err)
	}
	s.send(t, add, bad)
	s.settle(t, time.Minute)
	got, err := s.db.GetSite(ctx, "e2e")
	if err != nil || got.State != crawl.SiteActive || got.MaxURLs != 500 || len(got.Roots) != 1 {
		t.Fatalf("site after the add event: %+v, %v", got, err)
	}
	disable, _ := json.Marshal(crawl.SiteEvent{Type: crawl.SiteEventType, Op: crawl.SiteDisable, ID: "e2e"})
	s.send(t, disable)
	s.settle(t, time.Minute)
	if got, err := s.db.GetSite(ctx, "e2e"); err != nil || got.State != crawl.SiteDisabled {
		t.Errorf("site after the disable event: %+v, %v", got, err)
	}
	msgs, err := s.queues["EnqueueDeadLetterQueueUrl"].Receive(ctx, 10, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range msgs {
		if string(m.Body) == string(bad) {
			found = strings.Contains(m.Attributes["reason"], "parse site event")
			t.Logf("dead-lettered site event, reason %q", m.Attributes["reason"])
		}
	}
	if !found {
		t.Errorf("the malformed site event is not in the dead-letter queue with its reason: %d messages there", len(msgs))
	}
}

// checkPoliteness checks the site's log: no two request starts closer
// than the stack's delay, over every request of both crawls, and says
// how many fetcher environments ran them.
//
// The emulator decides how many environments run the fetches, and since
// the scheduler books each task of a host a slot of its own (dynamo.Gate.
// Book), one warm environment usually takes them all, one at a time: in
// a CI run at 3ac1645 all 30 ran in one. So that more than one
// environment fetched is no longer asked of the deployed stack; the gate
// across environments is tested on the emulators in process
// (dynamo.TestGateSpacesRequestsAcrossEnvironments, five environments;
// TestCrawlTestSiteOnAWS, three fetcher environments).
func (s *deployed) checkPoliteness(t *testing.T, site *site) {
	hs := site.hits()
	slices.SortFunc(hs, func(a, b hit) int { return a.At.Compare(b.At) })
	for i := 1; i < len(hs); i++ {
		if gap := hs[i].At.Sub(hs[i-1].At); gap < s.delay {
			t.Errorf("%s started %v after %s: closer than the delay %v", hs[i].Path, gap, hs[i-1].Path, s.delay)
		}
	}
	agents := s.fetchAgents(t)
	t.Logf("%d requests by %d agents: %v", len(hs), len(agents), agents)
}

// checkDeadLetters checks that the malformed event, and nothing else, is
// in a dead-letter queue, with its reason.
func (s *deployed) checkDeadLetters(t *testing.T, malformed []byte) {
	ctx := context.Background()
	for _, q := range deadLetters {
		msgs, err := s.queues[q].Receive(ctx, 10, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		if q == "EnqueueDeadLetterQueueUrl" {
			want = 1
		}
		if len(msgs) != want {
			t.Errorf("%s holds %d messages, want %d: %+v", q, len(msgs), want, msgs)
		}
		for _, m := range msgs {
			if string(m.Body) != string(malformed) || !strings.Contains(m.Attributes["reason"], "not a valid enqueue event") {
				t.Errorf("%s: dead letter %q with reason %q", q, m.Body, m.Attributes["reason"])
			}
			// Seen; let it show again for the next check.
			s.queues[q].ChangeVisibility(ctx, m, 0)
		}
	}
}
