package ledger

import (
	"context"
	"time"
)

// RefundWait records that a refund cannot be sent yet because the books
// lack what the provider needs to send it (an M-Pesa reversal names the
// charge's receipt, which a lost callback never brought): its job waits and
// looks again, rather than failing, until the receipt comes by a pull, a
// callback or a statement, or the wait is given up.
type RefundWait struct {
	// IntentKey is the refund intent's key.
	IntentKey string
	// Reason says what it waits for.
	Reason string
	// Since is when it first waited; CheckedAt when its job last looked;
	// NextAt when it looks again; Checks how often it has looked.
	Since     time.Time
	CheckedAt time.Time
	NextAt    time.Time
	Checks    int
}

// RefundWaitStore keeps the refunds that wait.
type RefundWaitStore interface {
	// WaitRefund records that w.IntentKey waits, or, when it waited
	// already, that its job looked again (Since stays the first, Checks
	// grows); it returns the wait as stored.
	WaitRefund(ctx context.Context, w RefundWait) (RefundWait, error)
	// EndRefundWait removes the wait of a refund intent (sent, or given
	// up); nothing when it did not wait.
	EndRefundWait(ctx context.Context, intentKey string) error
	// GetRefundWait returns the wait of a refund intent; ErrNotFound when
	// it does not wait.
	GetRefundWait(ctx context.Context, intentKey string) (RefundWait, error)
	// ListRefundWaits lists the refunds that wait, longest waiting first.
	ListRefundWaits(ctx context.Context, limit int) ([]RefundWait, error)
}
