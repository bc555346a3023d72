package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

const alertCols = `id, subject, reason, provider, run_id, severity, channel, state, message_ts, thread_ts,
	attempts, error, may_have_posted, created_at, delivered_at`

func scanAlert(row pgx.Row) (ledger.Alert, error) {
	var (
		a         ledger.Alert
		delivered *time.Time
	)
	if err := row.Scan(&a.ID, &a.Subject, &a.Reason, &a.Provider, &a.RunID, &a.Severity, &a.Channel, &a.State,
		&a.MessageTS, &a.ThreadTS, &a.Attempts, &a.Error, &a.MayHavePosted, &a.CreatedAt, &delivered); err != nil {
		return ledger.Alert{}, err
	}
	a.CreatedAt = a.CreatedAt.UTC()
	a.DeliveredAt = fromNull(delivered)
	return a, nil
}

func (e executor) RecordAlert(ctx context.Context, a ledger.Alert) (ledger.Alert, bool, error) {
	key := a.Subject + "/" + a.Reason
	stored, err := scanAlert(e.db.QueryRow(ctx, `
		INSERT INTO alerts (subject, reason, provider, run_id, severity, channel, state, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7)
		ON CONFLICT (subject, reason) DO NOTHING
		RETURNING `+alertCols, a.Subject, a.Reason, a.Provider, a.RunID, a.Severity, a.Channel, utc(a.CreatedAt)))
	if errors.Is(err, pgx.ErrNoRows) {
		stored, err = scanAlert(e.db.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts WHERE subject = $1 AND reason = $2`,
			a.Subject, a.Reason))
		return stored, false, ledger.Wrap("record alert", key, translate(err))
	}
	return stored, true, ledger.Wrap("record alert", key, translate(err))
}

func (e executor) GetAlert(ctx context.Context, id int64) (ledger.Alert, error) {
	a, err := scanAlert(e.db.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts WHERE id = $1`, id))
	return a, ledger.Wrap("get alert", strconv.FormatInt(id, 10), translate(err))
}

func (e executor) MarkAlertDelivered(ctx context.Context, d ledger.AlertDelivery) (ledger.Alert, error) {
	id := strconv.FormatInt(d.ID, 10)
	a, err := scanAlert(e.db.QueryRow(ctx, `
		UPDATE alerts SET state = 'delivered', channel = $2, message_ts = $3, thread_ts = $4,
		       delivered_at = $5, attempts = attempts + 1, error = '', may_have_posted = false
		WHERE id = $1 AND state <> 'delivered'
		RETURNING `+alertCols, d.ID, d.Channel, d.MessageTS, d.ThreadTS, utc(d.Now)))
	if errors.Is(err, pgx.ErrNoRows) {
		if _, gerr := e.GetAlert(ctx, d.ID); gerr != nil {
			return ledger.Alert{}, gerr
		}
		return ledger.Alert{}, ledger.Wrap("mark alert delivered", id, fmt.Errorf("%w: already delivered", ledger.ErrConflict))
	}
	return a, ledger.Wrap("mark alert delivered", id, translate(err))
}

func (e executor) MarkAlertFailed(ctx context.Context, f ledger.AlertFailure) (ledger.Alert, error) {
	a, err := scanAlert(e.db.QueryRow(ctx, `
		UPDATE alerts SET attempts = attempts + 1, error = $2, may_have_posted = $4,
		       state = CASE WHEN $3 THEN 'discarded' ELSE state END
		WHERE id = $1 AND state <> 'delivered'
		RETURNING `+alertCols, f.ID, f.Error, f.Discard, f.MayHavePosted))
	return a, ledger.Wrap("mark alert failed", strconv.FormatInt(f.ID, 10), translate(err))
}

func (e executor) FirstDelivered(ctx context.Context, subject string) (ledger.Alert, error) {
	a, err := scanAlert(e.db.QueryRow(ctx, `SELECT `+alertCols+` FROM alerts
		WHERE subject = $1 AND state = 'delivered' ORDER BY delivered_at, id LIMIT 1`, subject))
	return a, ledger.Wrap("first delivered alert", subject, translate(err))
}

func (e executor) ListAlerts(ctx context.Context, runID int64, limit int) ([]ledger.Alert, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := e.db.Query(ctx, `SELECT `+alertCols+` FROM alerts
		WHERE ($1 = 0 OR run_id = $1) ORDER BY id LIMIT $2`, runID, limit)
	if err != nil {
		return nil, ledger.Wrap("list alerts", strconv.FormatInt(runID, 10), translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Alert, error) { return scanAlert(r) })
	return out, ledger.Wrap("list alerts", strconv.FormatInt(runID, 10), translate(err))
}
