package fetch

import (
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/robots"
)

// A robots.txt with lines we cannot read is applied without them (not
// allowed wholesale), and the crawl log says which rule decided and
// which lines were ignored.
func TestRobotsIgnoredLinesAreReported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "Disallow: /orphan/\n"+
				"User-agent: *\n"+
				"Crawl-delay: soon\n"+
				"Disallow: /private/\n")
			return
		}
		fmt.Fprint(w, "<p>hello</p>")
	}))
	defer srv.Close()
	h := newHarness(t, nil, nil)

	tests := []struct {
		name     string
		path     string
		code     crawl.ExitCode
		contains []string
	}{
		{"disallowed by the * group", "/private/x", crawl.ExitRobotsDisallowed, []string{
			`disallowed by robots.txt: robots.txt group "*", rule Disallow: /private/ (line 4)`,
			`line 1 "Disallow: /orphan/" (rule before any user-agent line)`,
			`line 3 "Crawl-delay: soon" (crawl-delay is not a number of seconds)`,
		}},
		{"allowed, with the ignored lines noted", "/orphan/y", crawl.ExitComplete, []string{
			`robots.txt ignored line 1 "Disallow: /orphan/"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr, _ := h.crawl(t, srv.URL+tt.path, nil)
			if cr.Log.ExitCode != tt.code {
				t.Fatalf("exit code %v, want %v", cr.Log.ExitCode, tt.code)
			}
			if cr.Log.Message == nil {
				t.Fatal("no crawl log message")
			}
			for _, want := range tt.contains {
				if !strings.Contains(*cr.Log.Message, want) {
					t.Errorf("message %q does not say %q", *cr.Log.Message, want)
				}
			}
		})
	}
}

// TestRobotsSitemapTooLong: a robots.txt Sitemap line longer than an
// event may carry is not enqueued (the scheduler would dead-letter it);
// the others are.
func TestRobotsSitemapTooLong(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/%s\nSitemap: %s/sitemap.xml\n",
				srv.URL, strings.Repeat("x", crawl.MaxURLLength), srv.URL)
			return
		}
		fmt.Fprint(w, "<p>hello</p>")
	}))
	defer srv.Close()
	h := newHarness(t, nil, nil)
	if cr, _ := h.crawl(t, srv.URL+"/", nil); cr.Log.ExitCode != crawl.ExitComplete {
		t.Fatalf("exit %v, want complete", cr.Log.ExitCode)
	}
	var got []string
	for _, b := range h.enqueue.bodies {
		ev, err := crawl.ParseEnqueueEvent(b)
		if err != nil {
			t.Fatalf("an event the scheduler cannot read: %v", err)
		}
		got = append(got, ev.URL)
	}
	if len(got) != 1 || got[0] != srv.URL+"/sitemap.xml" {
		t.Errorf("enqueued %q, want only %s/sitemap.xml", got, srv.URL)
	}
}

// TestRobotsReadAsTheServerMeantIt: a robots.txt cut at robots.MaxSize
// loses the line the cut falls in (read whole, a cut "Allow:
// /private/ok-only" allows all of /private) but for a Disallow (a cut
// one disallows more), keeps a line that ends just there; a gzipped one
// is decoded as a page is; and one whose coding cannot be undone is
// read as it came. The client is the fetcher's (no transparent gzip).
func TestRobotsReadAsTheServerMeantIt(t *testing.T) {
	head := "User-agent: *\nDisallow: /private\n"
	// padded makes a file of start, comment lines, and last, with byte
	// robots.MaxSize at offset at of last.
	padded := func(start, last string, at int) string {
		n := robots.MaxSize - len(start) - at
		var b strings.Builder
		b.WriteString(start)
		for n > 0 {
			line := min(n, 200)
			if line < 2 {
				b.WriteString("\n")
			} else {
				b.WriteString("#" + strings.Repeat("-", line-2) + "\n")
			}
			n -= line
		}
		return b.String() + last
	}
	tests := []struct {
		name     string
		robots   string
		encoding string // Content-Encoding: "gzip" compresses the file; any other is only named
		path     string
		want     crawl.ExitCode
	}{
		{"a line cut at the limit is left out", padded(head, "Allow: /private/ok-only-this\n", len("Allow: /private")), "", "/private", crawl.ExitRobotsDisallowed},
		{"a Disallow cut at the limit is kept", padded("User-agent: *\n", "Disallow: /secret-area\n", len("Disallow: /secret")), "", "/secret-area", crawl.ExitRobotsDisallowed},
		{"a line that ends at the limit is kept", padded(head, "Disallow: /secret\nAllow: /", len("Disallow: /secret")), "", "/secret", crawl.ExitRobotsDisallowed},
		{"the control: allowed", padded(head, "Disallow: /secret\nAllow: /", len("Disallow: /secret")), "", "/open", crawl.ExitComplete},
		{"gzipped", head, "gzip", "/private", crawl.ExitRobotsDisallowed},
		{"gzipped, allowed", head, "gzip", "/open", crawl.ExitComplete},
		{"a coding it does not know, read as it came", head, "utf-8", "/private", crawl.ExitRobotsDisallowed},
		{"a coding it does not know, the host not shut out", head, "utf-8", "/open", crawl.ExitComplete},
		{"an empty body said to be gzip: an empty file", "", "gzip-empty", "/private", crawl.ExitComplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/robots.txt" {
					fmt.Fprint(w, "<p>hello</p>")
					return
				}
				switch tt.encoding {
				case "":
					fmt.Fprint(w, tt.robots)
				case "gzip":
					// Whether asked for or not, as some servers do.
					w.Header().Set("Content-Encoding", "gzip")
					zw := gzip.NewWriter(w)
					zw.Write([]byte(tt.robots))
					zw.Close()
				case "gzip-empty":
					w.Header().Set("Content-Encoding", "gzip")
				default:
					w.Header().Set("Content-Encoding", tt.encoding)
					fmt.Fprint(w, tt.robots)
				}
			}))
			defer srv.Close()
			h := newHarness(t, &http.Client{Transport: &http.Transport{DisableCompression: true}}, nil)
			cr, _ := h.crawl(t, srv.URL+tt.path, nil)
			if cr.Log.ExitCode != tt.want {
				msg := ""
				if cr.Log.Message != nil {
					msg = crawl.Truncate(*cr.Log.Message, 300)
				}
				t.Errorf("%s: exit code %v (%s), want %v", tt.path, cr.Log.ExitCode, msg, tt.want)
			}
		})
	}
}
