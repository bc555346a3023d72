package sqlitestore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/reconcilehq/reconcile/ledger"
)

func (e executor) AddQuarantine(ctx context.Context, q ledger.QuarantineItem) (int64, error) {
	q = q.Bounded()
	var id int64
	err := e.queryRow(ctx, `
		INSERT INTO quarantine (source, origin, line, field, reason, raw, received_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		q.Source, q.Origin, q.Line, q.Field, q.Reason, q.Raw, ts(q.At)).Scan(&id)
	return id, ledger.Wrap("quarantine", q.Source, translate(err))
}

func (e executor) AddQuarantineOnce(ctx context.Context, q ledger.QuarantineItem) (int64, bool, error) {
	q = q.Bounded()
	var id int64
	err := e.queryRow(ctx, `
		INSERT INTO quarantine (source, origin, line, field, reason, raw, received_at)
		SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
		WHERE NOT EXISTS (SELECT 1 FROM quarantine WHERE source = ?1 AND origin = ?2 AND field = ?4 AND raw IS ?6)
		RETURNING id`,
		q.Source, q.Origin, q.Line, q.Field, q.Reason, q.Raw, ts(q.At)).Scan(&id)
	if err == nil {
		return id, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return 0, false, ledger.Wrap("quarantine", q.Source, translate(err))
	}
	err = e.queryRow(ctx, `
		SELECT id FROM quarantine WHERE source = ?1 AND origin = ?2 AND field = ?3 AND raw IS ?4 ORDER BY id LIMIT 1`,
		q.Source, q.Origin, q.Field, q.Raw).Scan(&id)
	return id, false, ledger.Wrap("quarantine", q.Source, translate(err))
}

func (e executor) ListQuarantine(ctx context.Context, source string, limit int) ([]ledger.QuarantineItem, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.query(ctx, `
		SELECT id, source, origin, line, field, reason, raw, received_at, status FROM quarantine
		WHERE (?1 = '' OR source = ?1) ORDER BY id DESC LIMIT ?2`, source, limit)
	if err != nil {
		return nil, ledger.Wrap("list quarantine", source, translate(err))
	}
	out, err := collect(rows, func(r scanner) (ledger.QuarantineItem, error) {
		var (
			q  ledger.QuarantineItem
			at string
		)
		if err := r.Scan(&q.ID, &q.Source, &q.Origin, &q.Line, &q.Field, &q.Reason, &q.Raw, &at, &q.Status); err != nil {
			return q, err
		}
		var err error
		q.At, err = parseTS(at)
		return q, err
	})
	return out, ledger.Wrap("list quarantine", source, err)
}
