package ledger

import (
	"context"
	"time"
)

// Callback is a provider callback body as received, stored durably before it
// is acknowledged and before it is interpreted.
type Callback struct {
	ID       int64
	Provider string
	// Kind names the callback type (stk_callback, c2b_confirmation...); empty
	// until it is recognised.
	Kind string
	// DedupeKey identifies the delivery: the same body delivered twice has
	// the same key (a hash of the body, or the provider's own id).
	DedupeKey  string
	Body       []byte
	RemoteAddr string
	ReceivedAt time.Time
	// ProcessedAt is set once the body was interpreted into provider
	// transactions (or quarantined).
	ProcessedAt time.Time
	Error       string
}

// CallbackStore keeps the callback inbox.
type CallbackStore interface {
	// StoreCallback stores a delivery; a delivery with a known (provider,
	// dedupe key) changes nothing and returns the stored one with dup true.
	StoreCallback(ctx context.Context, c Callback) (stored Callback, dup bool, err error)
	// MarkCallbackProcessed records that the callback was interpreted, with
	// the error that rejected it if any.
	MarkCallbackProcessed(ctx context.Context, id int64, kind, errText string, now time.Time) error
	// ListUnprocessedCallbacks returns stored callbacks not yet interpreted,
	// oldest first.
	ListUnprocessedCallbacks(ctx context.Context, provider string, limit int) ([]Callback, error)
}
