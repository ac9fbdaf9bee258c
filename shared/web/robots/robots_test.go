package robots

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const ua = "serverless-crawler/0.1 (+https://example.org/bot)"

func TestFromResponse(t *testing.T) {
	body := []byte(`
User-agent: *
Disallow: /private/
Crawl-delay: 1

User-agent: serverless-crawler
Disallow: /no-bots/
Allow: /no-bots/except.html
Crawl-delay: 2

Sitemap: http://example.org/sitemap.xml
`)
	now := time.Unix(1000, 0)
	tests := []struct {
		name      string
		status    int
		body      []byte
		path      string
		allowed   bool
		temporary bool
	}{
		{"our group disallows", 200, body, "/no-bots/page.html", false, false},
		{"our group allows the exception", 200, body, "/no-bots/except.html", true, false},
		{"the * group does not apply to us", 200, body, "/private/x", true, false},
		{"404 allows all", 404, nil, "/anything", true, false},
		{"403 allows all (RFC 9309)", 403, nil, "/anything", true, false},
		{"500 disallows all for a while", 500, nil, "/anything", false, true},
		{"503 disallows all for a while", 503, nil, "/", false, true},
		{"empty robots.txt allows all", 200, []byte(""), "/x", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromResponse(tt.status, tt.body, ua, now, time.Hour, 10*time.Minute)
			if got := r.Allowed(tt.path); got != tt.allowed {
				t.Errorf("Allowed(%s) = %v, want %v (%s)", tt.path, got, tt.allowed, r.Reason)
			}
			if r.Temporary != tt.temporary {
				t.Errorf("Temporary = %v, want %v", r.Temporary, tt.temporary)
			}
		})
	}
	r := FromResponse(200, body, ua, now, time.Hour, time.Minute)
	if r.CrawlDelay != 2*time.Second {
		t.Errorf("Crawl-delay = %v, want our group's 2s", r.CrawlDelay)
	}
	if len(r.Sitemaps) != 1 || r.Sitemaps[0] != "http://example.org/sitemap.xml" {
		t.Errorf("Sitemaps = %v", r.Sitemaps)
	}
	if r5 := FromResponse(503, nil, ua, now, time.Hour, 10*time.Minute); !r5.Expires.Equal(now.Add(10 * time.Minute)) {
		t.Errorf("5xx rules expire at %v, want after the error TTL", r5.Expires)
	}
	if u := Unreachable(errors.New("connection refused"), now, time.Minute); u.Allowed("/") || !u.Temporary {
		t.Error("unreachable robots.txt must disallow all, temporarily")
	}
}

func TestToken(t *testing.T) {
	for in, want := range map[string]string{ua: "serverless-crawler", "Bot": "Bot", "my bot/2": "my"} {
		if got := Token(in); got != want {
			t.Errorf("Token(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCacheLoadsOncePerOrigin(t *testing.T) {
	c := NewCache()
	var loads atomic.Int32
	load := func(context.Context) (*Rules, error) {
		loads.Add(1)
		time.Sleep(10 * time.Millisecond)
		return FromResponse(404, nil, ua, time.Now(), time.Hour, time.Minute), nil
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := c.Get(context.Background(), "http://a", load); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := loads.Load(); n != 1 {
		t.Errorf("robots.txt loaded %d times, want once", n)
	}
	// Expired rules are loaded again.
	c.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, loaded, _ := c.Get(context.Background(), "http://a", load); !loaded || loads.Load() != 2 {
		t.Errorf("expired rules not reloaded (loads %d)", loads.Load())
	}
}

// A load that fails leaves no verdict behind: the caller gets the error
// and the next caller loads again.
func TestCacheLoadError(t *testing.T) {
	c := NewCache()
	busy := errors.New("host busy")
	fail := func(context.Context) (*Rules, error) { return nil, busy }
	if _, loaded, err := c.Get(context.Background(), "http://a", fail); !errors.Is(err, busy) || loaded {
		t.Fatalf("Get = loaded %v, err %v; want the load's error", loaded, err)
	}
	ok := func(context.Context) (*Rules, error) {
		return FromResponse(404, nil, ua, time.Now(), time.Hour, time.Minute), nil
	}
	r, loaded, err := c.Get(context.Background(), "http://a", ok)
	if err != nil || !loaded || !r.Allowed("/x") {
		t.Fatalf("Get after a failed load = %v, loaded %v, err %v; want fresh rules", r, loaded, err)
	}
}
