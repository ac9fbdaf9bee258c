package pipeline

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/serverless-crawler/crawler/shared/local/sqlite"
)

// ErrUnwritable is what a run stops with when its data directory cannot
// be written: the disk is full, the file system read-only or failing.
// Retrying a message cannot help then, and a message that could not even
// be put back for a retry stayed leased, so that a run with such a
// message pending never ended (an exploratory test left one running on
// a full disk for more than ten minutes). The run stops at the first
// such failure; what it had not recorded is due again in the next run.
var ErrUnwritable = errors.New("the data directory cannot be written (is the disk full?); free space and run the same command again to continue")

// unwritable reports whether err says the data directory cannot be
// written. Not a failed read (EIO, a damaged record): that is retried
// and dead-lettered with its message, as before, rather than stop every
// run at the same message.
func unwritable(err error) bool {
	return sqlite.Unwritable(err) || errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		errors.Is(err, syscall.EROFS) || errors.Is(err, syscall.EFBIG)
}

// stopIfUnwritable stops the run with ErrUnwritable (and err) when err
// says the data directory cannot be written, and reports whether it did.
func (r *runner) stopIfUnwritable(err error) bool {
	if err == nil || !unwritable(err) {
		return false
	}
	r.stop(fmt.Errorf("%w: %w", ErrUnwritable, err))
	return true
}
