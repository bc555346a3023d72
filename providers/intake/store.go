package intake

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

// Store is what a Processor needs of the books: deliveries are stored as
// they come, then interpreted each in a transaction of its own; a
// ledger.Store has it.
type Store interface {
	StoreCallback(ctx context.Context, c ledger.Callback) (stored ledger.Callback, dup bool, err error)
	ListUnprocessedCallbacks(ctx context.Context, provider string, limit int) ([]ledger.Callback, error)
	ledger.Transactor
}
