package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
)

const remedyCols = `id, finding_id, kind, status, provider, intent_key, txn_id, refund_key, amount, currency, note,
	requested_by, requested_via, requested_at, expires_at, decided_by, decided_via, decided_at, decision_note,
	applied_at, confirmed_at`

func scanRemedy(row pgx.Row) (ledger.Remedy, error) {
	var (
		r                                    ledger.Remedy
		amount                               decimal.NullDecimal
		cur                                  string
		expires, decided, applied, confirmed *time.Time
	)
	if err := row.Scan(&r.ID, &r.FindingID, &r.Kind, &r.Status, &r.Provider, &r.IntentKey, &r.TxnID, &r.RefundKey,
		&amount, &cur, &r.Note, &r.RequestedBy, &r.RequestedVia, &r.RequestedAt, &expires, &r.DecidedBy, &r.DecidedVia,
		&decided, &r.DecisionNote, &applied, &confirmed); err != nil {
		return ledger.Remedy{}, err
	}
	r.Amount = amountOf(amount, cur)
	r.RequestedAt = r.RequestedAt.UTC()
	r.ExpiresAt, r.DecidedAt, r.AppliedAt, r.ConfirmedAt = fromNull(expires), fromNull(decided), fromNull(applied), fromNull(confirmed)
	return r, nil
}

func (e executor) AddRemedy(ctx context.Context, r ledger.Remedy) (ledger.Remedy, error) {
	if err := ledger.CheckRemedy(r); err != nil {
		return ledger.Remedy{}, ledger.Wrap("add remedy", r.FindingID, err)
	}
	var applied *time.Time
	if r.Status == ledger.RemedyApplied {
		applied = nullTime(r.RequestedAt)
	}
	out, err := scanRemedy(e.db.QueryRow(ctx, `
		INSERT INTO remedies (finding_id, kind, status, provider, intent_key, txn_id, refund_key, amount, currency, note,
		    requested_by, requested_via, requested_at, expires_at, applied_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		RETURNING `+remedyCols,
		r.FindingID, string(r.Kind), string(r.Status), r.Provider, r.IntentKey, r.TxnID, r.RefundKey, nullAmount(r.Amount),
		r.Amount.Currency, r.Note, r.RequestedBy, string(r.RequestedVia), utc(r.RequestedAt), nullTime(r.ExpiresAt), applied))
	return out, ledger.Wrap("add remedy", r.FindingID, translate(err))
}

func (e executor) GetRemedy(ctx context.Context, id int64) (ledger.Remedy, error) {
	r, err := scanRemedy(e.db.QueryRow(ctx, `SELECT `+remedyCols+` FROM remedies WHERE id = $1`, id))
	return r, ledger.Wrap("get remedy", strconv.FormatInt(id, 10), translate(err))
}

func (e executor) UpdateRemedy(ctx context.Context, u ledger.RemedyUpdate) (ledger.Remedy, error) {
	key := strconv.FormatInt(u.ID, 10)
	from := make([]string, len(u.From))
	for i, s := range u.From {
		from[i] = string(s)
	}
	r, err := scanRemedy(e.db.QueryRow(ctx, `
		UPDATE remedies SET status = $2,
		    decided_by = CASE WHEN $4 = '' THEN decided_by ELSE $4 END,
		    decided_via = CASE WHEN $4 = '' THEN decided_via ELSE $5 END,
		    decision_note = CASE WHEN $4 = '' THEN decision_note ELSE $6 END,
		    decided_at = CASE WHEN $4 = '' THEN decided_at ELSE $8 END,
		    refund_key = CASE WHEN $7 = '' THEN refund_key ELSE $7 END,
		    applied_at = CASE WHEN $2 = 'applied' THEN $8 ELSE applied_at END,
		    confirmed_at = CASE WHEN $2 = 'confirmed' THEN $8 ELSE confirmed_at END
		WHERE id = $1 AND status = ANY($3::text[])
		RETURNING `+remedyCols, u.ID, string(u.To), from, u.By, string(u.Via), u.Note, u.RefundKey, utc(u.Now)))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := e.GetRemedy(ctx, u.ID)
		if gerr != nil {
			return ledger.Remedy{}, gerr
		}
		return cur, ledger.Wrap("update remedy", key, fmt.Errorf("%w: remedy is %s", ledger.ErrConflict, cur.Status))
	}
	return r, ledger.Wrap("update remedy", key, translate(err))
}

func (e executor) ListRemedies(ctx context.Context, f ledger.RemedyFilter) ([]ledger.Remedy, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 10000
	}
	rows, err := e.db.Query(ctx, `
		SELECT `+remedyCols+` FROM remedies
		WHERE (cardinality($1::text[]) = 0 OR finding_id = ANY($1))
		  AND (cardinality($2::text[]) = 0 OR refund_key = ANY($2))
		  AND (cardinality($3::text[]) = 0 OR status = ANY($3))
		  AND (cardinality($4::text[]) = 0 OR kind = ANY($4))
		ORDER BY id LIMIT $5`, nonNil(f.FindingIDs), nonNil(f.RefundKeys), texts(f.Statuses), texts(f.Kinds), limit)
	if err != nil {
		return nil, ledger.Wrap("list remedies", "", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Remedy, error) { return scanRemedy(r) })
	return out, ledger.Wrap("list remedies", "", translate(err))
}

// texts is vals as a text array, never nil.
func texts[T ~string](vals []T) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

const refundWaitCols = `intent_key, reason, since, checked_at, next_at, checks`

func scanRefundWait(row pgx.Row) (ledger.RefundWait, error) {
	var w ledger.RefundWait
	err := row.Scan(&w.IntentKey, &w.Reason, &w.Since, &w.CheckedAt, &w.NextAt, &w.Checks)
	w.Since, w.CheckedAt, w.NextAt = w.Since.UTC(), w.CheckedAt.UTC(), w.NextAt.UTC()
	return w, err
}

func (e executor) WaitRefund(ctx context.Context, w ledger.RefundWait) (ledger.RefundWait, error) {
	out, err := scanRefundWait(e.db.QueryRow(ctx, `
		INSERT INTO refund_waits (intent_key, reason, since, checked_at, next_at, checks) VALUES ($1, $2, $3, $3, $4, 1)
		ON CONFLICT (intent_key) DO UPDATE SET reason = excluded.reason, checked_at = excluded.checked_at,
		    next_at = excluded.next_at, checks = refund_waits.checks + 1
		RETURNING `+refundWaitCols, w.IntentKey, w.Reason, utc(w.CheckedAt), utc(w.NextAt)))
	return out, ledger.Wrap("wait refund", w.IntentKey, translate(err))
}

func (e executor) EndRefundWait(ctx context.Context, key string) error {
	_, err := e.db.Exec(ctx, `DELETE FROM refund_waits WHERE intent_key = $1`, key)
	return ledger.Wrap("end refund wait", key, translate(err))
}

func (e executor) GetRefundWait(ctx context.Context, key string) (ledger.RefundWait, error) {
	w, err := scanRefundWait(e.db.QueryRow(ctx, `SELECT `+refundWaitCols+` FROM refund_waits WHERE intent_key = $1`, key))
	return w, ledger.Wrap("get refund wait", key, translate(err))
}

func (e executor) ListRefundWaits(ctx context.Context, limit int) ([]ledger.RefundWait, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := e.db.Query(ctx, `SELECT `+refundWaitCols+` FROM refund_waits ORDER BY since, intent_key LIMIT $1`, limit)
	if err != nil {
		return nil, ledger.Wrap("list refund waits", "", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.RefundWait, error) { return scanRefundWait(r) })
	return out, ledger.Wrap("list refund waits", "", translate(err))
}
