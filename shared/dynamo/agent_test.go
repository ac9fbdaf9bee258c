package dynamo

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

func TestAgent(t *testing.T) {
	ctx := context.Background()
	db := testDB(t)
	a := crawl.Agent{TimeStarted: 1700000000, UUID: "agent-1", Name: "fetcher", HTTPUserAgent: pointerTo("crawler/1.0")}
	tests := []struct {
		name string
		do   func() error
		want crawl.Agent
	}{
		{"register", func() error { return db.RegisterAgent(ctx, a) }, a},
		{"register again, with other fields: the first stays", func() error {
			b := a
			b.Name, b.TimeStarted, b.HTTPUserAgent = "other", 5, nil
			return db.RegisterAgent(ctx, b)
		}, a},
		{"finish", func() error { return db.FinishAgent(ctx, a.UUID, 1700000900) },
			func() crawl.Agent { f := a; f.TimeFinished = pointerTo(int64(1700000900)); return f }()},
		{"register after finishing changes nothing", func() error { return db.RegisterAgent(ctx, a) },
			func() crawl.Agent { f := a; f.TimeFinished = pointerTo(int64(1700000900)); return f }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); err != nil {
				t.Fatal(err)
			}
			got, err := db.GetAgent(ctx, a.UUID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("agent:\ngot  %+v\nwant %+v", got, tt.want)
			}
		})
	}

	t.Run("agent without a user agent", func(t *testing.T) {
		b := crawl.Agent{TimeStarted: 1, UUID: "agent-2", Name: "bare"}
		if err := db.RegisterAgent(ctx, b); err != nil {
			t.Fatal(err)
		}
		if got, err := db.GetAgent(ctx, b.UUID); err != nil || !reflect.DeepEqual(got, b) {
			t.Errorf("GetAgent = %+v, %v; want %+v", got, err, b)
		}
	})
	t.Run("finishing an unknown agent records nothing", func(t *testing.T) {
		if err := db.FinishAgent(ctx, "no-such-agent", 5); err != nil {
			t.Fatalf("FinishAgent: %v", err)
		}
		if _, err := db.GetAgent(ctx, "no-such-agent"); !errors.Is(err, crawl.ErrNotFound) {
			t.Errorf("GetAgent(unknown) = %v, want ErrNotFound", err)
		}
	})
	t.Run("no uuid", func(t *testing.T) {
		if err := db.RegisterAgent(ctx, crawl.Agent{Name: "x"}); crawl.KindOf(err) != crawl.KindInvalid {
			t.Errorf("RegisterAgent without uuid = %v, want a KindInvalid error", err)
		}
	})
	if n := countTableItems(t, db, db.t.Control); n != 2 {
		t.Errorf("control items = %d, want 2 agents", n)
	}
}
