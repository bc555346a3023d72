package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

const callbackCols = `id, provider, kind, dedupe_key, body, remote_addr, received_at, processed_at, error`

func scanCallback(row scanner) (ledger.Callback, error) {
	var (
		c         ledger.Callback
		received  string
		processed sql.NullString
	)
	if err := row.Scan(&c.ID, &c.Provider, &c.Kind, &c.DedupeKey, &c.Body, &c.RemoteAddr, &received, &processed, &c.Error); err != nil {
		return ledger.Callback{}, err
	}
	var err error
	if c.ReceivedAt, err = parseTS(received); err != nil {
		return ledger.Callback{}, err
	}
	c.ProcessedAt, err = parseNullTS(processed)
	return c, err
}

func (e executor) StoreCallback(ctx context.Context, c ledger.Callback) (ledger.Callback, bool, error) {
	stored, err := scanCallback(e.queryRow(ctx, `
		INSERT INTO callbacks (provider, kind, dedupe_key, body, remote_addr, received_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (provider, dedupe_key) DO NOTHING
		RETURNING `+callbackCols, c.Provider, c.Kind, c.DedupeKey, c.Body, c.RemoteAddr, ts(c.ReceivedAt)))
	if errors.Is(err, sql.ErrNoRows) {
		stored, err = scanCallback(e.queryRow(ctx, `SELECT `+callbackCols+` FROM callbacks
			WHERE provider = ? AND dedupe_key = ?`, c.Provider, c.DedupeKey))
		return stored, true, ledger.Wrap("store callback", c.DedupeKey, translate(err))
	}
	return stored, false, ledger.Wrap("store callback", c.DedupeKey, translate(err))
}

func (e executor) MarkCallbackProcessed(ctx context.Context, id int64, kind, errText string, now time.Time) error {
	r, err := e.exec(ctx, `UPDATE callbacks SET kind = CASE WHEN ?2 <> '' THEN ?2 ELSE kind END,
		processed_at = ?3, error = ?4 WHERE id = ?1`, id, kind, ts(now), errText)
	if err == nil {
		if n, _ := r.RowsAffected(); n == 0 {
			err = ledger.ErrNotFound
		}
	}
	return ledger.Wrap("mark callback processed", strconv.FormatInt(id, 10), translate(err))
}

func (e executor) ListUnprocessedCallbacks(ctx context.Context, provider string, limit int) ([]ledger.Callback, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.query(ctx, `SELECT `+callbackCols+` FROM callbacks
		WHERE provider = ? AND processed_at IS NULL ORDER BY id LIMIT ?`, provider, limit)
	if err != nil {
		return nil, ledger.Wrap("list callbacks", provider, translate(err))
	}
	out, err := collect(rows, scanCallback)
	return out, ledger.Wrap("list callbacks", provider, err)
}
