// Command run is the crawl benchmark's runner: it serves a directory on
// loopback (bench/serve) and crawls it with each tool, several runs
// each, interleaved (run 1 of every tool, then run 2, ...), a fresh
// server and a fresh output directory every time. For each run it
// measures the wall time, the CPU time and the peak RSS of the tool's
// process (from its rusage), what the tool says it covered and what the
// server answered; then it prints a markdown table of medians, with
// each tool's wall time as a ratio to wget2's. The tool crawler-recrawl
// is the crawler checking the unchanged site again (recrawl.go).
//
// With -synth N the server is bench/serve's synthetic site of N
// generated pages instead of the -root directory. -scale and -levels
// run the crawler alone over a range of site sizes or concurrencies
// (sweep.go).
//
// bench/run.sh builds everything and calls it; see BENCHMARKS.md.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	_ "modernc.org/sqlite"
)

// config is the runner's flags.
type config struct {
	root      string // directory to serve
	synth     int    // or the pages of a synthetic site (bench/serve -synth)
	scale     []int  // crawl synthetic sites of these sizes (sweep.go)
	levels    []int  // crawl at these concurrencies (sweep.go)
	out       string // results directory
	runs      int
	tools     []string
	serve     string // bench/serve binary
	crawler   string // bin/crawler
	colly     string // bench/colly binary
	wget2     string
	wget2Lib  string // LD_LIBRARY_PATH for wget2
	conc      int
	profile   bool          // one more crawler run, with --cpuprofile, not timed
	keep      bool          // keep each run's output once measured
	timeout   time.Duration // 0: 10 minutes, and 100 ms more per synthetic page
	startPath string
	inputs    string   // the inputs' versions, for the report
	extra     []string // more flags for `crawler crawl`
}

// Run is one crawl by one tool.
type Run struct {
	Tool       string  `json:"tool"`
	N          int     `json:"run"`
	SitePages  int     `json:"site_pages,omitempty"` // the synthetic site's pages
	Conc       int     `json:"concurrency"`
	WallSec    float64 `json:"wall_s"`
	UserSec    float64 `json:"user_s"`
	SysSec     float64 `json:"sys_s"`
	MaxRSSKB   int64   `json:"max_rss_kb"`
	ExitCode   int     `json:"exit_code"`
	TimedOut   bool    `json:"timed_out,omitempty"` // killed at -timeout: the counts are what it did until then
	ToolPages  int     `json:"tool_html_pages"`     // as the tool counts them (see countPages)
	ToolBytes  int64   `json:"tool_bytes"`
	Server     Stats   `json:"server"`
	OutputSize int64   `json:"output_bytes"` // what the tool left on disk
	// InFlightSec is, for the crawler, the time its requests were in
	// flight (request.request_duration_ms, summed): with one request at a
	// time per host, the least wall time politeness allows this crawl.
	InFlightSec float64 `json:"in_flight_s,omitempty"`
	// LastFetchSec is, for the crawler, when it sent its last request,
	// in whole seconds from its start: the rest of the wall time went to
	// work queued behind the fetches.
	LastFetchSec float64 `json:"last_fetch_s,omitempty"`
}

// Stats is bench/serve's count of what it answered.
type Stats struct {
	Requests  int            `json:"requests"`
	Bytes     int64          `json:"bytes"`
	Status    map[string]int `json:"status"`
	HTMLPages int            `json:"html_pages"`
	HTMLBytes int64          `json:"html_bytes"`
	Repeats   int            `json:"repeats"`
}

func main() {
	var c config
	var tools string
	flag.StringVar(&c.root, "root", "", "directory to serve (the python3.11-doc HTML tree)")
	flag.IntVar(&c.synth, "synth", 0, "serve a synthetic site of this many pages instead of -root, which is then ignored (bench/serve -synth)")
	flag.StringVar(&c.out, "out", "", "results directory (default .local-bench/results/TIME)")
	flag.IntVar(&c.runs, "runs", 5, "runs per tool")
	flag.StringVar(&tools, "tools", "crawler,crawler-recrawl,wget2,colly,wget2-serial", "tools to run, comma-separated: crawler, crawler-recrawl (a crawl, then --recrawl timed), wget2, colly, wget2-serial (--max-threads=1)")
	flag.StringVar(&c.serve, "serve", "bin/bench-serve", "bench/serve binary")
	flag.StringVar(&c.crawler, "crawler", "bin/crawler", "crawler binary")
	flag.StringVar(&c.colly, "colly", "bin/bench-colly", "bench/colly binary")
	flag.StringVar(&c.wget2, "wget2", "wget2", "wget2 binary")
	flag.StringVar(&c.wget2Lib, "wget2-lib", "", "LD_LIBRARY_PATH for wget2")
	flag.IntVar(&c.conc, "concurrency", 8, "the tools' concurrency")
	flag.BoolVar(&c.keep, "keep", false, "keep each run's output (crawl data, mirrored pages) once measured; by default it is removed, since one run of a 100,000-page site writes gigabytes")
	flag.BoolVar(&c.profile, "profile", false, "after the timed runs, one crawler run with --cpuprofile (not in the table)")
	flag.DurationVar(&c.timeout, "timeout", 0, "longest one run may take (0: 10 minutes, plus 100 ms per synthetic page)")
	flag.StringVar(&c.startPath, "start", "index.html", "path of the seed URL on the server")
	flag.StringVar(&c.inputs, "inputs", "", "the inputs' versions, printed with the results")
	extra := flag.String("crawler-flags", "", "more flags for crawler crawl, space-separated (e.g. --tokens=false)")
	scale := flag.String("scale", "", "crawl synthetic sites of these sizes with the crawler alone, comma-separated (e.g. 10000,30000,100000), and print how the time grows")
	levels := flag.String("levels", "", "crawl -root or -synth with the crawler alone at these --concurrency levels, comma-separated (e.g. 1,2,4,8,32)")
	flag.Parse()
	c.tools = strings.Split(tools, ",")
	c.extra = strings.Fields(*extra)
	var err error
	if c.scale, err = parseInts(*scale); err != nil {
		fmt.Fprintln(os.Stderr, "bench/run: -scale:", err)
		os.Exit(2)
	}
	slices.Sort(c.scale) // the smallest first: the sweep stops growing at a timeout
	if c.levels, err = parseInts(*levels); err != nil {
		fmt.Fprintln(os.Stderr, "bench/run: -levels:", err)
		os.Exit(2)
	}
	if err := run(context.Background(), c); err != nil {
		fmt.Fprintln(os.Stderr, "bench/run:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, c config) error {
	sweeping := len(c.scale) > 0 || len(c.levels) > 0
	switch {
	case len(c.scale) > 0 && len(c.levels) > 0:
		return errors.New("-scale and -levels exclude each other")
	case len(c.scale) == 0 && c.root == "" && c.synth == 0:
		return errors.New("-root or -synth is required")
	case c.runs < 1:
		return fmt.Errorf("-runs must be at least 1")
	}
	for _, t := range c.tools {
		if !slices.Contains([]string{"crawler", "crawler-recrawl", "wget2", "wget2-serial", "colly"}, t) {
			return fmt.Errorf("unknown tool %q (crawler, crawler-recrawl, wget2, wget2-serial, colly)", t)
		}
	}
	if c.out == "" {
		c.out = filepath.Join(".local-bench", "results", time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	loadBefore := loadavg()
	var runs []Run
	var what, body string
	var err error
	switch {
	case len(c.scale) > 0:
		what = fmt.Sprintf("crawler alone on synthetic sites of %s pages, %d runs per size, concurrency %d", joinInts(c.scale), c.runs, c.conc)
		runs, err = c.sweep(ctx, c.scale, func(c config, n int) config {
			c.synth, c.out = n, filepath.Join(c.out, fmt.Sprintf("synth-%d", n))
			return c
		}, true)
		body = scaleTable(c.scale, runs)
	case len(c.levels) > 0:
		what = fmt.Sprintf("crawler alone at --concurrency %s, %d runs per level", joinInts(c.levels), c.runs)
		runs, err = c.sweep(ctx, c.levels, func(c config, n int) config {
			c.conc, c.out = n, filepath.Join(c.out, fmt.Sprintf("concurrency-%d", n))
			return c
		}, false)
		body = levelsTable(c.levels, runs)
	default:
		what = fmt.Sprintf("%d runs per tool, interleaved, concurrency %d", c.runs, c.conc)
		runs, err = c.rounds(ctx)
		body = table(c.tools, runs)
	}
	if err != nil && len(runs) == 0 {
		return err
	}
	// After a failed run, the report of the runs before it, then the error.
	loadAfter := loadavg()
	if c.profile && err == nil && !sweeping && slices.Contains(c.tools, "crawler") {
		prof := filepath.Join(c.out, "crawler.prof")
		if _, err := c.one(ctx, "crawler", 0, prof); err != nil {
			return fmt.Errorf("profiled crawler run: %w", err)
		}
		fmt.Fprintf(os.Stderr, "CPU profile of a whole crawl: %s (go tool pprof -top %s %s)\n", prof, c.crawler, prof)
	}
	raw, _ := json.MarshalIndent(runs, "", "  ")
	if err := os.WriteFile(filepath.Join(c.out, "runs.json"), raw, 0o644); err != nil {
		return err
	}
	report := header(c, what, loadBefore, loadAfter) + body
	if err := os.WriteFile(filepath.Join(c.out, "results.md"), []byte(report), 0o644); err != nil {
		return err
	}
	fmt.Print(report)
	fmt.Fprintf(os.Stderr, "results in %s (results.md, runs.json)\n", c.out)
	return err
}

// killed notes a run that was killed at -timeout.
func killed(r Run) string {
	if r.TimedOut {
		return " KILLED at -timeout"
	}
	return ""
}

// rounds runs each tool once, -runs times over.
func (c config) rounds(ctx context.Context) ([]Run, error) {
	var runs []Run
	for i := 1; i <= c.runs; i++ {
		for _, tool := range c.tools {
			r, err := c.one(ctx, tool, i, "")
			if err == nil && r.TimedOut {
				err = fmt.Errorf("killed after %v (-timeout)", c.runTimeout())
			}
			if err != nil {
				return runs, fmt.Errorf("%s run %d: %w", tool, i, err)
			}
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// one runs tool once against a fresh server, in a fresh directory. For
// crawler-recrawl that is two crawls into the same data directory: a
// fresh crawl (not timed, its files under first/), then the timed
// recrawl, against a new server on the first one's address so that the
// URLs are the same.
func (c config) one(ctx context.Context, tool string, n int, cpuprofile string) (Run, error) {
	dir, err := filepath.Abs(filepath.Join(c.out, "runs", fmt.Sprintf("%s-%d", tool, n)))
	if err != nil {
		return Run{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return Run{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Run{}, err
	}
	data := filepath.Join(dir, "out")
	addr := "127.0.0.1:0"
	if tool == "crawler-recrawl" {
		first := filepath.Join(dir, "first")
		if err := os.MkdirAll(first, 0o755); err != nil {
			return Run{}, err
		}
		fresh, base, err := c.timed(ctx, "crawler", first, data, addr, "")
		if err == nil && fresh.TimedOut {
			err = fmt.Errorf("killed after %v (-timeout)", c.runTimeout())
		}
		if err != nil {
			return Run{}, fmt.Errorf("the crawl before the recrawl: %w", err)
		}
		addr = strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	}
	r, _, err := c.timed(ctx, tool, dir, data, addr, cpuprofile)
	if err != nil {
		return r, err
	}
	r.N = n
	if r.ToolPages, r.ToolBytes, err = countPages(tool, data, filepath.Join(dir, "stdout")); err != nil {
		return r, err
	}
	if strings.HasPrefix(tool, "crawler") {
		if r.InFlightSec, err = inFlight(data); err != nil {
			return r, err
		}
		if r.LastFetchSec, err = lastFetch(data); err != nil {
			return r, err
		}
	}
	r.OutputSize = dirSize(data)
	if !c.keep {
		// Measured; the stdout, stderr and server counts stay (first/
		// holds those of crawler-recrawl's untimed crawl, whose data is
		// data too).
		if err := os.RemoveAll(data); err != nil {
			return r, err
		}
	}
	fmt.Fprintf(os.Stderr, "%-8s run %d: %6.2f s wall, %6.2f s cpu, %4d MB peak RSS, %d HTML pages (server: %d requests, %d HTML pages, %d not modified, %.1f MB)%s\n",
		tool, n, r.WallSec, r.UserSec+r.SysSec, r.MaxRSSKB/1024, r.ToolPages, r.Server.Requests, r.Server.HTMLPages, r.Server.Status["304"], float64(r.Server.Bytes)/1e6, killed(r))
	return r, nil
}

// timed starts a server on addr, runs tool against it with its output
// in data, and returns the run's times and the server's counts, and the
// server's base URL. The tool's stdout and stderr and the server's
// counts are files in dir.
func (c config) timed(ctx context.Context, tool, dir, data, addr, cpuprofile string) (Run, string, error) {
	statsPath := filepath.Join(dir, "server.json")
	srv, base, err := startServer(c.serve, append(c.site(), "-addr", addr, "-stats", statsPath))
	if err != nil {
		return Run{}, "", err
	}
	cmd, err := c.command(tool, base+c.startPath, data, cpuprofile)
	if err != nil {
		stopServer(srv)
		return Run{}, "", err
	}
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		stopServer(srv)
		return Run{}, "", err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		stopServer(srv)
		return Run{}, "", err
	}
	defer stderr.Close()
	cmd.Stdout, cmd.Stderr = stdout, stderr

	start := time.Now()
	if err := cmd.Start(); err != nil {
		stopServer(srv)
		return Run{}, "", fmt.Errorf("start %s: %w", tool, err)
	}
	timer := time.AfterFunc(c.runTimeout(), func() { cmd.Process.Kill() })
	werr := cmd.Wait()
	wall := time.Since(start)
	timedOut := !timer.Stop()
	if err := stopServer(srv); err != nil {
		return Run{}, "", err
	}
	r := Run{Tool: tool, SitePages: c.synth, Conc: c.conc, WallSec: wall.Seconds(), ExitCode: cmd.ProcessState.ExitCode(), TimedOut: timedOut}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.MaxRSSKB = ru.Maxrss // KiB on Linux
		r.UserSec = time.Duration(ru.Utime.Nano()).Seconds()
		r.SysSec = time.Duration(ru.Stime.Nano()).Seconds()
	}
	// wget2 exits 8 when a server answered an error (the tree's few 404s).
	if werr != nil && !timedOut && !(strings.HasPrefix(tool, "wget2") && r.ExitCode == 8) {
		return r, "", fmt.Errorf("%s: %v (see %s)", tool, werr, stderr.Name())
	}
	b, err := os.ReadFile(statsPath)
	if err != nil {
		return r, "", fmt.Errorf("server stats: %w", err)
	}
	if err := json.Unmarshal(b, &r.Server); err != nil {
		return r, "", fmt.Errorf("server stats: %w", err)
	}
	return r, base, nil
}

// command is the command line that crawls from seed with tool, its
// output in data.
func (c config) command(tool, seed, data, cpuprofile string) (*exec.Cmd, error) {
	switch tool {
	case "crawler", "crawler-recrawl":
		args := []string{"crawl", "--data", data, "--delay", "0", "--concurrency", fmt.Sprint(c.conc), "--allow-private", "--quiet"}
		args = append(args, c.extra...)
		if cpuprofile != "" {
			args = append(args, "--cpuprofile", cpuprofile)
		}
		if tool == "crawler-recrawl" {
			// Every URL in data again, with conditional requests.
			return exec.Command(c.crawler, append(args, "--recrawl")...), nil
		}
		return exec.Command(c.crawler, append(args, seed)...), nil
	case "wget2", "wget2-serial":
		// wget2-serial is one request at a time: the crawler's politeness
		// (one request in flight per host) with wget2's per-request cost.
		threads := c.conc
		if tool == "wget2-serial" {
			threads = 1
		}
		if err := os.MkdirAll(data, 0o755); err != nil {
			return nil, err
		}
		cmd := exec.Command(c.wget2, "--no-config", "-r", "-l", "inf", fmt.Sprintf("--max-threads=%d", threads), "-q", "-P", data, seed)
		if c.wget2Lib != "" {
			cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+c.wget2Lib)
		}
		return cmd, nil
	case "colly":
		return exec.Command(c.colly, "-parallelism", fmt.Sprint(c.conc), seed), nil
	}
	return nil, fmt.Errorf("unknown tool %q", tool)
}

// countPages returns the HTML pages a tool says it fetched (200,
// text/html) and the body bytes: for the crawler from crawl.db's file
// and request tables, for wget2 the .html files it saved, for colly its
// own count.
func countPages(tool, data, stdoutPath string) (int, int64, error) {
	switch tool {
	case "crawler-recrawl":
		return recrawlPages(data)
	case "crawler":
		db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "crawl.db")+"?mode=ro")
		if err != nil {
			return 0, 0, err
		}
		defer db.Close()
		var pages int
		if err := db.QueryRow(`SELECT count(DISTINCT f.url_id) FROM file f JOIN mimetype m ON m.mimetype_id=f.mimetype_id
			JOIN request r ON r.request_id=f.request_id WHERE m.mimetype='text/html' AND r.http_status_code=200`).Scan(&pages); err != nil {
			return 0, 0, fmt.Errorf("count pages in crawl.db: %w", err)
		}
		var bytes int64
		if err := db.QueryRow(`SELECT coalesce(sum(file_size),0) FROM file`).Scan(&bytes); err != nil {
			return 0, 0, fmt.Errorf("count bytes in crawl.db: %w", err)
		}
		return pages, bytes, nil
	case "wget2", "wget2-serial":
		var pages int
		var bytes int64
		err := filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			bytes += fi.Size()
			if strings.HasSuffix(p, ".html") {
				pages++
			}
			return nil
		})
		return pages, bytes, err
	case "colly":
		b, err := os.ReadFile(stdoutPath)
		if err != nil {
			return 0, 0, err
		}
		var res struct {
			Pages int   `json:"pages"`
			Bytes int64 `json:"bytes"`
		}
		if err := json.Unmarshal(b, &res); err != nil {
			return 0, 0, fmt.Errorf("colly's output %q: %w", b, err)
		}
		return res.Pages, res.Bytes, nil
	}
	return 0, 0, fmt.Errorf("unknown tool %q", tool)
}

// inFlight sums the request durations of the crawler's last run in
// data, in seconds.
func inFlight(data string) (float64, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "crawl.db")+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var ms int64
	if err := db.QueryRow(`SELECT coalesce(sum(request_duration_ms),0) FROM request WHERE crawl_log_id IN (` + lastRun + `)`).Scan(&ms); err != nil {
		return 0, fmt.Errorf("sum request durations in crawl.db: %w", err)
	}
	return float64(ms) / 1000, nil
}

// site is bench/serve's flags for the site to serve.
// lastFetch is the seconds from the start of the crawler's last run in
// data to its last request.
func lastFetch(data string) (float64, error) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(data, "crawl.db")+"?mode=ro")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var s int64
	if err := db.QueryRow(`SELECT coalesce(max(r.time_sent_unix_utc) - a.time_started_unix_utc, 0) FROM request r
		JOIN crawl_log l ON l.crawl_log_id = r.crawl_log_id JOIN agent a ON a.agent_id = l.agent_id
		WHERE a.agent_id = (SELECT max(agent_id) FROM agent)`).Scan(&s); err != nil {
		return 0, fmt.Errorf("time of the last request in crawl.db: %w", err)
	}
	return float64(s), nil
}

func (c config) site() []string {
	if c.synth > 0 {
		return []string{"-synth", fmt.Sprint(c.synth)}
	}
	return []string{"-root", c.root}
}

// runTimeout is the longest one run may take.
func (c config) runTimeout() time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	return 10*time.Minute + time.Duration(c.synth)*100*time.Millisecond
}

// startServer starts bench/serve with args and returns it and its base URL.
func startServer(bin string, args []string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start server: %w", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, "", fmt.Errorf("server's address: %w", err)
	}
	go io.Copy(io.Discard, out)
	return cmd, strings.TrimSpace(line), nil
}

func stopServer(cmd *exec.Cmd) error {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop server: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return nil
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// header is the report's first lines: what ran, when, on what machine.
func header(c config, what, before, after string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s UTC.\n", what, time.Now().UTC().Format("2006-01-02 15:04"))
	if len(c.extra) > 0 {
		fmt.Fprintf(&b, "Crawler flags added: %s.\n", strings.Join(c.extra, " "))
	}
	fmt.Fprintf(&b, "Machine: %s, %d CPUs, %s RAM, Linux %s; %s.\n", cpuModel(), runtime.NumCPU(), memTotal(), kernel(), runtime.Version())
	if c.inputs != "" {
		fmt.Fprintf(&b, "Inputs: %s.\n", c.inputs)
	}
	if c.synth > 0 {
		fmt.Fprintf(&b, "Site: synthetic, %d pages (bench/serve -synth %d).\n", c.synth, c.synth)
	}
	fmt.Fprintf(&b, "Load average (1, 5, 15 min): %s before, %s after.\n\n", before, after)
	return b.String()
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(l, "MemTotal: %d kB", &kb); err == nil {
			return fmt.Sprintf("%.0f GiB", float64(kb)/(1<<20))
		}
	}
	return "?"
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(b))
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// table is the markdown table of each tool's medians.
func table(tools []string, runs []Run) string {
	type row struct {
		wall, best, cpu, pps, mbps, rss, rssMax float64
		pages, toolPages, requests              float64
	}
	rows := map[string]row{}
	for _, t := range tools {
		var wall, cpu, pps, mbps, rss, pages, toolPages, reqs []float64
		for _, r := range runs {
			if r.Tool != t {
				continue
			}
			wall = append(wall, r.WallSec)
			cpu = append(cpu, r.UserSec+r.SysSec)
			pps = append(pps, float64(r.pages())/r.WallSec)
			mbps = append(mbps, float64(r.Server.Bytes)/1e6/r.WallSec)
			rss = append(rss, float64(r.MaxRSSKB)/1024)
			pages = append(pages, float64(r.pages()))
			toolPages = append(toolPages, float64(r.ToolPages))
			reqs = append(reqs, float64(r.Server.Requests))
		}
		if len(wall) == 0 {
			continue // no run of this tool finished: the caller reports the error
		}
		rows[t] = row{median(wall), slices.Min(wall), median(cpu), median(pps), median(mbps), median(rss), slices.Max(rss),
			median(pages), median(toolPages), median(reqs)}
	}
	var b strings.Builder
	// The best run too: the issue checks best of three against wget2's.
	b.WriteString("| tool | wall s | × wget2 | best wall s | best × wget2's best | CPU s | pages/s | MB/s | peak RSS MB (max) | HTML pages (tool / server) | requests |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	ref, hasRef := rows["wget2"]
	for _, t := range tools {
		r, ok := rows[t]
		if !ok {
			continue
		}
		ratio, bestRatio := "–", "–"
		if hasRef && ref.wall > 0 && ref.best > 0 {
			ratio, bestRatio = fmt.Sprintf("%.1f", r.wall/ref.wall), fmt.Sprintf("%.1f", r.best/ref.best)
		}
		fmt.Fprintf(&b, "| %s | %.2f | %s | %.2f | %s | %.2f | %.0f | %.1f | %.0f (%.0f) | %.0f / %.0f | %.0f |\n",
			t, r.wall, ratio, r.best, bestRatio, r.cpu, r.pps, r.mbps, r.rss, r.rssMax, r.toolPages, r.pages, r.requests)
	}
	if len(runs) > 0 && runs[0].SitePages > 0 {
		fmt.Fprintf(&b, "\nThe synthetic site has %d HTML pages.\n", runs[0].SitePages)
	}
	var wall, inflight []float64
	for _, r := range runs {
		if r.Tool == "crawler" {
			wall, inflight = append(wall, r.WallSec), append(inflight, r.InFlightSec)
		}
	}
	if len(wall) > 0 {
		fmt.Fprintf(&b, "\ncrawler: its requests were in flight %.2f s of its %.2f s (medians): one request at a time per host, this is the least time politeness allows.\n",
			median(inflight), median(wall))
	}
	b.WriteString(recrawlNote(runs))
	return b.String()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
