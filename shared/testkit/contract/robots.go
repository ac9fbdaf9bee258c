package contract

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
)

// RobotsCache is the robots.txt cache shared between processes and
// runs (fetch.RobotsStore): the fetcher's execution environments on AWS
// (dynamo.DB), a crawl and the runs that resume it on one machine
// (sqlite.DB).
type RobotsCache interface {
	fetch.RobotsStore
}

// Robots runs the robots.txt cache contract: a file put is got back
// whole; an older fetch arriving late does not replace a newer one.
func Robots(t *testing.T, open func(t *testing.T) RobotsCache) {
	t.Run("Robots", func(t *testing.T) {
		r := open(t)
		const origin = "http://a.test"
		if _, err := r.GetRobots(t.Context(), origin); !errors.Is(err, crawl.ErrNotFound) {
			t.Fatalf("GetRobots before any put = %v, want ErrNotFound", err)
		}
		at := time.UnixMilli(time.Now().UnixMilli())
		first := crawl.RobotsFile{Status: 200, Body: []byte("User-agent: *\nDisallow: /private\n" + strings.Repeat("# pad\n", 1000)), FetchedAt: at}
		if err := r.PutRobots(t.Context(), origin, first); err != nil {
			t.Fatal(err)
		}
		if err := r.PutRobots(t.Context(), origin, crawl.RobotsFile{Status: 503, FetchedAt: at.Add(-time.Minute)}); err != nil {
			t.Fatal(err)
		}
		if got, err := r.GetRobots(t.Context(), origin); err != nil || !reflect.DeepEqual(got, first) {
			t.Fatalf("GetRobots = status %d, %v; want the first put back", got.Status, err)
		}
		newer := crawl.RobotsFile{Status: 404, Body: []byte{}, FetchedAt: at.Add(time.Minute)}
		if err := r.PutRobots(t.Context(), origin, newer); err != nil {
			t.Fatal(err)
		}
		if got, err := r.GetRobots(t.Context(), origin); err != nil || !reflect.DeepEqual(got, newer) {
			t.Fatalf("GetRobots after a newer put = %+v, %v; want %+v", got, err, newer)
		}
		if _, err := r.GetRobots(t.Context(), "http://b.test"); !errors.Is(err, crawl.ErrNotFound) {
			t.Errorf("GetRobots of another origin = %v, want ErrNotFound", err)
		}
	})
}
