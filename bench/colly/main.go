// Command colly is the benchmark's minimal colly crawler: from a seed, it
// follows every <a href> on the seed's host, fragments stripped, with
// eight requests at once (colly's Async and a LimitRule of Parallelism
// 8), and stores nothing. It is a module of its own so that colly never
// enters the crawler's go.mod.
//
//	colly [-parallelism 8] URL
//
// It prints one line of JSON: the pages fetched (200, text/html), the
// responses and failures, and the body bytes received.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/gocolly/colly/v2"
)

// Result is what a crawl saw.
type Result struct {
	Pages     int   `json:"pages"`     // 200 answers with a text/html body
	Responses int   `json:"responses"` // 2xx answers
	Errors    int   `json:"errors"`    // error statuses and failed requests
	Bytes     int64 `json:"bytes"`     // body bytes of the 2xx answers
}

func main() {
	parallelism := flag.Int("parallelism", 8, "requests at once")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: colly [-parallelism N] URL")
		os.Exit(2)
	}
	res, err := crawl(flag.Arg(0), *parallelism)
	if err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(res)
}

func crawl(seed string, parallelism int) (Result, error) {
	u, err := url.Parse(seed)
	if err != nil {
		return Result{}, fmt.Errorf("seed %q: %w", seed, err)
	}
	c := colly.NewCollector(colly.AllowedDomains(u.Hostname()), colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: parallelism}); err != nil {
		return Result{}, fmt.Errorf("limit: %w", err)
	}
	var mu sync.Mutex
	var res Result
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		link := e.Request.AbsoluteURL(e.Attr("href"))
		if link == "" {
			return
		}
		if i := strings.IndexByte(link, '#'); i >= 0 {
			link = link[:i]
		}
		e.Request.Visit(link) // already visited, or off the host: refused, as it should be
	})
	c.OnResponse(func(r *colly.Response) {
		mu.Lock()
		defer mu.Unlock()
		res.Responses++
		res.Bytes += int64(len(r.Body))
		if r.StatusCode == 200 && strings.HasPrefix(r.Headers.Get("Content-Type"), "text/html") {
			res.Pages++
		}
	})
	c.OnError(func(_ *colly.Response, _ error) {
		mu.Lock()
		res.Errors++
		mu.Unlock()
	})
	if err := c.Visit(seed); err != nil {
		return res, fmt.Errorf("visit %s: %w", seed, err)
	}
	c.Wait()
	return res, nil
}
