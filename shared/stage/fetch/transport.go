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
