package ledger

import (
	"context"
	"time"
)

// InteractionStore remembers the chat interactions (Slack button presses and
// dialog submissions) already applied, so that a retried delivery of the
// same interaction changes nothing, on every replica and across restarts.
type InteractionStore interface {
	// ClaimInteraction records key as applied at at and reports whether it
	// is new (false: it was applied before). Use it in the transaction that
	// applies the interaction: when that rolls back, so does the claim.
	ClaimInteraction(ctx context.Context, key string, at time.Time) (bool, error)
}
