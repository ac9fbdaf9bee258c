// Package stack is the deployed stack as a function (or the CLI) sees
// it: the settings template.yaml passes as environment variables, and the
// AWS clients built once from them.
package stack

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/aws/lambdalog"
	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/stage/fetch"
	"github.com/serverless-crawler/crawler/shared/web/safedial"
)

// Settings are the stack's resources and the crawl's settings.
type Settings struct {
	Tables dynamo.Tables
	Bucket string
	// Queue URLs.
	EnqueueQueue, FetchQueue, ParseQueue, SummarizeQueue string
	// DeadLetterQueue is the DLQ of the queue this function consumes.
	DeadLetterQueue string

	UserAgent         string
	Delay             time.Duration
	Timeout           time.Duration
	MaxResourceSize   int64
	RecrawlPeriod     time.Duration
	AllowPrivate      bool
	LogLevel          slog.Level
	MaxDepth          int
	CrawlLogRetention time.Duration
	// MemoryMB is the function's memory size (Lambda's
	// AWS_LAMBDA_FUNCTION_MEMORY_SIZE), for the usage records; 0 outside
	// Lambda.
	MemoryMB int
}

// FromEnv reads the settings from the environment template.yaml sets.
// Resources a caller does not use may be missing; need names the
// variables that must be set.
func FromEnv(getenv func(string) string, need ...string) (Settings, error) {
	var errs []string
	for _, n := range need {
		if getenv(n) == "" {
			errs = append(errs, n+" is not set")
		}
	}
	d := fetch.DefaultConfig()
	s := Settings{
		Tables: dynamo.Tables{Candidates: getenv("CANDIDATES_TABLE"), CrawlLog: getenv("CRAWL_LOG_TABLE"),
			Generations: getenv("GENERATIONS_TABLE"), Control: getenv("CONTROL_TABLE")},
		Bucket:       getenv("BUCKET"),
		EnqueueQueue: getenv("ENQUEUE_QUEUE_URL"), FetchQueue: getenv("FETCH_QUEUE_URL"),
		ParseQueue: getenv("PARSE_QUEUE_URL"), SummarizeQueue: getenv("SUMMARIZE_QUEUE_URL"),
		DeadLetterQueue: getenv("DEAD_LETTER_QUEUE_URL"),
		UserAgent:       or(getenv("USER_AGENT"), d.UserAgent),
	}
	dur := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		t, err := time.ParseDuration(v)
		if err != nil || t < 0 {
			errs = append(errs, fmt.Sprintf("%s=%q is not a duration like 1s or 168h", name, v))
		}
		return t
	}
	num := func(name string, def int64) int64 {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s=%q is not a whole number", name, v))
		}
		return n
	}
	s.Delay = dur("DELAY", d.Delay)
	s.Timeout = dur("TIMEOUT", d.Timeout)
	s.RecrawlPeriod = dur("RECRAWL_PERIOD", 0)
	s.MaxResourceSize = num("MAX_RESOURCE_SIZE", d.MaxResourceSize)
	s.MaxDepth = int(num("MAX_DEPTH", -1))
	s.CrawlLogRetention = time.Duration(num("CRAWL_LOG_RETENTION_DAYS", 30)) * 24 * time.Hour
	s.MemoryMB = int(num("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", 0))
	switch v := strings.ToLower(getenv("ALLOW_PRIVATE_NETWORKS")); v {
	case "", "false":
	case "true":
		s.AllowPrivate = true
	default:
		errs = append(errs, fmt.Sprintf("ALLOW_PRIVATE_NETWORKS=%q must be true or false", v))
	}
	lvl, err := lambdalog.ParseLevel(getenv("LOG_LEVEL"))
	if err != nil {
		errs = append(errs, fmt.Sprintf("LOG_LEVEL=%q must be DEBUG, INFO, WARN or ERROR", getenv("LOG_LEVEL")))
	}
	s.LogLevel = lvl
	if len(errs) > 0 {
		return s, fmt.Errorf("stack settings: %s", strings.Join(errs, "; "))
	}
	return s, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// FetchConfig is the fetch stage's configuration.
func (s Settings) FetchConfig(agentUUID string) fetch.Config {
	c := fetch.DefaultConfig()
	c.AgentUUID, c.UserAgent, c.Delay, c.Timeout = agentUUID, s.UserAgent, s.Delay, s.Timeout
	c.MaxResourceSize, c.RecrawlPeriod = s.MaxResourceSize, s.RecrawlPeriod
	return c
}

// HTTPClient is the fetcher's client: it refuses loopback, private and
// link-local addresses (SSRF) unless AllowPrivate is set. On AWS no seed
// opens them: a crawl of an internal site sets AllowPrivateNetworks.
func (s Settings) HTTPClient() *http.Client {
	dialer := safedial.New(s.Timeout)
	dialer.AllowPrivate = s.AllowPrivate
	return &http.Client{Transport: &http.Transport{
		Proxy: nil, DialContext: dialer.DialContext, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second,
		ResponseHeaderTimeout: s.Timeout, TLSHandshakeTimeout: s.Timeout, DisableCompression: true,
	}}
}

// Clients are the AWS clients, built once per process.
type Clients struct {
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	S3       *s3.Client
	// Meter counts every request the clients make (nil: not counted);
	// the functions report it per invocation (awsmeter.Reporter).
	Meter *awsmeter.Meter
}

// NewClients loads the AWS configuration the usual way (environment,
// shared files, the Lambda role), with a meter on every client.
// AWS_ENDPOINT_URL and the per-service AWS_ENDPOINT_URL_* variables
// point the clients at a local emulator; S3 then uses path-style
// addresses, which emulators on 127.0.0.1 need.
func NewClients(ctx context.Context) (Clients, error) {
	m := awsmeter.New()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithAPIOptions([]func(*middleware.Stack) error{m.AddTo}))
	if err != nil {
		return Clients{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	local := os.Getenv("AWS_ENDPOINT_URL") != "" || os.Getenv("AWS_ENDPOINT_URL_S3") != ""
	return Clients{
		DynamoDB: dynamodb.NewFromConfig(cfg),
		SQS:      sqs.NewFromConfig(cfg),
		S3:       s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = local }),
		Meter:    m,
	}, nil
}

// AgentRegistry records agents (seed 000 agent).
type AgentRegistry interface {
	RegisterAgent(ctx context.Context, a crawl.Agent) error
}

// RegisterAgent registers this execution environment as a seed 000
// agent, named after the function and its log stream (one per
// environment), and returns it.
func (s Settings) RegisterAgent(ctx context.Context, r AgentRegistry, function string) (crawl.Agent, error) {
	env := os.Getenv("AWS_LAMBDA_LOG_STREAM_NAME")
	if env == "" {
		env, _ = os.Hostname()
	}
	ua := s.UserAgent
	a := crawl.Agent{UUID: uuid.NewString(), Name: function + "@" + env, TimeStarted: time.Now().Unix(), HTTPUserAgent: &ua}
	if err := r.RegisterAgent(ctx, a); err != nil {
		return a, fmt.Errorf("register agent %s: %w", a.Name, err)
	}
	return a, nil
}

// Fatal logs why a function cannot start and exits: Lambda reports the
// init error, and the messages stay in their queue.
func Fatal(log *slog.Logger, what string, err error) {
	log.Error("cannot start: "+what, "err", err)
	os.Exit(1)
}
