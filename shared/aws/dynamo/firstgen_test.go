package dynamo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

// failingGenPut is a process that dies before it puts a generation item.
type failingGenPut struct{ API }

func (f failingGenPut) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if sk, _ := fxReadS(in.Item, gaSK); strings.HasPrefix(sk, skGenPrefix) {
		return nil, errors.New("injected: the process died")
	}
	return f.API.PutItem(ctx, in, opts...)
}

// TestFirstGenerationKilledBeforeItsItem: a URL's first generation is
// two ordered writes (the head, the generation). A
// process that dies after the head leaves it naming a generation that is
// not written: readers see none open, a summary of another crawl of the
// URL is deferred, and the crawl's redelivery (planned as before, or
// planned again as a duplicate, as an original that appeared meanwhile
// would make it) ends in the state one delivery gives.
func TestFirstGenerationKilledBeforeItsItem(t *testing.T) {
	ctx := context.Background()
	db, blobs := sumDB(t)
	dying := New(failingGenPut{db.api}, db.t, WithBlobs(blobs))
	orig := "http://example.com/first/original"
	sumApply(t, db, contract.SummaryUpdate(orig, "c0", 50, crawl.GenerationReplace, 0, contract.TextGen(orig, 50, contract.TextPile("shared words"), "T")))
	origID := sumOpen(t, db, orig).Generation.ID
	for _, replanAsDup := range []bool{false, true} {
		name := fmt.Sprintf("replanned as a duplicate %v", replanAsDup)
		killed, whole := "http://example.com/first/killed/"+name, "http://example.com/first/whole/"+name
		update := map[string]crawl.SummaryUpdate{}
		for _, u := range []string{killed, whole} {
			update[u] = contract.SummaryUpdate(u, "c1"+u, 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("words of "+u), "T"))
		}
		if _, err := dying.ApplySummary(ctx, update[killed]); err == nil {
			t.Fatalf("%s: ApplySummary with a dying process succeeded", name)
		}
		head := readRawItem(t, db, db.t.Generations, genKey(killed, skHead))
		wantID, _ := GenerationID(update[killed].New.Generation.UUID)
		if got := attrN(t, head, gaOpenID); got != wantID {
			t.Fatalf("%s: the head names %d, want the generation %d", name, got, wantID)
		}
		if _, err := db.OpenGeneration(ctx, killed); !errors.Is(err, crawl.ErrNotFound) {
			t.Errorf("%s: open generation while its item is unwritten: %v, want not found", name, err)
		}
		later := contract.SummaryUpdate(killed, "c9"+killed, 300, crawl.GenerationReplace, 0, contract.TextGen(killed, 300, contract.TextPile("later words"), "T"))
		var pending *PendingError
		if _, err := db.ApplySummary(ctx, later); !errors.As(err, &pending) || pending.RetryAfter <= 0 {
			t.Errorf("%s: another crawl's summary meanwhile: %v, want a *PendingError", name, err)
		}

		again := update[killed]
		if replanAsDup {
			n := *again.New
			n.DuplicateOf, n.Generation.MarkedDuplicate = origID, true
			n.TextPile = contract.TextPile("shared words")
			again.New = &n
		}
		if !sumApply(t, db, again) {
			t.Errorf("%s: the redelivery did not finish the summary", name)
		}
		if sumApply(t, db, again) || !sumApply(t, db, update[whole]) {
			t.Errorf("%s: a second redelivery summarized again, or the whole delivery did not", name)
		}
		k, w := sumOpen(t, db, killed), sumOpen(t, db, whole)
		if k.Generation.ID != wantID || k.Generation.MarkedDuplicate || k.Generation.FirstSeen != w.Generation.FirstSeen || k.ContentKey == "" {
			t.Errorf("%s: open generation %+v, want %d as an original, as the whole delivery's %+v", name, k, wantID, w)
		}
		if it, err := db.getGenTableItem(ctx, killed, crawlSK("c1"+killed)); err != nil || it != nil {
			t.Errorf("%s: the first generation's crawl put a summary item %v (%v)", name, it, err)
		}
		kh := readRawItem(t, db, db.t.Generations, genKey(killed, skHead))
		wh := readRawItem(t, db, db.t.Generations, genKey(whole, skHead))
		if attrN(t, kh, gaGenCount) != 1 || attrN(t, wh, gaGenCount) != 1 {
			t.Errorf("%s: gen_count killed %d, whole %d, want 1", name, attrN(t, kh, gaGenCount), attrN(t, wh, gaGenCount))
		}
		// The later crawl, planned again, now replaces the generation.
		later.OpenID = wantID
		if !sumApply(t, db, later) {
			t.Errorf("%s: the later crawl was not summarized", name)
		}
		if got := sumOpen(t, db, killed).Generation.ID; got == wantID {
			t.Errorf("%s: the later crawl did not open its generation", name)
		}
	}
}

// TestFirstGenerationVoidHead: a head naming a first generation that its
// crawl never wrote (the crawl's message dead-lettered) is taken over by
// another crawl of the URL once firstVoidAfter has passed; the dead
// crawl, should it come back later still, is planned against the new
// generation.
func TestFirstGenerationVoidHead(t *testing.T) {
	ctx := context.Background()
	db, blobs := sumDB(t)
	start := time.Now()
	now := start
	clock := WithClock(func() time.Time { return now })
	dying := New(failingGenPut{db.api}, db.t, WithBlobs(blobs), clock)
	live := New(db.api, db.t, WithBlobs(blobs), clock)
	const u = "http://example.com/void"
	dead := contract.SummaryUpdate(u, "c1", 100, crawl.GenerationReplace, 0, contract.TextGen(u, 100, contract.TextPile("dead words"), "T"))
	if _, err := dying.ApplySummary(ctx, dead); err == nil {
		t.Fatal("ApplySummary with a dying process succeeded")
	}
	later := contract.SummaryUpdate(u, "c2", 200, crawl.GenerationReplace, 0, contract.TextGen(u, 200, contract.TextPile("live words"), "T"))
	now = start.Add(firstVoidAfter - time.Minute)
	var pending *PendingError
	if _, err := live.ApplySummary(ctx, later); !errors.As(err, &pending) {
		t.Fatalf("before the head is void: %v, want a *PendingError", err)
	}
	now = start.Add(firstVoidAfter + time.Minute)
	if fresh, err := live.ApplySummary(ctx, later); err != nil || !fresh {
		t.Fatalf("after the head is void: %v, %v", fresh, err)
	}
	laterID, _ := GenerationID(later.New.Generation.UUID)
	if got := sumOpen(t, db, u).Generation.ID; got != laterID {
		t.Errorf("open generation %d, want the later crawl's %d", got, laterID)
	}
	if got := attrN(t, readRawItem(t, db, db.t.Generations, genKey(u, skHead)), gaGenCount); got != 1 {
		t.Errorf("gen_count %d, want 1: the void generation never was", got)
	}
	// The dead crawl's message, redriven from the dead-letter queue: its
	// plan as of before is refused, and planned again it attaches.
	if _, err := live.ApplySummary(ctx, dead); !errors.Is(err, crawl.ErrConflict) {
		t.Errorf("the dead crawl's old plan: %v, want a conflict", err)
	}
	if !sumApply(t, live, contract.SummaryUpdate(u, "c1", 100, crawl.GenerationAttach, laterID, nil)) {
		t.Error("the dead crawl, planned again, was not summarized")
	}

	// A duplicate's first generation, which keeps the transaction, takes
	// a void head over too.
	const dupURL = "http://example.com/void-dup"
	now = start
	if _, err := dying.ApplySummary(ctx, contract.SummaryUpdate(dupURL, "d1", 100, crawl.GenerationReplace, 0,
		contract.TextGen(dupURL, 100, contract.TextPile("dead words 2"), "T"))); err == nil {
		t.Fatal("ApplySummary with a dying process succeeded")
	}
	now = start.Add(firstVoidAfter + time.Minute)
	if !sumApply(t, live, contract.SummaryUpdate(dupURL, "d2", 200, crawl.GenerationReplace, 0,
		contract.DupGen(dupURL, 200, contract.TextPile("live words"), "T", laterID))) {
		t.Fatal("the duplicate over a void head was not summarized")
	}
	if g := sumOpen(t, db, dupURL).Generation; !g.MarkedDuplicate {
		t.Errorf("open generation %+v, want a duplicate of %d", g, laterID)
	}
	if got := attrN(t, readRawItem(t, db, db.t.Generations, genKey(dupURL, skHead)), gaGenCount); got != 1 {
		t.Errorf("the duplicate's gen_count %d, want 1", got)
	}
}
