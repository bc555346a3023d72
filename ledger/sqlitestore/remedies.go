package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

const remedyCols = `id, finding_id, kind, status, provider, intent_key, txn_id, refund_key, amount, currency, note,
	requested_by, requested_via, requested_at, expires_at, decided_by, decided_via, decided_at, decision_note,
	applied_at, confirmed_at`

func scanRemedy(row scanner) (ledger.Remedy, error) {
	var (
		r                                    ledger.Remedy
		amount                               sql.NullString
		cur, requested                       string
		expires, decided, applied, confirmed sql.NullString
	)
	if err := row.Scan(&r.ID, &r.FindingID, &r.Kind, &r.Status, &r.Provider, &r.IntentKey, &r.TxnID, &r.RefundKey,
		&amount, &cur, &r.Note, &r.RequestedBy, &r.RequestedVia, &requested, &expires, &r.DecidedBy, &r.DecidedVia,
		&decided, &r.DecisionNote, &applied, &confirmed); err != nil {
		return ledger.Remedy{}, err
	}
	var err error
	if r.Amount, err = amountOf(amount, cur); err != nil {
		return ledger.Remedy{}, err
	}
	if r.RequestedAt, err = parseTS(requested); err != nil {
		return ledger.Remedy{}, err
	}
	for _, t := range []struct {
		s   sql.NullString
		dst *time.Time
	}{{expires, &r.ExpiresAt}, {decided, &r.DecidedAt}, {applied, &r.AppliedAt}, {confirmed, &r.ConfirmedAt}} {
		if *t.dst, err = parseNullTS(t.s); err != nil {
			return ledger.Remedy{}, err
		}
	}
	return r, nil
}

// amountText is the stored text of an amount, NULL for none.
func amountText(r ledger.Remedy) any {
	if r.Amount.IsZero() {
		return nil
	}
	return r.Amount.Value.String()
}

func (e executor) AddRemedy(ctx context.Context, r ledger.Remedy) (ledger.Remedy, error) {
	if err := ledger.CheckRemedy(r); err != nil {
		return ledger.Remedy{}, ledger.Wrap("add remedy", r.FindingID, err)
	}
	var applied any
	if r.Status == ledger.RemedyApplied {
		applied = ts(r.RequestedAt)
	}
	out, err := scanRemedy(e.queryRow(ctx, `
		INSERT INTO remedies (finding_id, kind, status, provider, intent_key, txn_id, refund_key, amount, currency, note,
		    requested_by, requested_via, requested_at, expires_at, applied_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING `+remedyCols,
		r.FindingID, string(r.Kind), string(r.Status), r.Provider, r.IntentKey, r.TxnID, r.RefundKey, amountText(r),
		r.Amount.Currency, r.Note, r.RequestedBy, string(r.RequestedVia), ts(r.RequestedAt), nullTS(r.ExpiresAt), applied))
	return out, ledger.Wrap("add remedy", r.FindingID, translate(err))
}

func (e executor) GetRemedy(ctx context.Context, id int64) (ledger.Remedy, error) {
	r, err := scanRemedy(e.queryRow(ctx, `SELECT `+remedyCols+` FROM remedies WHERE id = ?`, id))
	return r, ledger.Wrap("get remedy", strconv.FormatInt(id, 10), translate(err))
}

func (e executor) UpdateRemedy(ctx context.Context, u ledger.RemedyUpdate) (ledger.Remedy, error) {
	key := strconv.FormatInt(u.ID, 10)
	r, err := scanRemedy(e.queryRow(ctx, `
		UPDATE remedies SET status = ?2,
		    decided_by = CASE WHEN ?4 = '' THEN decided_by ELSE ?4 END,
		    decided_via = CASE WHEN ?4 = '' THEN decided_via ELSE ?5 END,
		    decision_note = CASE WHEN ?4 = '' THEN decision_note ELSE ?6 END,
		    decided_at = CASE WHEN ?4 = '' THEN decided_at ELSE ?8 END,
		    refund_key = CASE WHEN ?7 = '' THEN refund_key ELSE ?7 END,
		    applied_at = CASE WHEN ?2 = 'applied' THEN ?8 ELSE applied_at END,
		    confirmed_at = CASE WHEN ?2 = 'confirmed' THEN ?8 ELSE confirmed_at END
		WHERE id = ?1 AND status IN (SELECT value FROM json_each(?3))
		RETURNING `+remedyCols, u.ID, string(u.To), jsonList(u.From), u.By, string(u.Via), u.Note, u.RefundKey, ts(u.Now)))
	if errors.Is(err, sql.ErrNoRows) {
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
	rows, err := e.query(ctx, `
		SELECT `+remedyCols+` FROM remedies
		WHERE (?1 = '[]' OR finding_id IN (SELECT value FROM json_each(?1)))
		  AND (?2 = '[]' OR refund_key IN (SELECT value FROM json_each(?2)))
		  AND (?3 = '[]' OR status IN (SELECT value FROM json_each(?3)))
		  AND (?4 = '[]' OR kind IN (SELECT value FROM json_each(?4)))
		ORDER BY id LIMIT ?5`, jsonList(orEmpty(f.FindingIDs)), jsonList(orEmpty(f.RefundKeys)), jsonList(orEmpty(f.Statuses)), jsonList(orEmpty(f.Kinds)), limit)
	if err != nil {
		return nil, ledger.Wrap("list remedies", "", translate(err))
	}
	defer rows.Close()
	var out []ledger.Remedy
	for rows.Next() {
		r, err := scanRemedy(rows)
		if err != nil {
			return nil, ledger.Wrap("list remedies", "", translate(err))
		}
		out = append(out, r)
	}
	return out, ledger.Wrap("list remedies", "", translate(rows.Err()))
}

// orEmpty is vals, or an empty list for nil (which JSON would write null).
func orEmpty[T ~string](vals []T) []T {
	if vals == nil {
		return []T{}
	}
	return vals
}

const refundWaitCols = `intent_key, reason, since, checked_at, next_at, checks`

func scanRefundWait(row scanner) (ledger.RefundWait, error) {
	var (
		w                      ledger.RefundWait
		since, checked, nextAt string
	)
	if err := row.Scan(&w.IntentKey, &w.Reason, &since, &checked, &nextAt, &w.Checks); err != nil {
		return w, err
	}
	var err error
	if w.Since, err = parseTS(since); err != nil {
		return w, err
	}
	if w.CheckedAt, err = parseTS(checked); err != nil {
		return w, err
	}
	w.NextAt, err = parseTS(nextAt)
	return w, err
}

func (e executor) WaitRefund(ctx context.Context, w ledger.RefundWait) (ledger.RefundWait, error) {
	out, err := scanRefundWait(e.queryRow(ctx, `
		INSERT INTO refund_waits (intent_key, reason, since, checked_at, next_at, checks) VALUES (?1, ?2, ?3, ?3, ?4, 1)
		ON CONFLICT (intent_key) DO UPDATE SET reason = excluded.reason, checked_at = excluded.checked_at,
		    next_at = excluded.next_at, checks = refund_waits.checks + 1
		RETURNING `+refundWaitCols, w.IntentKey, w.Reason, ts(w.CheckedAt), ts(w.NextAt)))
	return out, ledger.Wrap("wait refund", w.IntentKey, translate(err))
}

func (e executor) EndRefundWait(ctx context.Context, key string) error {
	_, err := e.exec(ctx, `DELETE FROM refund_waits WHERE intent_key = ?`, key)
	return ledger.Wrap("end refund wait", key, translate(err))
}

func (e executor) GetRefundWait(ctx context.Context, key string) (ledger.RefundWait, error) {
	w, err := scanRefundWait(e.queryRow(ctx, `SELECT `+refundWaitCols+` FROM refund_waits WHERE intent_key = ?`, key))
	return w, ledger.Wrap("get refund wait", key, translate(err))
}

func (e executor) ListRefundWaits(ctx context.Context, limit int) ([]ledger.RefundWait, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := e.query(ctx, `SELECT `+refundWaitCols+` FROM refund_waits ORDER BY since, intent_key LIMIT ?`, limit)
	if err != nil {
		return nil, ledger.Wrap("list refund waits", "", translate(err))
	}
	defer rows.Close()
	var out []ledger.RefundWait
	for rows.Next() {
		w, err := scanRefundWait(rows)
		if err != nil {
			return nil, ledger.Wrap("list refund waits", "", translate(err))
		}
		out = append(out, w)
	}
	return out, ledger.Wrap("list refund waits", "", translate(rows.Err()))
}
