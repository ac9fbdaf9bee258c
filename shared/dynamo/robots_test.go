package dynamo

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/fetch"
)

func TestSharedRobots(t *testing.T) {
	db := testDB(t)
	ctx := context.Background()
	const origin = "http://a.test"
	if _, err := db.GetRobots(ctx, origin); !errors.Is(err, crawl.ErrNotFound) {
		t.Fatalf("GetRobots before any put = %v, want ErrNotFound", err)
	}
	at := time.UnixMilli(time.Now().UnixMilli())
	first := fetch.RobotsFile{Status: 200, Body: []byte("User-agent: *\nDisallow: /private\n" + strings.Repeat("# pad\n", 1000)), FetchedAt: at}
	if err := db.PutRobots(ctx, origin, first); err != nil {
		t.Fatal(err)
	}
	// An older fetch arriving late does not replace a newer one.
	if err := db.PutRobots(ctx, origin, fetch.RobotsFile{Status: 503, FetchedAt: at.Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetRobots(ctx, origin)
	if err != nil || !reflect.DeepEqual(got, first) {
		t.Fatalf("GetRobots = %+v, %v; want the first put back", got.Status, err)
	}
	newer := fetch.RobotsFile{Status: 404, Body: []byte{}, FetchedAt: at.Add(time.Minute)}
	if err := db.PutRobots(ctx, origin, newer); err != nil {
		t.Fatal(err)
	}
	if got, err := db.GetRobots(ctx, origin); err != nil || got.Status != 404 {
		t.Fatalf("GetRobots after a newer put = %d, %v; want 404", got.Status, err)
	}
}
