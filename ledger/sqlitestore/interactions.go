package sqlitestore

import (
	"context"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func (e executor) ClaimInteraction(ctx context.Context, key string, at time.Time) (bool, error) {
	res, err := e.exec(ctx, `INSERT INTO chat_interactions (key, applied_at) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, ts(at))
	if err != nil {
		return false, ledger.Wrap("claim interaction", key, translate(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, ledger.Wrap("claim interaction", key, err)
	}
	return n == 1, nil
}
