package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Outgoing event types, written in the same transaction as the state change
// they announce.
const (
	EventChargeSucceeded = "charge.succeeded"
	EventChargeFailed    = "charge.failed"
	EventChargeUnknown   = "charge.unknown"
	EventRefundSucceeded = "refund.succeeded"
	EventRefundFailed    = "refund.failed"
	EventRefundUnknown   = "refund.unknown"
)

// Event is an outgoing notification about an intent. Its ID is stable for
// (type, intent key) and serves receivers as their idempotency key.
type Event struct {
	ID        string
	Type      string
	IntentKey string
	Payload   []byte
	CreatedAt time.Time
}

// EventID is the stable id of the event of type typ for an intent: an intent
// announces each kind of outcome once.
func EventID(typ, intentKey string) string {
	sum := sha256.Sum256([]byte(typ + "\x00" + intentKey))
	return "evt_" + hex.EncodeToString(sum[:])[:24]
}

// APIRequest is the stored outcome of an API request made under an
// Idempotency-Key, replayed for repeats of the same request.
type APIRequest struct {
	Key         string
	RequestHash string
	Status      int
	Response    []byte
	CreatedAt   time.Time
}

// EventStore keeps outgoing events and API idempotency records.
type EventStore interface {
	// InsertEvent stores e unless its id exists; created says which.
	InsertEvent(ctx context.Context, e Event) (Event, bool, error)
	GetEvent(ctx context.Context, id string) (Event, error)
	// SaveAPIRequest stores r unless its key exists and returns what is
	// stored for the key.
	SaveAPIRequest(ctx context.Context, r APIRequest) (APIRequest, bool, error)
	GetAPIRequest(ctx context.Context, key string) (APIRequest, error)
}
