// Package stack is the deployed stack as a function (or the CLI) sees
// it: the settings template.yaml passes as environment variables, read
// once into Settings, and the AWS clients built once from them.
package stack

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/aws/awsmeter"
	"github.com/serverless-crawler/crawler/shared/aws/dynamo"
	"github.com/serverless-crawler/crawler/shared/crawl"
)

// Settings are the stack's resources and the crawl's settings.
type Settings struct {
	Tables dynamo.Tables
	Bucket string
	// Queue URLs.
	EnqueueQueue, FetchQueue, ParseQueue, SummarizeQueue string
	// DeadLetterQueue is the DLQ of the queue this function consumes.
	DeadLetterQueue string

	UserAgent       string
	Delay           time.Duration
	Timeout         time.Duration
	MaxResourceSize int64
	RecrawlPeriod   time.Duration
	AllowPrivate    bool
	MaxDepth        int
	// RecordOutOfScope records links to hosts outside the scope as
	// filtered candidates, a write each; by default they are killed
	// (schedule.Policy.KillOutOfScope).
	RecordOutOfScope  bool
	CrawlLogRetention time.Duration
	// MemoryMB is the function's memory size (Lambda's
	// AWS_LAMBDA_FUNCTION_MEMORY_SIZE), for the usage records; 0 outside
	// Lambda.
	MemoryMB int
	// AWS is what Lambda puts in the environment for the SDK.
	AWS LambdaAWS
	// LogStream is the execution environment's log stream (Lambda's
	// AWS_LAMBDA_LOG_STREAM_NAME), which names its agent; empty outside
	// Lambda.
	LogStream string
}

// FromEnv reads the settings from the environment template.yaml sets:
// the one place the functions and the CLI read their configuration
// (the log level and format are Lambda's own, read by lambdacontext).
// Resources a caller does not use may be missing; need names the
// variables that must be set.
func FromEnv(getenv func(string) string, need ...string) (Settings, error) {
	var errs []string
	for _, n := range need {
		if getenv(n) == "" {
			errs = append(errs, n+" is not set")
		}
	}
	s := Settings{
		Tables: dynamo.Tables{Candidates: getenv("CANDIDATES_TABLE"), CrawlLog: getenv("CRAWL_LOG_TABLE"),
			Generations: getenv("GENERATIONS_TABLE"), Control: getenv("CONTROL_TABLE")},
		Bucket:       getenv("BUCKET"),
		EnqueueQueue: getenv("ENQUEUE_QUEUE_URL"), FetchQueue: getenv("FETCH_QUEUE_URL"),
		ParseQueue: getenv("PARSE_QUEUE_URL"), SummarizeQueue: getenv("SUMMARIZE_QUEUE_URL"),
		DeadLetterQueue: getenv("DEAD_LETTER_QUEUE_URL"),
		UserAgent:       or(getenv("USER_AGENT"), crawl.DefaultUserAgent),
		LogStream:       getenv("AWS_LAMBDA_LOG_STREAM_NAME"),
		AWS: LambdaAWS{Region: getenv("AWS_REGION"), Endpoint: getenv("AWS_ENDPOINT_URL"), AccessKeyID: getenv("AWS_ACCESS_KEY_ID"),
			SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: getenv("AWS_SESSION_TOKEN"),
			ServiceEndpoints: map[string]string{}},
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
	s.Delay = dur("DELAY", crawl.DefaultDelay)
	s.Timeout = dur("TIMEOUT", crawl.DefaultTimeout)
	s.RecrawlPeriod = dur("RECRAWL_PERIOD", 0)
	s.MaxResourceSize = num("MAX_RESOURCE_SIZE", crawl.DefaultMaxResourceSize)
	s.MaxDepth = int(num("MAX_DEPTH", -1))
	s.CrawlLogRetention = time.Duration(num("CRAWL_LOG_RETENTION_DAYS", 30)) * 24 * time.Hour
	s.MemoryMB = int(num("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", 0))
	// The same bounds as the CLI's flags (crawl's limits).
	for _, b := range []struct {
		name           string
		v, least, most int64
	}{
		{"DELAY", int64(s.Delay), 0, int64(crawl.MaxDelay)},
		{"TIMEOUT", int64(s.Timeout), 1, int64(crawl.MaxTimeout)},
		{"MAX_RESOURCE_SIZE", s.MaxResourceSize, 1, crawl.MaxResourceSizeLimit},
		{"MAX_DEPTH", int64(s.MaxDepth), -1, crawl.MaxHops},
		{"RECRAWL_PERIOD", int64(s.RecrawlPeriod), 0, int64(crawl.MaxRecrawlPeriodMins * time.Minute)},
	} {
		if b.v < b.least || b.v > b.most {
			errs = append(errs, fmt.Sprintf("%s=%q is out of range", b.name, getenv(b.name)))
		}
	}
	for _, id := range []string{"DynamoDB", "SQS", "S3"} {
		if e := getenv("AWS_ENDPOINT_URL_" + strings.ToUpper(id)); e != "" {
			s.AWS.ServiceEndpoints[id] = e
		}
	}
	flag := func(name string) bool {
		switch v := strings.ToLower(getenv(name)); v {
		case "", "false":
		case "true":
			return true
		default:
			errs = append(errs, fmt.Sprintf("%s=%q must be true or false", name, v))
		}
		return false
	}
	s.AllowPrivate = flag("ALLOW_PRIVATE_NETWORKS")
	s.RecordOutOfScope = flag("RECORD_OUT_OF_SCOPE")
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
// shared files and profiles, SSO, the instance role): the CLI's and the
// tests' clients. It builds the DynamoDB and SQS clients and those of
// opts (WithS3), each with a meter. AWS_ENDPOINT_URL and the
// per-service AWS_ENDPOINT_URL_* variables (or the shared config file)
// point the clients at a local emulator. (The SDK reads those variables
// itself: they are not our settings.)
func NewClients(ctx context.Context, opts ...ClientOption) (Clients, error) {
	m := awsmeter.New()
	cfg, err := config.LoadDefaultConfig(ctx, config.WithAPIOptions([]func(*middleware.Stack) error{m.AddTo}))
	if err != nil {
		return Clients{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	return newClients(cfg, m, opts), nil
}

// LambdaAWS is what Lambda gives a function for the SDK: its region,
// the execution role's credentials, and the endpoints of the emulator
// that runs it, if one does (AWS_ENDPOINT_URL, and per service
// AWS_ENDPOINT_URL_DYNAMODB, _SQS and _S3, keyed by the SDK's service
// ID).
type LambdaAWS struct {
	Region, Endpoint                           string
	AccessKeyID, SecretAccessKey, SessionToken string
	ServiceEndpoints                           map[string]string
}

// NewLambdaClients builds a function's clients, like NewClients, from
// what Lambda put in its environment. That is what the SDK's default
// chain resolves to inside Lambda; building it directly keeps the
// chain's other providers (shared files, SSO, STS) out of every
// function binary (1.6 MB of an 11 MB binary, BENCHMARKS.md).
func NewLambdaClients(s Settings, opts ...ClientOption) (Clients, error) {
	a := s.AWS
	if a.Region == "" || a.AccessKeyID == "" || a.SecretAccessKey == "" {
		return Clients{}, fmt.Errorf("AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set (Lambda sets them)")
	}
	m := awsmeter.New()
	cfg := aws.Config{
		Region:      a.Region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(a.AccessKeyID, a.SecretAccessKey, a.SessionToken)),
		APIOptions:  []func(*middleware.Stack) error{m.AddTo},
	}
	if a.Endpoint != "" {
		cfg.BaseEndpoint = aws.String(a.Endpoint)
	}
	if len(a.ServiceEndpoints) > 0 {
		cfg.ServiceOptions = append(cfg.ServiceOptions, func(id string, o any) {
			if e, ok := a.ServiceEndpoints[id]; ok {
				setBaseEndpoint(o, e)
			}
		})
	}
	return newClients(cfg, m, opts), nil
}

// setBaseEndpoint sets the BaseEndpoint of a service client's Options
// (every SDK client's has one). By reflection, because naming the S3
// client's Options here would link the S3 client into every function.
func setBaseEndpoint(options any, endpoint string) {
	v := reflect.ValueOf(options)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	if f := v.Elem().FieldByName("BaseEndpoint"); f.IsValid() && f.CanSet() && f.Type() == reflect.TypeFor[*string]() {
		f.Set(reflect.ValueOf(&endpoint))
	}
}

// IdleConnsPerHost is how many connections to one endpoint the clients
// keep open between requests. The SDK's default of 10 would close and
// dial again, with a TLS handshake, most connections of a summarizer
// that has fifty summaries in flight (summarizer.BatchSize), each
// making its DynamoDB calls in turn.
const IdleConnsPerHost = 64

func newClients(cfg aws.Config, m *awsmeter.Meter, opts []ClientOption) Clients {
	// The configuration's own client (with a CA bundle it may have
	// loaded), else the SDK's default one, keeping more idle connections.
	hc, ok := cfg.HTTPClient.(*awshttp.BuildableClient)
	if !ok && cfg.HTTPClient == nil {
		hc, ok = awshttp.NewBuildableClient(), true
	}
	if ok {
		cfg.HTTPClient = hc.WithTransportOptions(func(t *http.Transport) { t.MaxIdleConnsPerHost = IdleConnsPerHost })
	}
	c := Clients{DynamoDB: dynamodb.NewFromConfig(cfg), SQS: sqs.NewFromConfig(cfg), Meter: m}
	for _, o := range opts {
		o(&c, cfg)
	}
	return c
}

// ClientOption adds a client that not every function needs: a function
// that leaves it out does not link it (the S3 client is a fifth of a
// binary).
type ClientOption func(*Clients, aws.Config)

// WithS3 adds the S3 client. With an endpoint set (an emulator on
// 127.0.0.1), it uses path-style addresses, which emulators need. A
// ranged GET of one record of a WARC file carries no whole-object
// checksum to validate: the SDK's line saying so, on every such read,
// is left out.
func WithS3(c *Clients, cfg aws.Config) {
	c.S3 = s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = o.BaseEndpoint != nil
		o.DisableLogOutputChecksumValidationSkipped = true
	})
}

// AgentRegistry records agents (seed 000 agent).
type AgentRegistry interface {
	RegisterAgent(ctx context.Context, a crawl.Agent) error
}

// RegisterAgent registers this execution environment as a seed 000
// agent, named after the function and its log stream (one per
// environment), and returns it.
func (s Settings) RegisterAgent(ctx context.Context, r AgentRegistry, function string) (crawl.Agent, error) {
	env := s.LogStream
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
