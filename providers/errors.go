package providers

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind says what a failed provider call means for the money.
type ErrorKind int

// Error kinds.
const (
	// Ambiguous: the request may have reached the provider and charged; the
	// caller must learn the outcome before trying anything that could charge
	// again. Unknown errors (timeouts, resets) are ambiguous.
	Ambiguous ErrorKind = iota
	// Retryable: the provider certainly did not act (refused before
	// processing: rate limited, unavailable, connection refused).
	Retryable
	// Permanent: the provider refused the charge for good (invalid number,
	// declined card, insufficient funds); retrying cannot help.
	Permanent
)

func (k ErrorKind) String() string {
	switch k {
	case Retryable:
		return "retryable"
	case Permanent:
		return "permanent"
	}
	return "ambiguous"
}

// Error is a provider failure classified by what it means for the money.
type Error struct {
	Provider string
	Kind     ErrorKind
	// Code is the provider's own code (errorCode, ResultCode, decline code).
	Code    string
	Message string
	// RetryAfter is the provider's requested wait, if it said.
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.Code != "" {
		return fmt.Sprintf("%s: %s error %s: %s", e.Provider, e.Kind, e.Code, msg)
	}
	return fmt.Sprintf("%s: %s error: %s", e.Provider, e.Kind, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf classifies err: the Kind of a *Error in its chain, Ambiguous for
// anything else.
func KindOf(err error) ErrorKind {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Kind
	}
	return Ambiguous
}
