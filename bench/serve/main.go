// Command serve serves a directory on loopback for the crawl benchmark
// and counts what it served: requests by status, body bytes, and the
// distinct HTML pages answered 200, the same measure for every crawler.
// A directory is answered with its index.html, and a link to .../index.html
// with the file, without net/http's FileServer redirect to .../ (a
// static server such as nginx does not redirect either, and the
// redirects would be a request per directory page for every crawler).
// Files carry an ETag and a Last-Modified made from their size and
// modification time, and conditional requests for an unchanged file are
// answered 304 Not Modified, as a recrawl expects of a static server.
//
// With -synth N it serves a synthetic site of N generated pages instead
// of a directory (synth.go): the same counts, for crawls of any size.
//
//	serve -root DIR [-addr 127.0.0.1:0] [-stats FILE]
//	serve -synth N [-seed 1] [-addr 127.0.0.1:0] [-stats FILE]
//
// It prints its base URL on the first line of standard output, and on
// SIGINT or SIGTERM writes its counts as JSON to -stats (or standard
// error) and exits.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Stats is what the server answered.
type Stats struct {
	Requests  int            `json:"requests"`
	Bytes     int64          `json:"bytes"`
	Status    map[string]int `json:"status"`
	HTMLPages int            `json:"html_pages"` // distinct paths answered 200 text/html
	HTMLBytes int64          `json:"html_bytes"` // their bytes, each path once
	Repeats   int            `json:"repeats"`    // 200 answers for a path already answered 200
}

type counter struct {
	mu    sync.Mutex
	st    Stats
	seen  map[string]bool
	inner http.Handler
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rw := &recorder{ResponseWriter: w, status: http.StatusOK}
	c.inner.ServeHTTP(rw, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.st.Requests++
	c.st.Bytes += rw.bytes
	c.st.Status[strconv.Itoa(rw.status)]++
	if rw.status != http.StatusOK {
		return
	}
	if c.seen[r.URL.Path] {
		c.st.Repeats++
		return
	}
	c.seen[r.URL.Path] = true
	if strings.HasPrefix(rw.Header().Get("Content-Type"), "text/html") {
		c.st.HTMLPages++
		c.st.HTMLBytes += rw.bytes
	}
}

// static answers GET and HEAD with the file at the request's path.
type static struct{ fs http.FileSystem }

func (s static) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Path
	f, err := s.fs.Open(name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if fi.IsDir() {
		f.Close()
		name = strings.TrimSuffix(name, "/") + "/index.html"
		if f, err = s.fs.Open(name); err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		if fi, err = f.Stat(); err != nil || fi.IsDir() {
			http.NotFound(w, r)
			return
		}
	}
	// http.ServeContent answers If-None-Match against this ETag and
	// If-Modified-Since against the modification time with 304.
	w.Header().Set("ETag", fmt.Sprintf(`"%x-%x"`, fi.Size(), fi.ModTime().UnixNano()))
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func main() {
	root := flag.String("root", "", "directory to serve")
	synthPages := flag.Int("synth", 0, "serve a synthetic site of this many pages instead of -root")
	seed := flag.Uint64("seed", 1, "the synthetic site's PRNG seed")
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback)")
	statsPath := flag.String("stats", "", "write the counts as JSON to this file on exit (default: standard error)")
	flag.Parse()
	var site http.Handler
	switch {
	case *root != "" && *synthPages > 0:
		fmt.Fprintln(os.Stderr, "serve: -root and -synth exclude each other")
		os.Exit(2)
	case *synthPages > 0:
		site = synth{n: *synthPages, seed: *seed}
	case *root != "":
		if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
			fmt.Fprintf(os.Stderr, "serve: root %q is not a directory\n", *root)
			os.Exit(2)
		}
		site = static{http.Dir(*root)}
	default:
		fmt.Fprintln(os.Stderr, "serve: -root or -synth is required")
		os.Exit(2)
	}
	if err := run(site, *addr, *statsPath); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}

func run(site http.Handler, addr, statsPath string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	c := &counter{st: Stats{Status: map[string]int{}}, seen: map[string]bool{}, inner: site}
	srv := &http.Server{Handler: c, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("http://%s/\n", ln.Addr())
	os.Stdout.Sync()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)

	c.mu.Lock()
	b, err := json.Marshal(c.st)
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if statsPath == "" {
		_, err = fmt.Fprintln(os.Stderr, string(b))
		return err
	}
	return os.WriteFile(statsPath, append(b, '\n'), 0o644)
}
