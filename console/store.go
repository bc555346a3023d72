package console

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/report"
)

// Store is what the console reads and acts through; a ledger.Store has it.
type Store interface {
	// Findings, with their evidence and history, and the manual links
	// people made; decisions go through the findings service.
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
	GetFinding(ctx context.Context, id string) (ledger.Finding, error)
	FindingHistory(ctx context.Context, id string) ([]ledger.HistoryEvent, error)
	GetIntent(ctx context.Context, key string) (ledger.Intent, error)
	ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error)
	GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error)
	GetManualLink(ctx context.Context, provider, txnID string) (ledger.ManualLink, error)
	ListRemedies(ctx context.Context, f ledger.RemedyFilter) ([]ledger.Remedy, error)
	GetRefundWait(ctx context.Context, intentKey string) (ledger.RefundWait, error)
	// The refunds that wait for evidence before they can be sent.
	ListRefundWaits(ctx context.Context, limit int) ([]ledger.RefundWait, error)

	// What the findings search reads besides the findings.
	SearchStore

	// The month-end close: what its report reads, and the closes.
	report.CloseStore
	ClosePeriod(ctx context.Context, c ledger.PeriodClose) (ledger.PeriodClose, error)

	// Runs and the quarantine.
	ListRuns(ctx context.Context, provider string, limit int) ([]ledger.Run, error)
	ListQuarantine(ctx context.Context, source string, limit int) ([]ledger.QuarantineItem, error)
	GetQuarantine(ctx context.Context, id int64) (ledger.QuarantineItem, error)
	UpdateQuarantine(ctx context.Context, u ledger.QuarantineUpdate) (ledger.QuarantineItem, error)
}
