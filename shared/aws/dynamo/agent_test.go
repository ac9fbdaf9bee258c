package dynamo

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// TestGetAgent: an agent item reads back as registered and finished.
// (The contract checks that registering again, or finishing an unknown
// agent, changes nothing.)
func TestGetAgent(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	a := crawl.Agent{TimeStarted: 1700000000, UUID: "agent-1", Name: "fetcher", HTTPUserAgent: pointerTo("crawler/1.0")}
	bare := crawl.Agent{TimeStarted: 1, UUID: "agent-2", Name: "bare"}
	for _, b := range []crawl.Agent{a, bare} {
		if err := db.RegisterAgent(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.FinishAgent(ctx, a.UUID, 1700000900); err != nil {
		t.Fatal(err)
	}
	a.TimeFinished = pointerTo(int64(1700000900))
	for _, want := range []crawl.Agent{a, bare} {
		if got, err := db.GetAgent(ctx, want.UUID); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("GetAgent(%s) = %+v, %v; want %+v", want.UUID, got, err, want)
		}
	}
	if _, err := db.GetAgent(ctx, "no-such-agent"); !errors.Is(err, crawl.ErrNotFound) {
		t.Errorf("GetAgent(unknown) = %v, want ErrNotFound", err)
	}
	if n := countTableItems(t, db, db.t.Control); n != 2 {
		t.Errorf("control items = %d, want 2 agents", n)
	}
}
