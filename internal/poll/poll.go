package poll

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// Interval is how often a condition is checked when Options leave it unset.
const Interval = 20 * time.Millisecond

// ErrTimeout is returned when the condition did not hold in time.
var ErrTimeout = errors.New("poll: condition not met in time")

// Until checks cond every interval until it returns true, returns an error,
// or timeout passes (ErrTimeout, wrapping cond's last error if any) or ctx
// ends. An error from cond is kept and retried: the condition may depend on
// something that is briefly unreachable (a database being restarted).
func Until(ctx context.Context, timeout, interval time.Duration, cond func() (bool, error)) error {
	if interval <= 0 {
		interval = Interval
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		ok, err := cond()
		if ok && err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				if err != nil {
					return fmt.Errorf("%w after %s (last error: %w)", ErrTimeout, timeout, err)
				}
				return fmt.Errorf("%w after %s", ErrTimeout, timeout)
			}
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Wait is Until for tests: it fails tb, naming what it waited for, when cond
// does not hold within timeout.
func Wait(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if err := Until(tb.Context(), timeout, Interval, func() (bool, error) { return cond(), nil }); err != nil {
		tb.Fatalf("waiting for %s: %v", what, err)
	}
}

// WaitErr is Wait for a condition that can fail; its last error is reported.
func WaitErr(tb testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	tb.Helper()
	if err := Until(tb.Context(), timeout, Interval, cond); err != nil {
		tb.Fatalf("waiting for %s: %v", what, err)
	}
}
