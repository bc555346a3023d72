package reconciler

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// Store is what a reconcile reads and writes outside the transaction that
// records its outcome; a ledger.Store has it.
type Store interface {
	// The run's claim on its window.
	ClaimRun(ctx context.Context, c ledger.RunClaim) (ledger.Run, error)
	RenewRun(ctx context.Context, r ledger.RunRenew) (ledger.Run, error)
	FinishRun(ctx context.Context, f ledger.RunFinish) (ledger.Run, error)

	// What was pulled: sightings, and what could not be read.
	UpsertProviderTxns(ctx context.Context, batch []ledger.Sighting) (ledger.UpsertCounts, error)
	AddQuarantine(ctx context.Context, q ledger.QuarantineItem) (int64, error)
	AddQuarantineOnce(ctx context.Context, q ledger.QuarantineItem) (int64, bool, error)

	// The window's intents and transactions, and those outside it that
	// open intents, manual links and late disputes bring in.
	ScanIntents(ctx context.Context, f ledger.IntentFilter, fn func(*ledger.IntentRow) error) error
	ScanProviderRefs(ctx context.Context, f ledger.IntentFilter, fn func(key, ref []byte) error) error
	ScanProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(*ledger.TxnRow) error) error
	ScanManualLinks(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ManualLink) error) error
	ListIntentsInState(ctx context.Context, provider string, states []ledger.State, fn func(ledger.Intent) error) error
	GetIntents(ctx context.Context, keys []string) ([]ledger.Intent, error)
	ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error)
	GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error)

	// The leftovers of a window, looked up across the horizon.
	FindIntents(ctx context.Context, l ledger.IntentLookup) ([]ledger.Intent, error)
	FindTxns(ctx context.Context, l ledger.TxnLookup) ([]ledger.ProviderTxn, error)
	FindManualLinks(ctx context.Context, provider string, txnIDs, intentKeys []string) ([]ledger.ManualLink, error)

	// A bank account's runs: its entries, the payouts of its sources and
	// what they carry.
	ListProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ProviderTxn) error) error
	GetBankEntries(ctx context.Context, provider string, ids []string) ([]ledger.BankEntry, error)
	FindPayouts(ctx context.Context, l ledger.PayoutLookup) ([]ledger.Payout, error)
	PayoutItems(ctx context.Context, provider string, payoutIDs []string) ([]ledger.PayoutItem, error)
	ItemsOfTxns(ctx context.Context, provider string, txnIDs []string) ([]ledger.PayoutItem, error)

	// Findings, listed and resolved by hand.
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
	UpdateFinding(ctx context.Context, u ledger.FindingUpdate) (ledger.Finding, error)

	ledger.Transactor
}
