package s3blob

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"

	"github.com/serverless-crawler/crawler/shared/crawl"
)

// testClient returns a client for the AWS emulator at CRAWLER_TEST_AWS
// (infra/ministack.sh); the tests are skipped, saying so, when none is
// configured.
func testClient(t testing.TB) *s3.Client {
	t.Helper()
	ep := os.Getenv("CRAWLER_TEST_AWS")
	if ep == "" {
		t.Skip("CRAWLER_TEST_AWS is not set: start an emulator (infra/ministack.sh start) and set it to its endpoint, e.g. http://127.0.0.1:4566")
	}
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(ep),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		UsePathStyle: true, // an emulator on 127.0.0.1 has no bucket host names
	})
}

// testStore creates a fresh bucket for one test and empties and deletes
// it after.
func testStore(t testing.TB) (*Store, *s3.Client) {
	t.Helper()
	api := testClient(t)
	bucket := "t" + strings.ReplaceAll(uuid.NewString(), "-", "")[:20]
	ctx := context.Background()
	if _, err := api.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("create bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() {
		out, err := api.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
		if err == nil {
			for _, o := range out.Contents {
				api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: o.Key})
			}
		}
		if _, err := api.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Logf("delete bucket %s: %v", bucket, err)
		}
	})
	s := New(api, bucket)
	t.Cleanup(func() { t.Logf("%s: %s", bucket, s.Counts()) })
	return s, api
}

// TestObjectHeaders: what Put asks of S3 beyond the bytes (the contract
// checks those): the content type by key, SSE-S3, the length.
func TestObjectHeaders(t *testing.T) {
	s, api := testStore(t)
	ctx := context.Background()
	for _, tc := range []struct {
		key         string
		data        []byte
		contentType string
	}{
		{"doc/ab/cdef.json", []byte(`{"url":"http://example.com/"}`), "application/json"},
		{"raw/ab/cdef", []byte("<html>"), "application/octet-stream"},
		{"raw/empty", []byte{}, "application/octet-stream"},
	} {
		if err := s.Put(ctx, tc.key, tc.data); err != nil {
			t.Fatal(err)
		}
		head, err := api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.Bucket()), Key: aws.String(tc.key)})
		if err != nil {
			t.Fatal(err)
		}
		if ct := aws.ToString(head.ContentType); ct != tc.contentType {
			t.Errorf("%s: content type %q, want %q", tc.key, ct, tc.contentType)
		}
		if head.ServerSideEncryption != types.ServerSideEncryptionAes256 {
			t.Errorf("%s: server-side encryption %q, want AES256", tc.key, head.ServerSideEncryption)
		}
		if n := aws.ToInt64(head.ContentLength); n != int64(len(tc.data)) {
			t.Errorf("%s: content length %d, want %d", tc.key, n, len(tc.data))
		}
	}
	if c := s.Counts(); c.Puts.Load() != 3 || c.PutBytes.Load() != int64(len(`{"url":"http://example.com/"}`)+len("<html>")) {
		t.Errorf("counts: %s", c)
	}
}

func TestMissingBucketIsNotMissingKey(t *testing.T) {
	s := New(testClient(t), "no-such-bucket-"+uuid.NewString()[:8])
	_, err := s.Get(context.Background(), "raw/x")
	if err == nil || errors.Is(err, crawl.ErrNotFound) {
		t.Fatalf("Get from a missing bucket: %v, want an error other than crawl.ErrNotFound", err)
	}
	t.Log(err)
}

// TestInvalidKey needs no emulator: the key is refused before any call.
func TestInvalidKey(t *testing.T) {
	s := New(nil, "bucket")
	ctx := context.Background()
	for _, key := range []string{"", "../up", "a/../../b", "/abs"} {
		if err := s.Put(ctx, key, []byte("x")); crawl.KindOf(err) != crawl.KindInvalid {
			t.Errorf("Put(%q): %v, want KindInvalid", key, err)
		}
		if _, err := s.Get(ctx, key); crawl.KindOf(err) != crawl.KindInvalid {
			t.Errorf("Get(%q): %v, want KindInvalid", key, err)
		}
		if _, err := s.Exists(ctx, key); crawl.KindOf(err) != crawl.KindInvalid {
			t.Errorf("Exists(%q): %v, want KindInvalid", key, err)
		}
	}
	if c := s.Counts(); c.Puts.Load()+c.Gets.Load()+c.Heads.Load() != 0 {
		t.Errorf("calls counted: %s", c)
	}
}

func TestContentType(t *testing.T) {
	for key, want := range map[string]string{
		"doc/a.json":  "application/json",
		"raw/a":       "application/octet-stream",
		"raw/a.html":  "application/octet-stream",
		"a.json/body": "application/octet-stream",
	} {
		if got := ContentType(key); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", key, got, want)
		}
	}
}

// putRecorder keeps the PutObject requests it is given.
type putRecorder struct {
	API
	puts []*s3.PutObjectInput
}

func (p *putRecorder) PutObject(ctx context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	p.puts = append(p.puts, in)
	return &s3.PutObjectOutput{}, nil
}

// TestPutRequest needs no emulator. It checks the request itself: real
// S3 reports AES256 on every object since default encryption (2023), so
// HeadObject there cannot tell whether Put asked for it.
func TestPutRequest(t *testing.T) {
	rec := &putRecorder{}
	s := New(rec, "bucket")
	if err := s.Put(context.Background(), "doc/a.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	in := rec.puts[0]
	if aws.ToString(in.Bucket) != "bucket" || aws.ToString(in.Key) != "doc/a.json" ||
		in.ServerSideEncryption != types.ServerSideEncryptionAes256 ||
		aws.ToString(in.ContentType) != "application/json" || aws.ToInt64(in.ContentLength) != 2 {
		t.Errorf("PutObject input: bucket %q key %q sse %q type %q length %d",
			aws.ToString(in.Bucket), aws.ToString(in.Key), in.ServerSideEncryption, aws.ToString(in.ContentType), aws.ToInt64(in.ContentLength))
	}
	if s.Counts().Puts.Load() != 1 || s.Counts().PutBytes.Load() != 2 {
		t.Errorf("counts: %s", s.Counts())
	}
}
