package fetch

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Transport is the fetcher's HTTP transport in both homes: no proxy,
// connections dialed by dial (the SSRF-safe dialer), timeout for the
// headers and the TLS handshake, bodies taken as sent (the fetcher
// decodes them), and at most crawl.MaxResponseHeaderBytes of headers.
func Transport(dial func(ctx context.Context, network, addr string) (net.Conn, error), timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy: nil, DialContext: dial, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second,
		ResponseHeaderTimeout: timeout, TLSHandshakeTimeout: timeout, DisableCompression: true,
		MaxResponseHeaderBytes: crawl.MaxResponseHeaderBytes,
	}
}

// keptLocation carries, across net/http's client, a redirect's Location
// that the client cannot parse (see keepLocation).
const keptLocation = "X-Crawler-Kept-Location"

// keepLocation wraps the page client's transport. net/http's client
// parses a 3xx response's Location with net/url before it asks
// CheckRedirect, and fails the request when that parse fails, though the
// fetcher follows no redirect itself: a Location the URL Standard
// accepts and net/url does not ("/a%zz/b", a backslash for a slash)
// became a network error. Such a Location is moved aside before the
// client sees it and put back by restoreLocation, so that the fetcher
// resolves it by the URL Standard (urlnorm) as it does every other.
type keepLocation struct{ rt http.RoundTripper }

func (k keepLocation) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := k.rt.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	resp.Header.Del(keptLocation) // only ever ours
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return resp, nil
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		if _, perr := req.URL.Parse(loc); perr != nil {
			resp.Header.Del("Location")
			resp.Header.Set(keptLocation, loc)
		}
	}
	return resp, nil
}

// restoreLocation puts back a Location keepLocation moved aside.
func restoreLocation(resp *http.Response) {
	if loc := resp.Header.Get(keptLocation); loc != "" {
		resp.Header.Del(keptLocation)
		resp.Header.Set("Location", loc)
	}
}
