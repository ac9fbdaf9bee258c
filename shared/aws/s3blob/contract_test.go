package s3blob

import (
	"testing"

	"github.com/serverless-crawler/crawler/shared/testkit/contract"
)

var (
	_ contract.BlobStore   = (*Store)(nil)
	_ contract.BlobExister = (*Store)(nil)
)

// TestContract runs the adapter contract against S3 on the emulator,
// each case on a fresh bucket.
func TestContract(t *testing.T) {
	contract.Blobs(t, func(t *testing.T) contract.BlobStore {
		s, _ := testStore(t)
		return s
	})
}
