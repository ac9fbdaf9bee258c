package blobfs_test

import (
	"testing"

	"github.com/serverless-crawler/crawler/shared/local/blobfs"
	"github.com/serverless-crawler/crawler/shared/testkit/contract"
	"github.com/serverless-crawler/crawler/shared/web/warc"
)

var _ contract.BlobStore = (*blobfs.Store)(nil)

// TestContract runs the adapter contract against the file blob store,
// each case on a fresh directory.
func TestContract(t *testing.T) {
	contract.Blobs(t, func(t *testing.T) contract.BlobStore {
		s, err := blobfs.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestPackerContract: bodies packed in WARC files (warc.Packer) over the
// file store keep the same contract.
func TestPackerContract(t *testing.T) {
	contract.Blobs(t, func(t *testing.T) contract.BlobStore {
		s, err := blobfs.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return warc.NewPacker(s, warc.PackConfig{Prefix: "warc/", Software: "test"})
	})
}
