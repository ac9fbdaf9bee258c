package fetch

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// deflated compresses b with zlib ("deflate") n times over.
func deflated(b []byte, n int) []byte {
	for range n {
		var out bytes.Buffer
		zw := zlib.NewWriter(&out)
		zw.Write(b)
		zw.Close()
		b = out.Bytes()
	}
	return b
}

// TestContentCodingsBounded: a body coded up to MaxCodings times is
// undone; one whose Content-Encoding names more codings is recorded
// bad-content, naming the limit, with no decoder set up for each (a
// header of 64 KiB names 7,000); a robots.txt naming more is read as it
// came, as one with a coding the fetcher does not know.
func TestContentCodingsBounded(t *testing.T) {
	page := []byte("<html><title>coded</title><p>the keeper's log</p></html>")
	robotsTxt := "User-agent: *\nDisallow: /private\n"
	tests := []struct {
		name   string
		codes  int    // deflate codings named
		coded  int    // times the body is really deflated
		path   string // the page asked for
		robots bool   // the codings are robots.txt's, not the page's
		want   crawl.ExitCode
	}{
		{"one coding", 1, 1, "/page", false, crawl.ExitComplete},
		{"MaxCodings codings", MaxCodings, MaxCodings, "/page", false, crawl.ExitComplete},
		{"one more", MaxCodings + 1, MaxCodings + 1, "/page", false, crawl.ExitBadContent},
		{"a header full of them", 7000, 0, "/page", false, crawl.ExitBadContent},
		{"robots.txt naming too many, read as it came", 7000, 0, "/private", true, crawl.ExitRobotsDisallowed},
		{"robots.txt naming too many, the host not shut out", 7000, 0, "/open", true, crawl.ExitComplete},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names := strings.TrimSuffix(strings.Repeat("deflate, ", tt.codes), ", ")
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, coded := page, !tt.robots
				switch {
				case r.URL.Path == "/robots.txt" && !tt.robots:
					http.NotFound(w, r)
					return
				case r.URL.Path == "/robots.txt":
					body, coded = []byte(robotsTxt), true
				}
				w.Header().Set("Content-Type", "text/html")
				if coded {
					w.Header().Set("Content-Encoding", names)
					body = deflated(body, tt.coded)
				}
				w.Write(body)
			}))
			defer srv.Close()
			h := newHarness(t, &http.Client{Transport: &http.Transport{DisableCompression: true}}, nil)
			cr, _ := h.crawl(t, srv.URL+tt.path, nil)
			msg := ""
			if cr.Log.Message != nil {
				msg = *cr.Log.Message
			}
			if cr.Log.ExitCode != tt.want {
				t.Fatalf("exit code %v (%s), want %v", cr.Log.ExitCode, crawl.Truncate(msg, 300), tt.want)
			}
			switch {
			case tt.want == crawl.ExitBadContent && !strings.Contains(msg, fmt.Sprintf("more than the %d codings", MaxCodings)):
				t.Errorf("message %q; want it to name the codings and the limit", msg)
			case tt.want == crawl.ExitComplete && !tt.robots && (cr.File == nil || cr.File.FileSize == nil || *cr.File.FileSize != int64(len(page))):
				t.Errorf("file %+v; want the page undone, %d bytes", cr.File, len(page))
			}
		})
	}
}

// TestEncodingsBounded: a Content-Encoding header is listed outermost
// first, and no further than one coding past MaxCodings, however many
// it names (a header of 64 KiB names 32,768).
func TestEncodingsBounded(t *testing.T) {
	for _, tt := range []struct {
		h    string
		want []string
	}{
		{"", nil},
		{"identity", nil},
		{"gzip", []string{"gzip"}},
		{"deflate, Gzip", []string{"gzip", "deflate"}},
		{"br, identity, gzip", []string{"gzip", "br"}},
		{strings.Repeat("a,", 32768), []string{"a", "a", "a", "a", "a", "a"}},
	} {
		if got := encodings(tt.h); !slices.Equal(got, tt.want) {
			t.Errorf("encodings(%.40q) = %v, want %v", tt.h, got, tt.want)
		}
	}
}
