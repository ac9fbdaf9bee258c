package summarize

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/local/blobfs"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// TestCopiesSummarizedAtOnce: pages with the same text, summarized at
// the same moment by one process (the embedded home's parsers run in
// parallel), end up as one original and the rest its duplicates, never
// as several originals that each missed the others.
// Near copies (the same content behind other chrome) and pages naming
// one canonical are held apart the same way.
func TestCopiesSummarizedAtOnce(t *testing.T) {
	ctx := context.Background()
	long := words(1, 300, false)
	kinds := []struct {
		name string
		doc  func(i int) crawl.Document
	}{
		{"exact", func(int) crawl.Document { return crawl.Document{Text: crawl.TextPile{Text: "the same words"}} }},
		{"near", func(i int) crawl.Document {
			return crawl.Document{Text: crawl.TextPile{Text: long, SecondaryText: fmt.Sprint("mirror ", i)}}
		}},
	}
	for _, kind := range kinds {
		for round := range 5 {
			t.Run(fmt.Sprint(kind.name, " round ", round), func(t *testing.T) {
				db := openStore(t)
				const copies = 8
				tasks := make([]crawl.SummarizeTask, copies)
				for i := range tasks {
					u := fmt.Sprintf("http://example.com/copy-%d", i)
					body := fmt.Sprintf("<p>the same words</p><!-- %d -->", i)
					size := int64(len(body))
					cr := crawl.Crawl{
						Log: crawl.CrawlLog{AgentUUID: "agent", URL: u, CrawlType: crawl.CrawlFirst, CrawlUUID: fmt.Sprint("c", i),
							TimeStarted: 100, ExitCode: crawl.ExitComplete},
						File: &crawl.File{URL: u, MIMEType: "text/html", FileSize: &size, BodyKey: crawl.BodyKey([]byte(body))},
					}
					if _, err := db.RecordCrawl(ctx, cr, nil); err != nil {
						t.Fatal(err)
					}
					tasks[i] = crawl.SummarizeTask{URL: u, CrawlUUID: cr.Log.CrawlUUID}
				}
				s := New(db, nil, Config{}, slog.New(slog.DiscardHandler))
				var wg sync.WaitGroup
				start := make(chan struct{})
				for i, task := range tasks {
					wg.Go(func() {
						<-start
						doc := kind.doc(i)
						doc.URL = task.URL
						if err := s.HandleDocument(ctx, task, &doc); err != nil {
							t.Errorf("summarize %s: %v", task.URL, err)
						}
					})
				}
				close(start)
				wg.Wait()
				var originals, duplicates int
				if err := db.SQL().QueryRow(`SELECT count(*) FILTER (WHERE marked_duplicate=0), count(*) FILTER (WHERE marked_duplicate=1)
				FROM entity_generation`).Scan(&originals, &duplicates); err != nil {
					t.Fatal(err)
				}
				if originals != 1 || duplicates != copies-1 {
					t.Errorf("%d originals and %d duplicates, want 1 and %d", originals, duplicates, copies-1)
				}
			})
		}
	}
}

// TestLockAllCrosswise: callers locking overlapping keys, listed in
// opposite orders, all finish (the keys are taken in one order).
func TestLockAllCrosswise(t *testing.T) {
	var k keyedLocks
	var wg sync.WaitGroup
	for i := range 50 {
		keys := []string{"a", "b", "c"}
		if i%2 == 1 {
			keys = []string{"c", "b", "a", "a"}
		}
		wg.Go(func() { locked(t)(k.lockAll(t.Context(), keys))() })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("lockAll callers still waiting after 10 s")
	}
	if len(k.m) != 0 {
		t.Errorf("%d locks left after every caller is done", len(k.m))
	}
}

// locked takes what lock or lockAll returns and gives the unlock, or
// fails the test and gives a no-op.
func locked(t *testing.T) func(unlock func(), err error) func() {
	return func(unlock func(), err error) func() {
		if err != nil {
			t.Error(err)
			return func() {}
		}
		return unlock
	}
}

// TestLockGivesUp: a waiter whose context ends gives up without the
// lock, and leaves no trace of itself; the holder is not disturbed.
func TestLockGivesUp(t *testing.T) {
	var k keyedLocks
	unlock := locked(t)(k.lock(t.Context(), "a"))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if u, err := k.lockAll(ctx, []string{"b", "a"}); !errors.Is(err, context.DeadlineExceeded) || u != nil {
		t.Fatalf("lockAll while a is held: %v, want the context's deadline and no unlock", err)
	}
	// b, taken before a was waited for, was given back.
	locked(t)(k.lock(t.Context(), "b"))()
	unlock()
	locked(t)(k.lock(t.Context(), "a"))()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) != 0 {
		t.Errorf("%d locks left after every user is done", len(k.m))
	}
}

// TestKeyedLocks: one key's holders take turns; other keys do not wait;
// a key's lock is dropped when its last user is done.
func TestKeyedLocks(t *testing.T) {
	var k keyedLocks
	unlockA := locked(t)(k.lock(t.Context(), "a"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		locked(t)(k.lock(t.Context(), "b"))() // another key: not held up by a
	}()
	<-done
	got := make(chan struct{})
	go func() {
		defer close(got)
		locked(t)(k.lock(t.Context(), "a"))()
	}()
	select {
	case <-got:
		t.Fatal("a second holder of a got the lock while the first held it")
	case <-time.After(20 * time.Millisecond):
	}
	unlockA()
	<-got
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) != 0 {
		t.Errorf("%d locks left after every user is done", len(k.m))
	}
}

// TestWaitingStepsOutOfTheBatch: a summary waiting for another's lock
// leaves the blob store's batch while it waits, so the holder's record
// is written at once rather than after the batch's MaxWait.
func TestWaitingStepsOutOfTheBatch(t *testing.T) {
	dir := t.TempDir()
	objects, err := blobfs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	packer := warc.NewPacker(objects, warc.PackConfig{Prefix: "piles/", MaxWait: time.Hour})
	s := New(nil, packer, Config{}, slog.New(slog.DiscardHandler))
	packer.Enter() // the holder
	unlock := locked(t)(s.sameText.lockAll(t.Context(), []string{"text same"}))
	waiterIn := make(chan struct{})
	go func() {
		packer.Enter() // the waiter, in the same batch
		close(waiterIn)
		locked(t)(s.sameText.lockAll(t.Context(), []string{"text same"}))()
		packer.Leave()
	}()
	<-waiterIn
	kept := make(chan error, 1)
	go func() {
		_, err := packer.KeepResource(t.Context(), "urn:x", "text/plain", []byte("pile"))
		kept <- err
	}()
	select {
	case err := <-kept:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the holder's record still waits for the batch while the other summary waits for its lock")
	}
	unlock()
	packer.Leave()
}
