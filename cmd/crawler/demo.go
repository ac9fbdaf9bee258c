package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/serverless-crawler/crawler/shared/local/pipeline"
	"github.com/serverless-crawler/crawler/shared/testkit/demosite"
)

// cmdDemo serves the demo site on loopback, crawls it with the same code
// as `crawler crawl`, then shows a page's status and a search.
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f crawlFlags
	f.register(fs)
	query := fs.String("query", "lamp", "search for these `words` once the crawl is done")
	// The demo's own defaults, shown as such by -h.
	for name, v := range map[string]string{"delay": "10ms", "data": "demo-data"} {
		if err := fs.Set(name, v); err != nil {
			return err
		}
		fs.Lookup(name).DefValue = v
	}
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: crawler demo [flags]\n\nServes a demo site on 127.0.0.1, crawls it into a fresh data directory as 'crawler crawl' would, then shows a page's status and a search.")
		printFlags(fs, stderr)
	}
	if _, err := parseInterspersed(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("serve demo site: %w", err)
	}
	srv := &http.Server{Handler: demosite.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	site := "http://" + ln.Addr().String() + "/"
	fmt.Fprintf(stdout, "demo site serving at %s\n\n$ crawler crawl --data %s --delay %v %s\n", site, f.data, f.delay, site)

	log, err := f.logger(stderr)
	if err != nil {
		return err
	}
	if err := resetDemoDir(f.data); err != nil {
		return usageError{err}
	}
	dd, err := pipeline.OpenDataDir(ctx, f.data)
	if err != nil {
		return usageError{err}
	}
	if err := os.WriteFile(filepath.Join(f.data, demoMarker), nil, 0o644); err != nil {
		dd.Close()
		return err
	}
	cfg, err := f.config(ctx, dd, []string{site}, log)
	if err != nil {
		dd.Close()
		return err
	}
	prog := newProgress(stderr, f.quiet)
	cfg.Progress = prog.update
	res, err := dd.Run(ctx, cfg)
	prog.done()
	printSummary(stdout, res)
	if err != nil {
		dd.Close()
		return err
	}
	st, err := dd.DB.Status(ctx, site+"docs/lamps.html")
	if err != nil {
		dd.Close()
		return err
	}
	fmt.Fprintf(stdout, "\n$ crawler status --data %s %sdocs/lamps.html\n", f.data, site)
	b, _ := json.MarshalIndent(st, "", "  ")
	fmt.Fprintf(stdout, "%s\n", b)
	hits, err := dd.DB.Search(ctx, *query, 5)
	dd.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n$ crawler search --data %s %s\n", f.data, *query)
	return printHits(stdout, *query, hits, false)
}

// demoMarker marks a data directory the demo made, which the demo may
// empty on its next run (the demo site's port changes every run).
const demoMarker = "DEMO"

func resetDemoDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) || err == nil && len(entries) == 0 {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, demoMarker)); err != nil {
		return fmt.Errorf("%s holds data the demo did not make; give the demo another --data directory", dir)
	}
	return os.RemoveAll(dir)
}
