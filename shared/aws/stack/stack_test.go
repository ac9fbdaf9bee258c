package stack

import (
	"reflect"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

func TestFromEnv(t *testing.T) {
	lambdaEnv := map[string]string{
		"CANDIDATES_TABLE": "cands", "FETCH_QUEUE_URL": "http://q/fetch", "DELAY": "250ms", "MAX_DEPTH": "3",
		"ALLOW_PRIVATE_NETWORKS": "true", "RECORD_OUT_OF_SCOPE": "TRUE", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID",
		"AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "tok", "AWS_ENDPOINT_URL": "http://127.0.0.1:4566",
		"AWS_ENDPOINT_URL_DYNAMODB": "http://127.0.0.1:8000", "AWS_LAMBDA_LOG_STREAM_NAME": "2026/11/25/[$LATEST]abc", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
	}
	for _, c := range []struct {
		name  string
		env   map[string]string
		need  []string
		check func(t *testing.T, s Settings)
		err   string
	}{
		{"every setting read once", lambdaEnv, []string{"CANDIDATES_TABLE", "FETCH_QUEUE_URL"}, func(t *testing.T, s Settings) {
			if s.Tables.Candidates != "cands" || s.FetchQueue != "http://q/fetch" || s.Delay != 250*time.Millisecond ||
				s.MaxDepth != 3 || !s.AllowPrivate || !s.RecordOutOfScope || s.MemoryMB != 256 || s.LogStream != "2026/11/25/[$LATEST]abc" {
				t.Errorf("settings %+v", s)
			}
			want := LambdaAWS{Region: "eu-west-1", Endpoint: "http://127.0.0.1:4566", AccessKeyID: "AKID", SecretAccessKey: "secret",
				SessionToken: "tok", ServiceEndpoints: map[string]string{"DynamoDB": "http://127.0.0.1:8000"}}
			if !reflect.DeepEqual(s.AWS, want) {
				t.Errorf("AWS = %+v, want %+v", s.AWS, want)
			}
		}, ""},
		{"defaults are the domain's", map[string]string{}, nil, func(t *testing.T, s Settings) {
			if s.UserAgent != crawl.DefaultUserAgent || s.Delay != crawl.DefaultDelay || s.Timeout != crawl.DefaultTimeout ||
				s.MaxResourceSize != crawl.DefaultMaxResourceSize || s.MaxDepth != -1 || s.CrawlLogRetention != 30*24*time.Hour ||
				s.AllowPrivate || s.RecordOutOfScope {
				t.Errorf("settings %+v", s)
			}
		}, ""},
		{"a missing need", map[string]string{}, []string{"BUCKET"}, nil, "BUCKET is not set"},
		{"a bad duration", map[string]string{"DELAY": "soon"}, nil, nil, `DELAY="soon" is not a duration`},
		{"a bad number", map[string]string{"MAX_DEPTH": "deep"}, nil, nil, `MAX_DEPTH="deep" is not a whole number`},
		{"a delay past the bound", map[string]string{"DELAY": "2h"}, nil, nil, `DELAY="2h" is out of range`},
		{"a depth below -1", map[string]string{"MAX_DEPTH": "-2"}, nil, nil, `MAX_DEPTH="-2" is out of range`},
		{"a body limit past the bound", map[string]string{"MAX_RESOURCE_SIZE": "2147483648"}, nil, nil, `MAX_RESOURCE_SIZE="2147483648" is out of range`},
		{"a recrawl period past a year", map[string]string{"RECRAWL_PERIOD": "9000h"}, nil, nil, `RECRAWL_PERIOD="9000h" is out of range`},
		{"a bad flag", map[string]string{"ALLOW_PRIVATE_NETWORKS": "yes"}, nil, nil, "must be true or false"},
		{"a bad flag, the other", map[string]string{"RECORD_OUT_OF_SCOPE": "1"}, nil, nil, `RECORD_OUT_OF_SCOPE="1" must be true or false`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := FromEnv(func(k string) string { return c.env[k] }, c.need...)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, s)
		})
	}
}

func TestNewLambdaClients(t *testing.T) {
	if _, err := NewLambdaClients(Settings{AWS: LambdaAWS{Region: "eu-west-1"}}); err == nil {
		t.Error("clients without the execution role's credentials were built")
	}
	c, err := NewLambdaClients(Settings{AWS: LambdaAWS{Region: "eu-west-1", AccessKeyID: "AKID", SecretAccessKey: "s",
		Endpoint: "http://127.0.0.1:4566"}}, WithS3)
	if err != nil {
		t.Fatal(err)
	}
	if c.DynamoDB == nil || c.SQS == nil || c.S3 == nil || c.Meter == nil {
		t.Fatalf("clients %+v", c)
	}
	if o := c.S3.Options(); !o.UsePathStyle || o.BaseEndpoint == nil || *o.BaseEndpoint != "http://127.0.0.1:4566" {
		t.Errorf("S3 behind an emulator: path style %v, endpoint %v", o.UsePathStyle, o.BaseEndpoint)
	}
	if o := c.DynamoDB.Options(); o.Region != "eu-west-1" || o.BaseEndpoint == nil {
		t.Errorf("DynamoDB options: region %q, endpoint %v", o.Region, o.BaseEndpoint)
	}
	c, err = NewLambdaClients(Settings{AWS: LambdaAWS{Region: "eu-west-1", AccessKeyID: "AKID", SecretAccessKey: "s",
		Endpoint: "http://127.0.0.1:4566", ServiceEndpoints: map[string]string{"DynamoDB": "http://127.0.0.1:8000", "S3": "http://127.0.0.1:9000"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c.S3 != nil {
		t.Error("an S3 client was built without WithS3")
	}
	if e := c.DynamoDB.Options().BaseEndpoint; e == nil || *e != "http://127.0.0.1:8000" {
		t.Errorf("AWS_ENDPOINT_URL_DYNAMODB not applied: %v", e)
	}
	if e := c.SQS.Options().BaseEndpoint; e == nil || *e != "http://127.0.0.1:4566" {
		t.Errorf("SQS endpoint %v, want AWS_ENDPOINT_URL", e)
	}
}

// The clients keep IdleConnsPerHost connections to an endpoint open,
// whether built for Lambda or from the default configuration.
func TestClientsKeepConnections(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "y")
	lambda, err := NewLambdaClients(Settings{AWS: LambdaAWS{Region: "us-east-1", AccessKeyID: "x", SecretAccessKey: "y"}}, WithS3)
	if err != nil {
		t.Fatal(err)
	}
	def, err := NewClients(t.Context(), WithS3)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Clients{"lambda": lambda, "default": def} {
		for svc, hc := range map[string]any{"dynamodb": c.DynamoDB.Options().HTTPClient, "sqs": c.SQS.Options().HTTPClient, "s3": c.S3.Options().HTTPClient} {
			b, ok := hc.(*awshttp.BuildableClient)
			if !ok {
				t.Errorf("%s %s: HTTP client %T", name, svc, hc)
				continue
			}
			if n := b.GetTransport().MaxIdleConnsPerHost; n != IdleConnsPerHost {
				t.Errorf("%s %s: MaxIdleConnsPerHost %d, want %d", name, svc, n, IdleConnsPerHost)
			}
		}
	}
}
