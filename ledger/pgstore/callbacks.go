package pgstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

const callbackCols = `id, provider, kind, dedupe_key, body, remote_addr, received_at, processed_at, error`

func scanCallback(row pgx.Row) (ledger.Callback, error) {
	var (
		c         ledger.Callback
		processed *time.Time
	)
	if err := row.Scan(&c.ID, &c.Provider, &c.Kind, &c.DedupeKey, &c.Body, &c.RemoteAddr, &c.ReceivedAt, &processed, &c.Error); err != nil {
		return ledger.Callback{}, err
	}
	c.ReceivedAt = c.ReceivedAt.UTC()
	c.ProcessedAt = fromNull(processed)
	return c, nil
}

func (e executor) StoreCallback(ctx context.Context, c ledger.Callback) (ledger.Callback, bool, error) {
	stored, err := scanCallback(e.db.QueryRow(ctx, `
		INSERT INTO callbacks (provider, kind, dedupe_key, body, remote_addr, received_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (provider, dedupe_key) DO NOTHING
		RETURNING `+callbackCols, c.Provider, c.Kind, c.DedupeKey, c.Body, c.RemoteAddr, utc(c.ReceivedAt)))
	if errors.Is(err, pgx.ErrNoRows) {
		stored, err = scanCallback(e.db.QueryRow(ctx, `SELECT `+callbackCols+` FROM callbacks
			WHERE provider = $1 AND dedupe_key = $2`, c.Provider, c.DedupeKey))
		return stored, true, ledger.Wrap("store callback", c.DedupeKey, translate(err))
	}
	return stored, false, ledger.Wrap("store callback", c.DedupeKey, translate(err))
}

func (e executor) MarkCallbackProcessed(ctx context.Context, id int64, kind, errText string, now time.Time) error {
	tag, err := e.db.Exec(ctx, `UPDATE callbacks SET kind = CASE WHEN $2 <> '' THEN $2 ELSE kind END,
		processed_at = $3, error = $4 WHERE id = $1`, id, kind, utc(now), errText)
	if err == nil && tag.RowsAffected() == 0 {
		err = ledger.ErrNotFound
	}
	return ledger.Wrap("mark callback processed", strconv.FormatInt(id, 10), translate(err))
}

func (e executor) ListUnprocessedCallbacks(ctx context.Context, provider string, limit int) ([]ledger.Callback, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.db.Query(ctx, `SELECT `+callbackCols+` FROM callbacks
		WHERE provider = $1 AND processed_at IS NULL ORDER BY id LIMIT $2`, provider, limit)
	if err != nil {
		return nil, ledger.Wrap("list callbacks", provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Callback, error) { return scanCallback(r) })
	return out, ledger.Wrap("list callbacks", provider, translate(err))
}
