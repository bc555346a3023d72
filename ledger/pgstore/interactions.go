package pgstore

import (
	"context"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func (e executor) ClaimInteraction(ctx context.Context, key string, at time.Time) (bool, error) {
	tag, err := e.db.Exec(ctx, `INSERT INTO chat_interactions (key, applied_at) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, key, utc(at))
	if err != nil {
		return false, ledger.Wrap("claim interaction", key, translate(err))
	}
	return tag.RowsAffected() == 1, nil
}
