package main

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// What the HTTP handlers and the metrics read and write of the books, each
// declared where it is used and each met by a ledger.Store.

// intentsStore is what the intents and refunds API needs besides the charge
// service: the stored answer of a request and the intent it made.
type intentsStore interface {
	GetAPIRequest(ctx context.Context, key string) (ledger.APIRequest, error)
	GetIntent(ctx context.Context, key string) (ledger.Intent, error)
	ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error)
	ledger.Transactor
}

// findingDetailReader is what a finding's detail reads: the finding, its
// intent with attempts, its transactions and its history.
type findingDetailReader interface {
	GetFinding(ctx context.Context, id string) (ledger.Finding, error)
	GetIntent(ctx context.Context, key string) (ledger.Intent, error)
	ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error)
	GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error)
	FindingHistory(ctx context.Context, id string) ([]ledger.HistoryEvent, error)
}

// findingsStore is what the findings API reads and acts through.
type findingsStore interface {
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
	findingDetailReader
	ledger.Transactor
}

// booksStore is what the books gauges read: the latest runs and the open
// findings.
type booksStore interface {
	ListRuns(ctx context.Context, provider string, limit int) ([]ledger.Run, error)
	ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error)
}

// findingsCounter is what the findings collector reads.
type findingsCounter interface {
	CountFindings(ctx context.Context) ([]ledger.FindingCount, error)
}
