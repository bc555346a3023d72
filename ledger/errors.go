package ledger

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound reports that the addressed row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict reports a uniqueness or state conflict: the row exists in a
	// form that the operation may not overwrite, or a compare-and-set lost.
	ErrConflict = errors.New("conflict")
	// ErrNotClaimable reports that a claim was refused because another owner
	// holds an unexpired lease or the row is no longer claimable.
	ErrNotClaimable = errors.New("not claimable")
)

// OpError wraps a store error with the operation and the key it concerned.
type OpError struct {
	Op  string
	Key string
	Err error
}

func (e *OpError) Error() string {
	if e.Key == "" {
		return "ledger: " + e.Op + ": " + e.Err.Error()
	}
	return fmt.Sprintf("ledger: %s %q: %v", e.Op, e.Key, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// Wrap returns err wrapped in an OpError, or nil when err is nil.
func Wrap(op, key string, err error) error {
	if err == nil {
		return nil
	}
	return &OpError{Op: op, Key: key, Err: err}
}

// KeyReuseError reports an attempt to create an intent under an existing key
// with different parameters. It names both sets of parameters.
type KeyReuseError struct {
	Key       string
	Existing  IntentParams
	Requested IntentParams
}

func (e *KeyReuseError) Error() string {
	return fmt.Sprintf("key reused with different parameters: key %q exists as %s, requested %s",
		e.Key, e.Existing.describe(), e.Requested.describe())
}

// Is makes errors.Is(err, ErrConflict) true for a KeyReuseError.
func (e *KeyReuseError) Is(target error) bool { return target == ErrConflict }

// DriverError is a database driver's error translated to one of the ledger's
// sentinels (ErrNotFound, ErrConflict). It reads as the sentinel and a
// detail, and unwraps to both, so errors.Is finds the sentinel and errors.As
// the driver's own error (*pgconn.PgError, *sqlite.Error).
type DriverError struct {
	Sentinel error
	// Detail follows the sentinel in the text; empty for none.
	Detail string
	Err    error
}

func (e *DriverError) Error() string {
	if e.Detail == "" {
		return e.Sentinel.Error()
	}
	return e.Sentinel.Error() + ": " + e.Detail
}

func (e *DriverError) Unwrap() []error { return []error{e.Sentinel, e.Err} }
