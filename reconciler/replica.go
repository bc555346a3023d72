package reconciler

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// Replica offers a read replica of the books to read a run's matching
// from.
type Replica interface {
	// Fresh returns the replica when it holds everything the primary had
	// written when Fresh was called, or nil and why the run should read
	// the primary.
	Fresh(ctx context.Context) (ledger.Reader, string)
}

// readsFor returns the reconciler a run matches with, and where it reads:
// one whose matching reads go to the replica when one is configured and it
// holds everything the primary had written (the run's pull and every
// import, callback and decision before it), else r itself. Everything the
// run writes, and every read inside its writing transaction, stays on the
// primary.
func (r *Reconciler) readsFor(ctx context.Context) (*Reconciler, string) {
	if r.cfg.Replica == nil {
		return r, ""
	}
	rd, why := r.cfg.Replica.Fresh(ctx)
	if rd == nil {
		return r, "primary: " + why
	}
	c := *r
	c.store = readsFrom{Store: r.store, rd: rd}
	return &c, "replica"
}

// readsFrom is a run's store with the reads of its matching sent to rd:
// the scans of the span and the look-ups of its leftovers.
type readsFrom struct {
	Store
	rd ledger.Reader
}

// ConcurrentScans is the replica's: whether it takes two scans at once.
func (s readsFrom) ConcurrentScans() bool {
	cs, ok := s.rd.(concurrentScanner)
	return ok && cs.ConcurrentScans()
}

func (s readsFrom) ScanIntents(ctx context.Context, f ledger.IntentFilter, fn func(*ledger.IntentRow) error) error {
	return s.rd.ScanIntents(ctx, f, fn)
}

func (s readsFrom) ScanProviderRefs(ctx context.Context, f ledger.IntentFilter, fn func(key, ref []byte) error) error {
	return s.rd.ScanProviderRefs(ctx, f, fn)
}

func (s readsFrom) ScanProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(*ledger.TxnRow) error) error {
	return s.rd.ScanProviderTxns(ctx, f, fn)
}

func (s readsFrom) ScanManualLinks(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ManualLink) error) error {
	return s.rd.ScanManualLinks(ctx, f, fn)
}

func (s readsFrom) ListIntentsInState(ctx context.Context, provider string, states []ledger.State, fn func(ledger.Intent) error) error {
	return s.rd.ListIntentsInState(ctx, provider, states, fn)
}

func (s readsFrom) GetIntents(ctx context.Context, keys []string) ([]ledger.Intent, error) {
	return s.rd.GetIntents(ctx, keys)
}

func (s readsFrom) ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error) {
	return s.rd.ListAttempts(ctx, intentKey)
}

func (s readsFrom) GetProviderTxns(ctx context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error) {
	return s.rd.GetProviderTxns(ctx, provider, ids)
}

func (s readsFrom) FindIntents(ctx context.Context, l ledger.IntentLookup) ([]ledger.Intent, error) {
	return s.rd.FindIntents(ctx, l)
}

func (s readsFrom) FindTxns(ctx context.Context, l ledger.TxnLookup) ([]ledger.ProviderTxn, error) {
	return s.rd.FindTxns(ctx, l)
}

func (s readsFrom) FindManualLinks(ctx context.Context, provider string, txnIDs, intentKeys []string) ([]ledger.ManualLink, error) {
	return s.rd.FindManualLinks(ctx, provider, txnIDs, intentKeys)
}

func (s readsFrom) ListFindings(ctx context.Context, f ledger.FindingFilter) ([]ledger.Finding, error) {
	return s.rd.ListFindings(ctx, f)
}
