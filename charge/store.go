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
	// GetIntent and ListProviderTxns name the charge a refund gives money
	// back for (its provider reference and money-level id).
	GetIntent(ctx context.Context, key string) (ledger.Intent, error)
	ListProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ProviderTxn) error) error
	// GetProviderTxn reads the transaction a refund names (MetaChargeTxn).
	GetProviderTxn(ctx context.Context, provider, id string) (ledger.ProviderTxn, error)
	// The refunds that wait for evidence before they can be sent.
	WaitRefund(ctx context.Context, w ledger.RefundWait) (ledger.RefundWait, error)
	EndRefundWait(ctx context.Context, intentKey string) error
	GetRefundWait(ctx context.Context, intentKey string) (ledger.RefundWait, error)
	// GetEvent reads an outgoing event to deliver.
	GetEvent(ctx context.Context, id string) (ledger.Event, error)
	ledger.Transactor
}
