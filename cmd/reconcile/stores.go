package main

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// What the metrics read of the books, each declared where it is used and
// each met by a ledger.Store.

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
