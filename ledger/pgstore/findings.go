package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

const findingCols = `id, kind, severity, provider, intent_key, provider_txn_ids, expected_amount, expected_currency,
	actual_amount, actual_currency, at_risk_amount, at_risk_currency, counterparty, detail, occurred_at, status,
	first_seen_at, last_seen_at, first_run_id, last_run_id, acknowledged_at, resolved_at, resolved_by, note,
	intent_kind`

func scanFinding(row pgx.Row) (ledger.Finding, error) {
	var (
		f                       ledger.Finding
		ids                     []byte
		exp, act, risk          decimal.NullDecimal
		expCur, actCur, riskCur string
		acked, resolved         *time.Time
	)
	if err := row.Scan(&f.ID, &f.Kind, &f.Severity, &f.Provider, &f.IntentKey, &ids, &exp, &expCur, &act, &actCur,
		&risk, &riskCur, &f.Counterparty, &f.Detail, &f.OccurredAt, &f.Status, &f.FirstSeenAt, &f.LastSeenAt,
		&f.FirstRunID, &f.LastRunID, &acked, &resolved, &f.ResolvedBy, &f.Note, &f.IntentKind); err != nil {
		return ledger.Finding{}, err
	}
	if err := json.Unmarshal(ids, &f.ProviderTxnIDs); err != nil {
		return ledger.Finding{}, fmt.Errorf("decode provider txn ids: %w", err)
	}
	f.Expected, f.Actual, f.AtRisk = amountOf(exp, expCur), amountOf(act, actCur), amountOf(risk, riskCur)
	f.OccurredAt, f.FirstSeenAt, f.LastSeenAt = f.OccurredAt.UTC(), f.FirstSeenAt.UTC(), f.LastSeenAt.UTC()
	f.AcknowledgedAt, f.ResolvedAt = fromNull(acked), fromNull(resolved)
	return f, nil
}

func amountOf(d decimal.NullDecimal, cur string) money.Amount {
	if !d.Valid || cur == "" {
		return money.Amount{}
	}
	return money.Amount{Value: d.Decimal, Currency: cur}
}

func nullAmount(a money.Amount) decimal.NullDecimal {
	return decimal.NullDecimal{Decimal: a.Value, Valid: !a.IsZero()}
}

// UpsertFinding locks the existing row, decides what changed, and writes.
func (e executor) UpsertFinding(ctx context.Context, f ledger.Finding, runID int64, now time.Time) (ledger.FindingChange, error) {
	now = utc(now)
	ids, err := json.Marshal(ledger.SortedIDs(f.ProviderTxnIDs))
	if err != nil {
		return ledger.FindingChange{}, err
	}
	for range 2 {
		prev, err := scanFinding(e.db.QueryRow(ctx, `SELECT `+findingCols+` FROM findings WHERE id = $1 FOR UPDATE`, f.ID))
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			cur, err := scanFinding(e.db.QueryRow(ctx, `
				INSERT INTO findings (id, kind, severity, provider, intent_key, provider_txn_ids, expected_amount,
					expected_currency, actual_amount, actual_currency, at_risk_amount, at_risk_currency, counterparty,
					detail, occurred_at, status, first_seen_at, last_seen_at, first_run_id, last_run_id, intent_kind)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 'open', $16, $16, $17, $17, $18)
				ON CONFLICT (id) DO NOTHING
				RETURNING `+findingCols,
				f.ID, f.Kind, f.Severity, f.Provider, f.IntentKey, ids, nullAmount(f.Expected), f.Expected.Currency,
				nullAmount(f.Actual), f.Actual.Currency, nullAmount(f.AtRisk), f.AtRisk.Currency, f.Counterparty,
				f.Detail, utc(f.OccurredAt), now, runID, string(f.IntentKind)))
			if errors.Is(err, pgx.ErrNoRows) {
				continue // inserted concurrently: lock it and update
			}
			if err != nil {
				return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, translate(err))
			}
			return ledger.FindingChange{New: true, Finding: cur}, nil
		case err != nil:
			return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, translate(err))
		}
		reopen := ledger.Reopens(prev, f)
		cur, err := scanFinding(e.db.QueryRow(ctx, `
			UPDATE findings
			SET severity = $2, provider_txn_ids = $3, expected_amount = $4, expected_currency = $5,
			    actual_amount = $6, actual_currency = $7, at_risk_amount = $8, at_risk_currency = $9,
			    counterparty = $10, detail = $11, last_seen_at = $12, last_run_id = $13,
			    status = CASE WHEN $14 THEN 'open' ELSE status END,
			    resolved_at = CASE WHEN $14 THEN NULL ELSE resolved_at END,
			    resolved_by = CASE WHEN $14 THEN '' ELSE resolved_by END,
			    note = CASE WHEN $14 THEN 'reopened: seen again' ELSE note END
			WHERE id = $1
			RETURNING `+findingCols,
			f.ID, f.Severity, ids, nullAmount(f.Expected), f.Expected.Currency, nullAmount(f.Actual), f.Actual.Currency,
			nullAmount(f.AtRisk), f.AtRisk.Currency, f.Counterparty, f.Detail, now, runID, reopen))
		if err != nil {
			return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, translate(err))
		}
		return ledger.FindingChange{Reopened: reopen, Escalated: ledger.Escalates(prev, f), Previous: prev, Finding: cur}, nil
	}
	return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, ledger.ErrConflict)
}

func (e executor) ResolveUnseen(ctx context.Context, p ledger.ResolveUnseenParams) ([]ledger.Finding, error) {
	rows, err := e.db.Query(ctx, `
		UPDATE findings SET status = 'resolved', resolved_at = $5, resolved_by = 'run', note = $6
		WHERE provider = $1 AND occurred_at >= $2 AND occurred_at < $3
		  AND status <> 'resolved' AND last_seen_at < $4 AND NOT (kind = ANY($7))
		RETURNING `+findingCols, p.Provider, utc(p.From), utc(p.To), utc(p.SeenSince), utc(p.Now), p.Note, kindStrings(p.Keep))
	if err != nil {
		return nil, ledger.Wrap("resolve unseen findings", p.Provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Finding, error) { return scanFinding(r) })
	return out, ledger.Wrap("resolve unseen findings", p.Provider, translate(err))
}

func (e executor) GetFinding(ctx context.Context, id string) (ledger.Finding, error) {
	f, err := scanFinding(e.db.QueryRow(ctx, `SELECT `+findingCols+` FROM findings WHERE id = $1`, id))
	return f, ledger.Wrap("get finding", id, translate(err))
}

func (e executor) ListFindings(ctx context.Context, flt ledger.FindingFilter) ([]ledger.Finding, error) {
	statuses := make([]string, len(flt.Statuses))
	for i, s := range flt.Statuses {
		statuses[i] = string(s)
	}
	kinds := make([]string, len(flt.Kinds))
	for i, k := range flt.Kinds {
		kinds[i] = string(k)
	}
	limit := flt.Limit
	if limit <= 0 {
		limit = 1000
	}
	rows, err := e.db.Query(ctx, `
		SELECT `+findingCols+` FROM findings
		WHERE ($1 = '' OR provider = $1)
		  AND (cardinality($2::text[]) = 0 OR status = ANY($2))
		  AND (cardinality($3::text[]) = 0 OR kind = ANY($3))
		  AND ($4 = 0 OR last_run_id = $4)
		ORDER BY occurred_at DESC, id LIMIT $5`, flt.Provider, statuses, kinds, flt.RunID, limit)
	if err != nil {
		return nil, ledger.Wrap("list findings", flt.Provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Finding, error) { return scanFinding(r) })
	return out, ledger.Wrap("list findings", flt.Provider, translate(err))
}

// UpdateFinding acknowledges an open finding or resolves an open or
// acknowledged one, compare-and-set.
func (e executor) UpdateFinding(ctx context.Context, u ledger.FindingUpdate) (ledger.Finding, error) {
	var q string
	switch u.To {
	case ledger.FindingAcknowledged:
		q = `UPDATE findings SET status = 'acknowledged', acknowledged_at = $2, note = $3
			WHERE id = $1 AND status IN ('open', 'acknowledged') RETURNING ` + findingCols
	case ledger.FindingResolved:
		q = `UPDATE findings SET status = 'resolved', resolved_at = $2, resolved_by = 'person', note = $3
			WHERE id = $1 AND status IN ('open', 'acknowledged') RETURNING ` + findingCols
	default:
		return ledger.Finding{}, ledger.Wrap("update finding", u.ID, fmt.Errorf("cannot move a finding to %q by hand", u.To))
	}
	f, err := scanFinding(e.db.QueryRow(ctx, q, u.ID, utc(u.Now), u.Note))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := e.GetFinding(ctx, u.ID)
		if gerr != nil {
			return ledger.Finding{}, gerr
		}
		return cur, ledger.Wrap("update finding", u.ID, fmt.Errorf("%w: finding is %s", ledger.ErrConflict, cur.Status))
	}
	return f, ledger.Wrap("update finding", u.ID, translate(err))
}

func (e executor) CountFindings(ctx context.Context) ([]ledger.FindingCount, error) {
	rows, err := e.db.Query(ctx, `SELECT provider, kind, status, count(*) FROM findings GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`)
	if err != nil {
		return nil, ledger.Wrap("count findings", "", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.FindingCount, error) {
		var c ledger.FindingCount
		err := r.Scan(&c.Provider, &c.Kind, &c.Status, &c.N)
		return c, err
	})
	return out, ledger.Wrap("count findings", "", translate(err))
}

func kindStrings(kinds []ledger.Kind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}
