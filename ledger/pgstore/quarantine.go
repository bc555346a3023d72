package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

func (e executor) AddQuarantine(ctx context.Context, q ledger.QuarantineItem) (int64, error) {
	q = q.Bounded()
	var id int64
	err := e.db.QueryRow(ctx, `
		INSERT INTO quarantine (source, origin, line, field, reason, raw, received_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		q.Source, q.Origin, q.Line, q.Field, q.Reason, q.Raw, utc(q.At)).Scan(&id)
	return id, ledger.Wrap("quarantine", q.Source, translate(err))
}

func (e executor) AddQuarantineOnce(ctx context.Context, q ledger.QuarantineItem) (int64, bool, error) {
	q = q.Bounded()
	var id int64
	err := e.db.QueryRow(ctx, `
		INSERT INTO quarantine (source, origin, line, field, reason, raw, received_at)
		SELECT $1, $2, $3::integer, $4, $5, $6::bytea, $7::timestamptz
		WHERE NOT EXISTS (SELECT 1 FROM quarantine
			WHERE source = $1 AND origin = $2 AND field = $4 AND raw IS NOT DISTINCT FROM $6::bytea)
		RETURNING id`,
		q.Source, q.Origin, q.Line, q.Field, q.Reason, q.Raw, utc(q.At)).Scan(&id)
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, ledger.Wrap("quarantine", q.Source, translate(err))
	}
	err = e.db.QueryRow(ctx, `
		SELECT id FROM quarantine WHERE source = $1 AND origin = $2 AND field = $3 AND raw IS NOT DISTINCT FROM $4::bytea
		ORDER BY id LIMIT 1`, q.Source, q.Origin, q.Field, q.Raw).Scan(&id)
	return id, false, ledger.Wrap("quarantine", q.Source, translate(err))
}

func (e executor) ListQuarantine(ctx context.Context, source string, limit int) ([]ledger.QuarantineItem, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.db.Query(ctx, `
		SELECT id, source, origin, line, field, reason, raw, received_at, status FROM quarantine
		WHERE ($1 = '' OR source = $1) ORDER BY id DESC LIMIT $2`, source, limit)
	if err != nil {
		return nil, ledger.Wrap("list quarantine", source, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.QuarantineItem, error) {
		var q ledger.QuarantineItem
		err := r.Scan(&q.ID, &q.Source, &q.Origin, &q.Line, &q.Field, &q.Reason, &q.Raw, &q.At, &q.Status)
		q.At = q.At.UTC()
		return q, err
	})
	return out, ledger.Wrap("list quarantine", source, translate(err))
}
