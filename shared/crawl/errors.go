package crawl

import (
	"errors"
	"fmt"
)

// Kind sorts failures: a Transient one is worth retrying (the message
// goes back to its queue), an Invalid one never will succeed (the input
// is recorded as such and the message acknowledged or dead-lettered).
type Kind int

// The error kinds.
const (
	KindOther     Kind = iota
	KindTransient      // retry later: network, throttling, a lost race
	KindInvalid        // bad input: retrying cannot help
	KindConflict       // a conditional write lost; re-read and retry
	KindNotFound       // the thing asked for does not exist
)

// Error is a failure with an operation and a kind, after upspin's errors.E.
type Error struct {
	Op   string
	Kind Kind
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return e.Op
	}
	return e.Op + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// E builds an Error of kind k for operation op.
func E(op string, k Kind, err error) error { return &Error{Op: op, Kind: k, Err: err} }

// Errorf builds an Error of kind k with a formatted message.
func Errorf(k Kind, format string, args ...any) error {
	return &Error{Op: fmt.Sprintf(format, args...), Kind: k}
}

// KindOf returns the kind of the first Error in err's chain whose kind is
// set, or KindOther.
func KindOf(err error) Kind {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return KindOther
		}
		if e.Kind != KindOther {
			return e.Kind
		}
		err = e.Err
	}
	return KindOther
}

// IsTransient reports whether err is worth retrying. Unknown errors count
// as transient: a message is retried and, if it keeps failing, lands in
// the dead-letter queue rather than being dropped.
func IsTransient(err error) bool {
	k := KindOf(err)
	return k == KindTransient || k == KindConflict || k == KindOther
}

// ErrNotFound is returned by stores when a record does not exist.
var ErrNotFound = E("not found", KindNotFound, nil)

// ErrConflict is returned by stores when a conditional write finds the
// record changed since it was read.
var ErrConflict = E("conditional write lost", KindConflict, nil)
