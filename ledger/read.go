package ledger

import "context"

// Reader is the part of the books that only reads: what a reconcile's
// matching scans and looks up, and what reports and the console show. A
// Store has it; so does a store opened read-only on a read replica of the
// books, which a caller may read from instead of the primary when the
// replica is recent enough for what it reads.
type Reader interface {
	ScanStore
	LookupStore
	GetIntent(ctx context.Context, key string) (Intent, error)
	GetIntents(ctx context.Context, keys []string) ([]Intent, error)
	ListIntentsInState(ctx context.Context, provider string, states []State, fn func(Intent) error) error
	ListAttempts(ctx context.Context, intentKey string) ([]Attempt, error)
	GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ProviderTxn, error)
	ScanManualLinks(ctx context.Context, f TxnFilter, fn func(ManualLink) error) error
	GetManualLink(ctx context.Context, provider, txnID string) (ManualLink, error)
	GetRun(ctx context.Context, id int64) (Run, error)
	ListRuns(ctx context.Context, provider string, limit int) ([]Run, error)
	GetFinding(ctx context.Context, id string) (Finding, error)
	ListFindings(ctx context.Context, f FindingFilter) ([]Finding, error)
	CountFindings(ctx context.Context) ([]FindingCount, error)
	FindingHistory(ctx context.Context, id string) ([]HistoryEvent, error)
	ListRemedies(ctx context.Context, f RemedyFilter) ([]Remedy, error)
	GetRefundWait(ctx context.Context, intentKey string) (RefundWait, error)
}

var _ Reader = Store(nil)
