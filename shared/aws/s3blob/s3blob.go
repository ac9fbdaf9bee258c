// Package s3blob is the S3 blob store: raw bodies and parsed documents as
// objects in one bucket, encrypted at rest. Same contract as the embedded
// store, shared/local/blobfs: a key is a slash-separated path, Put replaces,
// Get of a missing key is crawl.ErrNotFound.
package s3blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/serverless-crawler/crawler/shared/crawl"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

// API is the part of the S3 client the store uses.
type API interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, opts ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	HeadObject(ctx context.Context, in *s3.HeadObjectInput, opts ...func(*s3.Options)) (*s3.HeadObjectOutput, error)
}

var _ API = (*s3.Client)(nil)

// Store keeps blobs in one S3 bucket.
type Store struct {
	api    API
	bucket string
	counts Counts
}

// New returns a store over bucket.
func New(api API, bucket string) *Store { return &Store{api: api, bucket: bucket} }

// Bucket returns the store's bucket.
func (s *Store) Bucket() string { return s.bucket }

// Counts returns the store's request counters.
func (s *Store) Counts() *Counts { return &s.counts }

// Counts tallies the S3 API calls a Store made (each call once, however
// often the SDK retried it underneath) and the bytes they moved.
type Counts struct {
	Puts     atomic.Int64 // PutObject calls
	Gets     atomic.Int64 // GetObject calls, found or not
	Heads    atomic.Int64 // HeadObject calls
	PutBytes atomic.Int64 // bytes written by successful puts
	GetBytes atomic.Int64 // bytes read by successful gets
}

// String formats the counters for a log line.
func (c *Counts) String() string {
	return fmt.Sprintf("puts=%d gets=%d heads=%d put_bytes=%d get_bytes=%d",
		c.Puts.Load(), c.Gets.Load(), c.Heads.Load(), c.PutBytes.Load(), c.GetBytes.Load())
}

// checkKey refuses the keys blobfs refuses, so both stores accept the same.
func checkKey(op, key string) error {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") {
		return crawl.Errorf(crawl.KindInvalid, "%s: invalid blob key %q", op, key)
	}
	return nil
}

// ContentType is the content type Put gives key: JSON for .json keys,
// else bytes.
func ContentType(key string) string {
	if strings.HasSuffix(key, ".json") {
		return "application/json"
	}
	return "application/octet-stream"
}

// Put stores data under key, encrypted with S3-managed keys (SSE-S3,
// AES256). Writing an existing key replaces it; since keys are content
// hashes or crawl ids, a replacement is the same data.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	op := "put blob " + key
	if err := checkKey(op, key); err != nil {
		return err
	}
	s.counts.Puts.Add(1)
	if _, err := s.api.PutObject(ctx, &s3.PutObjectInput{
		Bucket:               aws.String(s.bucket),
		Key:                  aws.String(key),
		Body:                 bytes.NewReader(data),
		ContentLength:        aws.Int64(int64(len(data))),
		ContentType:          aws.String(ContentType(key)),
		ServerSideEncryption: types.ServerSideEncryptionAes256,
	}); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	s.counts.PutBytes.Add(int64(len(data)))
	return nil
}

// Get returns the data stored under key, or an error wrapping
// crawl.ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	op := "get blob " + key
	if err := checkKey(op, key); err != nil {
		return nil, err
	}
	s.counts.Gets.Add(1)
	out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err != nil {
		if missing(err) {
			return nil, fmt.Errorf("%s: %w", op, crawl.ErrNotFound)
		}
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer out.Body.Close()
	var buf bytes.Buffer
	if n := aws.ToInt64(out.ContentLength); n > 0 {
		buf.Grow(int(n))
	}
	if _, err := io.Copy(&buf, out.Body); err != nil {
		return nil, fmt.Errorf("%s: read body: %w", op, err)
	}
	s.counts.GetBytes.Add(int64(buf.Len()))
	return buf.Bytes(), nil
}

// Exists reports whether an object is stored under key. A missing bucket
// reads as false too: HeadObject's 404 has no body to say which is missing.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	op := "head blob " + key
	if err := checkKey(op, key); err != nil {
		return false, err
	}
	s.counts.Heads.Add(1)
	_, err := s.api.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key)})
	if err == nil {
		return true, nil
	}
	if missing(err) {
		return false, nil
	}
	return false, fmt.Errorf("%s: %w", op, err)
}

// missing reports whether err says the key does not exist: NoSuchKey
// (GetObject), NotFound (HeadObject, which has no body to name a code),
// or another 404 but NoSuchBucket, which is a misconfiguration.
func missing(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return true
		case "NoSuchBucket":
			return false
		}
	}
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

// GetRange returns n bytes of the object under key from offset off (a
// ranged GET: one request, billed as a GET, moving only those bytes), or
// an error wrapping crawl.ErrNotFound. A range past the object's end is
// an error. A server that ignores Range and sends the whole object (an
// emulator may) is read and cut.
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	op := fmt.Sprintf("get blob %s, %d bytes at %d", key, n, off)
	if err := checkKey(op, key); err != nil {
		return nil, err
	}
	if off < 0 || n <= 0 {
		return nil, crawl.Errorf(crawl.KindInvalid, "%s: invalid range", op)
	}
	s.counts.Gets.Add(1)
	out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(key),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1))})
	if err != nil {
		if missing(err) {
			return nil, fmt.Errorf("%s: %w", op, crawl.ErrNotFound)
		}
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, off+n+1))
	if err != nil {
		return nil, fmt.Errorf("%s: read body: %w", op, err)
	}
	s.counts.GetBytes.Add(int64(len(b)))
	switch {
	case out.ContentRange != nil && int64(len(b)) == n:
		return b, nil
	case out.ContentRange == nil && int64(len(b)) >= off+n:
		return b[off : off+n], nil // Range ignored: the whole object came
	}
	return nil, fmt.Errorf("%s: got %d bytes, Content-Range %q (past the object's end?)", op, len(b), aws.ToString(out.ContentRange))
}

// Keep stores a fetched body under its content address (crawl.BodyKey)
// and returns that key: one object a body. The fetcher packs bodies with
// warc.Packer instead; this is the plain store's side of the contract.
func (s *Store) Keep(ctx context.Context, x warc.Exchange) (string, error) {
	key := crawl.BodyKey(x.Body)
	if err := s.Put(ctx, key, x.Body); err != nil {
		return "", err
	}
	return key, nil
}
