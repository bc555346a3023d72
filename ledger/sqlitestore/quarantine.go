package sqlitestore

import (
	"context"

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
