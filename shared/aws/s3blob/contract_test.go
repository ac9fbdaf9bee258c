package s3blob

import (
	"testing"

	"github.com/serverless-crawler/crawler/shared/testkit/contract"
	"github.com/serverless-crawler/crawler/shared/web/warc"
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

// TestPackerContract: bodies packed in WARC files (warc.Packer, as the
// fetcher keeps them) over S3 keep the same contract: read back with
// ranged GETs.
func TestPackerContract(t *testing.T) {
	contract.Blobs(t, func(t *testing.T) contract.BlobStore {
		s, _ := testStore(t)
		return warc.NewPacker(s, warc.PackConfig{Prefix: "warc/", Software: "test"})
	})
}
