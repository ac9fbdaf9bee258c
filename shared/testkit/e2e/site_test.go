package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hit is one request the site received and how it answered.
type hit struct {
	Path        string
	At          time.Time
	IfNoneMatch string
	Status      int
}

// site is the test site: pages with validators (ETag, Last-Modified)
// that answer a matching conditional GET with 304, two pages with the
// same text, a redirect chain, a page robots.txt disallows, a missing
// page, a text file, and a page whose text changes when the test says.
type site struct {
	*httptest.Server
	mu      sync.Mutex
	log     []hit
	version atomic.Int32 // of /changing.html
}

// lastModified is every page's Last-Modified.
var lastModified = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// The site's paths by what the crawl must make of them.
var (
	pages = []string{"/", "/a.html", "/b.html", "/changing.html", "/chain/end.html"}
	dups  = []string{"/dup-a.html", "/dup-b.html"}
	// mirrors are one article behind two sets of chrome: near
	// duplicates, not exact ones.
	mirrors = []string{"/mirror-a.html", "/mirror-b.html"}
	chain   = []string{"/chain/1", "/chain/2", "/chain/end.html"}
	// validated are the paths served with an ETag: a recrawl asks for them
	// conditionally.
	validated = append(append(append([]string{"/files/notes.txt"}, pages...), dups...), mirrors...)
)

const disallowed = "/private/secret.html"

// mirrorText is the mirrors' article: long enough for a SimHash.
const mirrorText = `The keeper of the harbour light climbs the spiral stair each evening, trims the wick,
polishes the great lens and winds the clockwork that turns it. Through the night the beam sweeps the bay
every ten seconds, and the keeper writes the weather, the ships that pass and the hours of fog in the
logbook. At dawn the lamp is put out, the curtains are drawn around the lens to keep the sun from it, and
the keeper sleeps until the afternoon, when the brass is cleaned again and the oil tank filled.`

// newSite starts the site on 127.0.0.1, where functions that run as
// host processes (ministack) reach it. Functions in containers
// (LocalStack with Docker) cannot: CRAWLER_E2E_SITE_HOST names the host
// they reach this machine by (host.docker.internal, say), and the site
// then listens on every interface.
func newSite() *site {
	s := &site{}
	s.version.Store(1)
	host := os.Getenv("CRAWLER_E2E_SITE_HOST")
	if host == "" {
		s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
		return s
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		panic(fmt.Sprintf("e2e site: listen: %v", err))
	}
	s.Server.Listener = l
	s.Server.Start()
	s.Server.URL = fmt.Sprintf("http://%s:%d", host, l.Addr().(*net.TCPAddr).Port)
	return s
}

func (s *site) hits() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.log...)
}

// hitsOf returns the requests for one path, in order.
func (s *site) hitsOf(path string) []hit {
	var out []hit
	for _, h := range s.hits() {
		if h.Path == path {
			out = append(out, h)
		}
	}
	return out
}

// body returns what path serves now, its ETag and its content type; ok
// is false for paths that are not content.
func (s *site) body(path string) (body, etag, ctype string, ok bool) {
	page := func(title, text string, links ...string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><html lang=en><head><title>%s</title></head><body><h1>%s</h1><p>%s</p>\n", title, title, text)
		for _, l := range links {
			fmt.Fprintf(&b, "<a href=%q>%s</a>\n", l, l)
		}
		b.WriteString("</body></html>\n")
		return b.String()
	}
	html := "text/html; charset=utf-8"
	switch path {
	case "/":
		return page("Harbour home", "Welcome to the harbour of the end-to-end test.",
			"a.html", "/b.html", "/dup-a.html", "/chain/1", disallowed, "/missing.html",
			"/changing.html", "/files/notes.txt", "/mirror-a.html", "/mirror-b.html"), `"home-1"`, html, true
	case "/a.html":
		return page("Anchors", "Anchors hold the tugboat zephyrine at berth.", "b.html", "/"), `"a-1"`, html, true
	case "/b.html":
		return page("Buoys", "Buoys mark the channel by the breakwater.", "a.html", "/dup-b.html"), `"b-1"`, html, true
	case "/dup-a.html", "/dup-b.html":
		return page("Tide table", "High water at dawn, low water at dusk."), `"dup-1"`, html, true
	case "/mirror-a.html", "/mirror-b.html":
		chrome := map[string]string{"/mirror-a.html": "Harbour mirror, updated daily", "/mirror-b.html": "Coast guard archive copy"}[path]
		return "<!doctype html><html lang=en><head><title>Keeping the light</title></head><body><nav>" + chrome +
			"</nav><main><h1>Keeping the light</h1><p>" + mirrorText + "</p></main><footer>" + chrome +
			"</footer></body></html>\n", `"mirror-1"`, html, true
	case "/chain/end.html":
		return page("End of the chain", "The redirects end at the lock gate."), `"end-1"`, html, true
	case "/changing.html":
		v := s.version.Load()
		return page(fmt.Sprintf("Notice %d", v), fmt.Sprintf("Notice number %d: the ferry quixotica sails at %d.", v, 8+v)),
			fmt.Sprintf(`"changing-%d"`, v), html, true
	case "/files/notes.txt":
		return "Harbour master's notes.\n", `"notes-1"`, "text/plain; charset=utf-8", true
	case disallowed:
		return page("Secret", "Never to be fetched."), "", html, true
	}
	return "", "", "", false
}

func (s *site) serve(w http.ResponseWriter, r *http.Request) {
	h := hit{Path: r.URL.RequestURI(), At: time.Now(), IfNoneMatch: r.Header.Get("If-None-Match")}
	defer func() {
		s.mu.Lock()
		s.log = append(s.log, h)
		s.mu.Unlock()
	}()
	switch h.Path {
	case "/robots.txt":
		h.Status = 200
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		return
	case "/chain/1":
		h.Status = http.StatusMovedPermanently
		http.Redirect(w, r, "/chain/2", h.Status)
		return
	case "/chain/2":
		h.Status = http.StatusFound
		http.Redirect(w, r, "/chain/end.html", h.Status)
		return
	}
	body, etag, ctype, ok := s.body(h.Path)
	if !ok {
		h.Status = http.StatusNotFound
		http.NotFound(w, r)
		return
	}
	if etag != "" {
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", lastModified.Format(http.TimeFormat))
		if h.IfNoneMatch == etag {
			h.Status = http.StatusNotModified
			w.WriteHeader(h.Status)
			return
		}
	}
	h.Status = http.StatusOK
	w.Header().Set("Content-Type", ctype)
	fmt.Fprint(w, body)
}
