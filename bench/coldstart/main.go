// Command coldstart measures the Lambda functions' binaries and cold
// starts. It builds each function as `make functions` does
// (CGO_ENABLED=0, -tags lambda.norpc, -trimpath, -ldflags='-s -w'), for
// the host and for linux/arm64 (what Lambda runs), and reports their
// sizes, raw and zipped (the deployment package). Then it starts the
// host build, -runs times, with the environment Lambda gives it and a
// fake Lambda Runtime API on loopback (AWS_LAMBDA_RUNTIME_API), and
// times the init: from exec to the function's first GET
// /2018-06-01/runtime/invocation/next, which is when Lambda's init
// phase ends.
//
// Init calls AWS: each function registers its execution environment as
// an agent (one DynamoDB PutItem), so the timing includes that round
// trip. Two backends: a stub on loopback that answers every AWS call at
// once with 200 {} (the process's own cost, plus one local round trip),
// and, with -dynamodb URL (default $CRAWLER_TEST_DYNAMODB, which
// infra/with-emulators.sh sets), DynamoDB Local with the tables created.
// Both are faster than DynamoDB over TLS from a fresh environment (a
// TLS handshake and a request, some tens of milliseconds): a lower
// bound.
//
//	go run ./bench/coldstart [-runs 15] [-dynamodb URL] [-functions scheduler,fetcher,parser,summarizer] [-arm64=false]
package main

import (
	"archive/zip"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run() error {
	runs := flag.Int("runs", 15, "cold starts per function and backend")
	ddbURL := flag.String("dynamodb", os.Getenv("CRAWLER_TEST_DYNAMODB"), "DynamoDB Local endpoint for the second backend (empty: stub only)")
	fnList := flag.String("functions", "scheduler,fetcher,parser,summarizer", "functions to measure")
	arm := flag.Bool("arm64", true, "also build for linux/arm64 and report its sizes")
	out := flag.String("out", "", "directory for the builds (default: a temporary one, removed)")
	flag.Parse()
	functions := strings.Split(*fnList, ",")

	dir := *out
	if dir == "" {
		d, err := os.MkdirTemp("", "coldstart")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}

	type result struct {
		host, arm, armZip int64
		backends          []timing
	}
	results := map[string]*result{}
	for _, f := range functions {
		r := &result{}
		results[f] = r
		hostBin := filepath.Join(dir, runtime.GOARCH, f, "bootstrap")
		if r.host, err = build(root, f, runtime.GOARCH, hostBin); err != nil {
			return err
		}
		if *arm {
			armBin := filepath.Join(dir, "arm64", f, "bootstrap")
			if r.arm, err = build(root, f, "arm64", armBin); err != nil {
				return err
			}
			if r.armZip, err = zipSize(armBin); err != nil {
				return err
			}
		}
	}

	stub := newStub()
	defer stub.srv.Close()
	backends := []backend{{name: "stub", endpoint: stub.srv.URL, stub: stub}}
	if *ddbURL != "" {
		b, closeFn, err := dynamoLocal(*ddbURL, stub)
		if err != nil {
			return err
		}
		defer closeFn()
		backends = append(backends, b)
	}
	for _, f := range functions {
		bin := filepath.Join(dir, runtime.GOARCH, f, "bootstrap")
		for _, b := range backends {
			t, err := measure(bin, f, b, *runs)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", f, b.name, err)
			}
			results[f].backends = append(results[f].backends, t)
		}
	}

	fmt.Printf("Go %s, %s/%s, %d CPUs; %d cold starts per function and backend; times from exec to the first /next.\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), *runs)
	fmt.Printf("| function | %s binary | arm64 binary | arm64 zip |", runtime.GOARCH)
	for _, b := range backends {
		fmt.Printf(" init, %s: median (min–max) | first AWS request at | CPU | peak RSS |", b.name)
	}
	fmt.Println()
	fmt.Print("|---|---:|---:|---:|")
	for range backends {
		fmt.Print("---:|---:|---:|---:|")
	}
	fmt.Println()
	for _, f := range functions {
		r := results[f]
		fmt.Printf("| %s | %s | %s | %s |", f, mib(r.host), mib(r.arm), mib(r.armZip))
		for _, t := range r.backends {
			fmt.Printf(" %.1f ms (%.1f–%.1f) | %.1f ms | %.1f ms | %.1f MiB |", t.median, t.min, t.max, t.firstAWS, t.cpu, t.rss)
		}
		fmt.Println()
	}
	return nil
}

func mib(n int64) string {
	if n == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("not inside the crawler's module")
	}
	return filepath.Dir(gomod), nil
}

// build builds functions/<f> for linux/<arch> as `make functions` does
// and returns the binary's size.
func build(root, f, arch, bin string) (int64, error) {
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bin, "./functions/"+f)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("build %s for %s: %w", f, arch, err)
	}
	st, err := os.Stat(bin)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// zipSize is the size of a deployment package holding bin as bootstrap.
func zipSize(bin string) (int64, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "bootstrap", Method: zip.Deflate})
	if err != nil {
		return 0, err
	}
	if _, err := w.Write(b); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return int64(buf.Len()), nil
}

// stub answers every AWS call with 200 {} (DynamoDB's PutItem answer)
// and notes when the first one of a run arrived.
type stub struct {
	srv   *httptest.Server
	mu    sync.Mutex
	first time.Time
}

func newStub() *stub {
	s := &stub{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.seen()
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		io.WriteString(w, "{}")
	}))
	return s
}

func (s *stub) seen() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first.IsZero() {
		s.first = time.Now()
	}
}

func (s *stub) reset() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.first
	s.first = time.Time{}
	return t
}

// backend is where a function's AWS calls go.
type backend struct {
	name     string
	endpoint string            // AWS_ENDPOINT_URL
	env      []string          // more variables (a DynamoDB endpoint, table names)
	stub     *stub             // notes the first AWS request
	tables   map[string]string // table variables
}

// dynamoLocal is the DynamoDB Local backend: tables created there, and
// a timing proxy in front of it; other services go to the stub.
func dynamoLocal(endpoint string, s *stub) (backend, func(), error) {
	ctx := context.Background()
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Credentials: creds})
	p := fmt.Sprintf("cold%d", time.Now().UnixNano()%1e9)
	tables := dynamo.Tables{Candidates: p + "-candidates", CrawlLog: p + "-crawl-log", Generations: p + "-generations", Control: p + "-control"}
	if err := dynamo.CreateTables(ctx, c, tables); err != nil {
		return backend{}, nil, fmt.Errorf("create tables on %s: %w", endpoint, err)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return backend{}, nil, err
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	timing := &stub{}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		timing.seen()
		rp.ServeHTTP(w, r)
	}))
	b := backend{name: "DynamoDB Local", endpoint: s.srv.URL, stub: timing,
		env: []string{"AWS_ENDPOINT_URL_DYNAMODB=" + proxy.URL},
		tables: map[string]string{"CANDIDATES_TABLE": tables.Candidates, "CRAWL_LOG_TABLE": tables.CrawlLog,
			"GENERATIONS_TABLE": tables.Generations, "CONTROL_TABLE": tables.Control}}
	return b, proxy.Close, nil
}

// timing is one function's cold starts on one backend, in milliseconds
// (firstAWS: median time from exec to the first AWS request; cpu: median
// user+system CPU time until killed at /next; rss: median peak RSS, MiB).
type timing struct {
	median, min, max, firstAWS, cpu, rss float64
}

// measure starts bin runs times and times each start to its first
// /next.
func measure(bin, function string, b backend, runs int) (timing, error) {
	next := make(chan time.Time, 1)
	initErr := make(chan string, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/2018-06-01/runtime/invocation/next":
			select {
			case next <- time.Now():
			default:
			}
			<-r.Context().Done() // no invocation: hold until the process is killed
		case strings.HasSuffix(r.URL.Path, "/init/error"):
			body, _ := io.ReadAll(r.Body)
			select {
			case initErr <- string(body):
			default:
			}
			w.WriteHeader(http.StatusAccepted)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	defer api.Close()
	env := lambdaEnv(function, strings.TrimPrefix(api.URL, "http://"), b)

	var total, first, cpu, rss []float64
	for i := 0; i < runs; i++ {
		b.stub.reset()
		var output bytes.Buffer
		cmd := exec.Command(bin)
		cmd.Env, cmd.Dir = env, filepath.Dir(bin)
		cmd.Stdout, cmd.Stderr = &output, &output
		exited := make(chan error, 1)
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return timing{}, err
		}
		go func() { exited <- cmd.Wait() }()
		select {
		case at := <-next:
			total = append(total, ms(at.Sub(start)))
			if f := b.stub.reset(); !f.IsZero() {
				first = append(first, ms(f.Sub(start)))
			}
			if kib, err := peakRSS(cmd.Process.Pid); err == nil {
				rss = append(rss, float64(kib)/1024)
			}
		case msg := <-initErr:
			cmd.Process.Kill()
			<-exited
			return timing{}, fmt.Errorf("init error: %s\n%s", msg, output.String())
		case err := <-exited:
			return timing{}, fmt.Errorf("exited before /next (%v):\n%s", err, output.String())
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			return timing{}, fmt.Errorf("no /next within 30 s:\n%s", output.String())
		}
		cmd.Process.Kill()
		<-exited
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cpu = append(cpu, ms(time.Duration(ru.Utime.Nano()+ru.Stime.Nano())))
		}
	}
	return timing{median: median(total), min: slices.Min(total), max: slices.Max(total),
		firstAWS: median(first), cpu: median(cpu), rss: median(rss)}, nil
}

// lambdaEnv is the environment Lambda gives a function (template.yaml's
// variables and Lambda's own), with its AWS calls sent to the backend
// and no shared configuration files (Lambda has none).
func lambdaEnv(function, runtimeAPI string, b backend) []string {
	q := func(name string) string { return b.endpoint + "/000000000000/cold-" + name }
	env := []string{
		"AWS_LAMBDA_RUNTIME_API=" + runtimeAPI,
		"AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=test",
		"AWS_LAMBDA_FUNCTION_NAME=crawler-" + function, "AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256", "AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/crawler/" + function,
		"AWS_LAMBDA_LOG_STREAM_NAME=2026/01/01/[$LATEST]coldstart", "AWS_LAMBDA_LOG_FORMAT=JSON",
		"_HANDLER=bootstrap", "TZ=:UTC",
		"AWS_CONFIG_FILE=" + os.DevNull, "AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull, "AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL=" + b.endpoint,
		"BUCKET=cold-bodies",
		"ENQUEUE_QUEUE_URL=" + q("enqueue"), "FETCH_QUEUE_URL=" + q("fetch"), "PARSE_QUEUE_URL=" + q("parse"),
		"SUMMARIZE_QUEUE_URL=" + q("summarize"), "DEAD_LETTER_QUEUE_URL=" + q("dlq"),
		"USER_AGENT=serverless-crawler/0.1", "DELAY=1s", "TIMEOUT=30s", "MAX_RESOURCE_SIZE=10485760", "RECRAWL_PERIOD=168h",
		"ALLOW_PRIVATE_NETWORKS=false", "LOG_LEVEL=INFO", "MAX_DEPTH=-1", "CRAWL_LOG_RETENTION_DAYS=30",
	}
	tables := b.tables
	if tables == nil {
		tables = map[string]string{"CANDIDATES_TABLE": "cold-candidates", "CRAWL_LOG_TABLE": "cold-crawl-log",
			"GENERATIONS_TABLE": "cold-generations", "CONTROL_TABLE": "cold-control"}
	}
	for k, v := range tables {
		env = append(env, k+"="+v)
	}
	return append(env, b.env...)
}

// peakRSS reads a process's peak resident set (VmHWM, KiB) from /proc.
// (The rusage of a child would count the parent's pages copied at fork.)
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kib int64
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kib)
			return kib, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
