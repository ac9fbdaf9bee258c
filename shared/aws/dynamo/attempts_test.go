package dynamo

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// losingProxy stands between the SDK and the emulator. Armed, it lets
// the next UpdateItem through, or runs instead whatever armed it with,
// and closes the connection without an answer: what the SDK sees when
// an answer is lost on the way back, and retries.
type losingProxy struct {
	mu    sync.Mutex
	armed func(w http.ResponseWriter, r *http.Request) // nil: pass everything
}

func (p *losingProxy) arm(f func(w http.ResponseWriter, r *http.Request)) {
	p.mu.Lock()
	p.armed = f
	p.mu.Unlock()
}

func newLosingProxy(t *testing.T) (*losingProxy, *dynamodb.Client) {
	t.Helper()
	ep := os.Getenv("CRAWLER_TEST_DYNAMODB")
	if ep == "" {
		t.Skip("CRAWLER_TEST_DYNAMODB is not set: run `make test`, which starts DynamoDB Local")
	}
	target, err := url.Parse(ep)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	p := &losingProxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		f := p.armed
		if r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.UpdateItem" {
			f = nil
		}
		if f != nil {
			p.armed = nil
		}
		p.mu.Unlock()
		if f == nil {
			forward.ServeHTTP(w, r)
			return
		}
		f(httptest.NewRecorder(), r)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	api := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		}),
	})
	return p, api
}

// TestPutCandidateSurvivesALostAnswer: a candidate write the server
// applied but whose answer was lost is retried by the SDK, and the retry
// is refused by the first attempt's own write. The store takes that
// refusal for the success it was; a retry refused by another writer's
// write, different or the same, and a second write of the same
// candidate (a redelivery), are still conflicts. The flake this answers: "conditional write lost" in
// the contract suite's candidate round trip on ministack under load.
func TestPutCandidateSurvivesALostAnswer(t *testing.T) {
	p, api := newLosingProxy(t)
	db := New(api, testTables(t, api))
	ctx := context.Background()
	target, _ := url.Parse(os.Getenv("CRAWLER_TEST_DYNAMODB"))
	applied := httputil.NewSingleHostReverseProxy(target).ServeHTTP

	c := crawl.Candidate{URL: "http://lost.example/a", Host: "lost.example", State: crawl.StateDue, DueAt: 10, DiscoveredAt: 5,
		Parent: "http://lost.example/", RedirectChain: []string{"http://lost.example/old"}}
	p.arm(applied)
	if err := db.PutCandidate(ctx, c); err != nil {
		t.Fatalf("a new candidate whose answer was lost: %v", err)
	}
	got := mustGetCandidate(t, db, c.URL)
	if got.Version != 1 || got.DueAt != 10 {
		t.Fatalf("stored %+v, want version 1 due at 10", got)
	}

	// An update that clears optional fields, its answer lost.
	upd := got
	upd.Parent, upd.RedirectChain, upd.DueAt = "", nil, 20
	p.arm(applied)
	if err := db.PutCandidate(ctx, upd); err != nil {
		t.Fatalf("an update whose answer was lost: %v", err)
	}
	if got = mustGetCandidate(t, db, c.URL); got.Version != 2 || got.Parent != "" || got.RedirectChain != nil {
		t.Fatalf("stored %+v, want version 2 with no parent and no redirects", got)
	}

	// The first attempt loses to another writer, whose write the retry
	// then finds: a conflict, not ours.
	mine, theirs := got, got
	mine.DueAt, theirs.DueAt = 30, 40
	other := otherEnvironment(t, db)
	p.arm(func(w http.ResponseWriter, r *http.Request) {
		if err := other.PutCandidate(ctx, theirs); err != nil {
			t.Errorf("the other writer's put: %v", err)
		}
	})
	if err := db.PutCandidate(ctx, mine); !errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("a retry refused by another writer: %v, want ErrConflict", err)
	}

	// The first attempt is lost before it reaches the server, and
	// another writer makes the very same write (another copy of the
	// same message): the retry finds the values it wrote, but not its
	// write_id, and it is a conflict.
	got = mustGetCandidate(t, db, c.URL)
	same := got
	same.DueAt = 50
	p.arm(func(w http.ResponseWriter, r *http.Request) {
		if err := other.PutCandidate(ctx, same); err != nil {
			t.Errorf("the other writer's identical put: %v", err)
		}
	})
	if err := db.PutCandidate(ctx, same); !errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("a retry refused by another writer's identical write: %v, want ErrConflict", err)
	}

	// A redelivery: the same write again, sent once, is refused.
	again := c
	if err := db.PutCandidate(ctx, again); !errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("the same new candidate written twice: %v, want ErrConflict", err)
	}
}
