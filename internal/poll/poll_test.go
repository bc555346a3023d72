package poll_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/poll"
)

func TestUntil(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	err := poll.Until(context.Background(), 5*time.Second, time.Millisecond, func() (bool, error) {
		return n.Add(1) == 3, nil
	})
	if err != nil || n.Load() != 3 {
		t.Fatalf("err %v after %d checks, want nil after 3", err, n.Load())
	}
}

func TestUntilTimesOutWithLastError(t *testing.T) {
	t.Parallel()
	boom := errors.New("database restarting")
	start := time.Now()
	err := poll.Until(context.Background(), 50*time.Millisecond, 5*time.Millisecond, func() (bool, error) { return false, boom })
	if !errors.Is(err, poll.ErrTimeout) || !errors.Is(err, boom) {
		t.Fatalf("err = %v, want a timeout wrapping the last error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s past a 50ms deadline", d)
	}
}

func TestUntilStopsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := poll.Until(ctx, time.Minute, time.Millisecond, func() (bool, error) { return false, nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}
