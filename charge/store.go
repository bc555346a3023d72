package charge

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// Store is what the charge service reads and writes outside the
// transactions it opens; a ledger.Store has it.
type Store interface {
	// ClaimAndStart takes the lease on an intent to charge it.
	ClaimAndStart(ctx context.Context, p ledger.ClaimParams) (ledger.Intent, ledger.Attempt, error)
	StartAttempt(ctx context.Context, p ledger.AttemptParams) (ledger.Attempt, error)
	ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error)
	TransitionIntent(ctx context.Context, p ledger.TransitionParams) (ledger.Intent, error)
	// GetEvent reads an outgoing event to deliver.
	GetEvent(ctx context.Context, id string) (ledger.Event, error)
	ledger.Transactor
}
