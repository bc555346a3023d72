package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

const findingCols = `id, kind, severity, provider, intent_key, provider_txn_ids, expected_amount, expected_currency,
	actual_amount, actual_currency, at_risk_amount, at_risk_currency, counterparty, detail, occurred_at, status,
	first_seen_at, last_seen_at, first_run_id, last_run_id, acknowledged_at, resolved_at, resolved_by, note,
	acknowledged_by, resolver, intent_kind, suggestion, account`

func scanFinding(row scanner) (ledger.Finding, error) {
	var (
		f                       ledger.Finding
		ids                     string
		exp, act, risk          sql.NullString
		expCur, actCur, riskCur string
		occurred, first, last   string
		acked, resolved         sql.NullString
		sugg                    string
	)
	if err := row.Scan(&f.ID, &f.Kind, &f.Severity, &f.Provider, &f.IntentKey, &ids, &exp, &expCur, &act, &actCur,
		&risk, &riskCur, &f.Counterparty, &f.Detail, &occurred, &f.Status, &first, &last,
		&f.FirstRunID, &f.LastRunID, &acked, &resolved, &f.ResolvedBy, &f.Note, &f.AcknowledgedBy, &f.Resolver,
		&f.IntentKind, &sugg, &f.Account); err != nil {
		return ledger.Finding{}, err
	}
	if err := json.Unmarshal([]byte(ids), &f.ProviderTxnIDs); err != nil {
		return ledger.Finding{}, fmt.Errorf("decode provider txn ids: %w", err)
	}
	var err error
	if f.Suggestion, err = ledger.DecodeSuggestion(sugg); err != nil {
		return ledger.Finding{}, err
	}
	if f.Expected, err = amountOf(exp, expCur); err != nil {
		return ledger.Finding{}, err
	}
	if f.Actual, err = amountOf(act, actCur); err != nil {
		return ledger.Finding{}, err
	}
	if f.AtRisk, err = amountOf(risk, riskCur); err != nil {
		return ledger.Finding{}, err
	}
	if f.OccurredAt, err = parseTS(occurred); err != nil {
		return ledger.Finding{}, err
	}
	if f.FirstSeenAt, err = parseTS(first); err != nil {
		return ledger.Finding{}, err
	}
	if f.LastSeenAt, err = parseTS(last); err != nil {
		return ledger.Finding{}, err
	}
	if f.AcknowledgedAt, err = parseNullTS(acked); err != nil {
		return ledger.Finding{}, err
	}
	f.ResolvedAt, err = parseNullTS(resolved)
	return f, err
}

func amountOf(s sql.NullString, cur string) (money.Amount, error) {
	if !s.Valid || cur == "" {
		return money.Amount{}, nil
	}
	d, err := decimal.NewFromString(s.String)
	if err != nil {
		return money.Amount{}, fmt.Errorf("stored amount %q: %w", s.String, err)
	}
	return money.Amount{Value: d, Currency: cur}, nil
}

func nullAmount(a money.Amount) any {
	if a.IsZero() {
		return nil
	}
	return a.Text()
}

// UpsertFinding upserts f and writes the history events its change implies,
// atomically.
func (e executor) UpsertFinding(ctx context.Context, f ledger.Finding, runID int64, now time.Time) (ledger.FindingChange, error) {
	var ch ledger.FindingChange
	err := e.inTx(ctx, func(x executor) error {
		var err error
		if ch, err = x.upsertFinding(ctx, f, runID, now); err != nil {
			return err
		}
		return ledger.Wrap("upsert finding", f.ID, x.addHistory(ctx, ledger.FindingEvents([]ledger.FindingChange{ch}, runID, now)...))
	})
	if err != nil {
		return ledger.FindingChange{}, err
	}
	return ch, nil
}

func (e executor) upsertFinding(ctx context.Context, f ledger.Finding, runID int64, now time.Time) (ledger.FindingChange, error) {
	idsJSON, err := json.Marshal(ledger.SortedIDs(f.ProviderTxnIDs))
	if err != nil {
		return ledger.FindingChange{}, err
	}
	ids := string(idsJSON)
	prev, err := scanFinding(e.queryRow(ctx, `SELECT `+findingCols+` FROM findings WHERE id = ?`, f.ID))
	if errors.Is(err, sql.ErrNoRows) {
		cur, err := scanFinding(e.queryRow(ctx, `
			INSERT INTO findings (id, kind, severity, provider, intent_key, provider_txn_ids, expected_amount,
				expected_currency, actual_amount, actual_currency, at_risk_amount, at_risk_currency, counterparty,
				detail, occurred_at, status, first_seen_at, last_seen_at, first_run_id, last_run_id, intent_kind, suggestion, account)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 'open', ?16, ?16, ?17, ?17, ?18, ?19, ?20)
			RETURNING `+findingCols,
			f.ID, string(f.Kind), string(f.Severity), f.Provider, f.IntentKey, ids, nullAmount(f.Expected), f.Expected.Currency,
			nullAmount(f.Actual), f.Actual.Currency, nullAmount(f.AtRisk), f.AtRisk.Currency, f.Counterparty,
			f.Detail, ts(f.OccurredAt), ts(now), runID, string(f.IntentKind), ledger.EncodeSuggestion(f.Suggestion), f.Account))
		if err != nil {
			return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, translate(err))
		}
		return ledger.FindingChange{New: true, Finding: cur}, nil
	}
	if err != nil {
		return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, translate(err))
	}
	reopen := ledger.Reopens(prev, f)
	cur, err := scanFinding(e.queryRow(ctx, `
		UPDATE findings
		SET severity = ?2, provider_txn_ids = ?3, expected_amount = ?4, expected_currency = ?5,
		    actual_amount = ?6, actual_currency = ?7, at_risk_amount = ?8, at_risk_currency = ?9,
		    counterparty = ?10, detail = ?11, last_seen_at = ?12, last_run_id = ?13, suggestion = ?15,
		    status = CASE WHEN ?14 THEN 'open' ELSE status END,
		    resolved_at = CASE WHEN ?14 THEN NULL ELSE resolved_at END,
		    resolved_by = CASE WHEN ?14 THEN '' ELSE resolved_by END,
		    resolver = CASE WHEN ?14 THEN '' ELSE resolver END,
		    note = CASE WHEN ?14 THEN 'reopened: seen again' ELSE note END
		WHERE id = ?1
		RETURNING `+findingCols,
		f.ID, string(f.Severity), ids, nullAmount(f.Expected), f.Expected.Currency, nullAmount(f.Actual), f.Actual.Currency,
		nullAmount(f.AtRisk), f.AtRisk.Currency, f.Counterparty, f.Detail, ts(now), runID, reopen,
		ledger.EncodeSuggestion(f.Suggestion)))
	if err != nil {
		return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, translate(err))
	}
	return ledger.FindingChange{Reopened: reopen, Escalated: ledger.Escalates(prev, f), Previous: prev, Finding: cur}, nil
}

// ResolveUnseen resolves and writes each resolution's auto_resolved event,
// atomically.
func (e executor) ResolveUnseen(ctx context.Context, p ledger.ResolveUnseenParams) ([]ledger.Finding, error) {
	var out []ledger.Finding
	err := e.inTx(ctx, func(x executor) error {
		rows, err := x.query(ctx, `
			UPDATE findings SET status = 'resolved', resolved_at = ?5, resolved_by = 'run', resolver = ?8, note = ?6
			WHERE provider = ?1 AND account = ?9 AND occurred_at >= ?2 AND occurred_at < ?3
			  AND status <> 'resolved' AND last_seen_at < ?4 AND kind NOT IN (SELECT value FROM json_each(?7))
			RETURNING `+findingCols, p.Provider, ts(p.From), ts(p.To), ts(p.SeenSince), ts(p.Now), p.Note, jsonOrEmpty(p.Keep),
			resolverOf(p.RunID), p.Account)
		if err != nil {
			return translate(err)
		}
		if out, err = collect(rows, scanFinding); err != nil {
			return err
		}
		for _, f := range out {
			if err := x.addHistory(ctx, ledger.HistoryEvent{SubjectKind: ledger.SubjectFinding, SubjectID: f.ID,
				Action: ledger.ActionAutoResolved, Actor: ledger.ActorRun, Surface: ledger.SurfaceRun, RunID: p.RunID,
				Note: p.Note, At: p.Now}); err != nil {
				return err
			}
		}
		return nil
	})
	return out, ledger.Wrap("resolve unseen findings", p.Provider, err)
}

func (e executor) GetFinding(ctx context.Context, id string) (ledger.Finding, error) {
	f, err := scanFinding(e.queryRow(ctx, `SELECT `+findingCols+` FROM findings WHERE id = ?`, id))
	return f, ledger.Wrap("get finding", id, translate(err))
}

func (e executor) ListFindings(ctx context.Context, flt ledger.FindingFilter) ([]ledger.Finding, error) {
	limit := flt.Limit
	if limit <= 0 {
		limit = 1000
	}
	rows, err := e.query(ctx, `
		SELECT `+findingCols+` FROM findings
		WHERE (?1 = '' OR provider = ?1)
		  AND (?2 = '[]' OR status IN (SELECT value FROM json_each(?2)))
		  AND (?3 = '[]' OR kind IN (SELECT value FROM json_each(?3)))
		  AND (?4 = 0 OR last_run_id = ?4)
		  AND (?6 IS NULL OR occurred_at >= ?6)
		  AND (?7 IS NULL OR occurred_at < ?7)
		  AND (?8 = '[]' OR account IN (SELECT value FROM json_each(?8)))
		ORDER BY occurred_at DESC, id LIMIT ?5`, flt.Provider, jsonOrEmpty(flt.Statuses), jsonOrEmpty(flt.Kinds), flt.RunID, limit,
		nullTS(flt.From), nullTS(flt.To), jsonOrEmpty(flt.Accounts))
	if err != nil {
		return nil, ledger.Wrap("list findings", flt.Provider, translate(err))
	}
	out, err := collect(rows, scanFinding)
	return out, ledger.Wrap("list findings", flt.Provider, err)
}

func jsonOrEmpty[T ~string](vals []T) string {
	if len(vals) == 0 {
		return "[]"
	}
	return jsonList(vals)
}

func (e executor) CountFindings(ctx context.Context) ([]ledger.FindingCount, error) {
	rows, err := e.query(ctx, `SELECT provider, kind, status, count(*) FROM findings GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`)
	if err != nil {
		return nil, ledger.Wrap("count findings", "", translate(err))
	}
	out, err := collect(rows, func(r scanner) (ledger.FindingCount, error) {
		var c ledger.FindingCount
		err := r.Scan(&c.Provider, &c.Kind, &c.Status, &c.N)
		return c, err
	})
	return out, ledger.Wrap("count findings", "", err)
}

// UpsertFindings upserts one finding after the other: statements on the
// embedded database cost no round trip.
func (e executor) UpsertFindings(ctx context.Context, fs []ledger.Finding, runID int64, now time.Time) ([]ledger.FindingChange, error) {
	out := make([]ledger.FindingChange, 0, len(fs))
	err := e.inTx(ctx, func(x executor) error {
		for _, f := range fs {
			ch, err := x.UpsertFinding(ctx, f, runID, now)
			if err != nil {
				return err
			}
			out = append(out, ch)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListUnseen unites the window (findings_window_idx), the intents
// (findings_intent_idx) and the ids (the primary key).
func (e executor) ListUnseen(ctx context.Context, f ledger.UnseenFilter) ([]ledger.Finding, error) {
	rows, err := e.query(ctx, `
		WITH k(id) AS (
		    SELECT id FROM findings WHERE provider = ?1 AND account = ?7 AND occurred_at >= ?2 AND occurred_at < ?3
		    UNION
		    SELECT id FROM findings WHERE intent_key IN (SELECT value FROM json_each(?4)) AND intent_key <> ''
		    UNION
		    SELECT id FROM findings WHERE id IN (SELECT value FROM json_each(?5)))
		SELECT `+findingCols+` FROM findings
		WHERE id IN (SELECT id FROM k) AND provider = ?1 AND account = ?7 AND status <> 'resolved' AND last_seen_at < ?6
		ORDER BY occurred_at, id`, f.Provider, ts(f.From), ts(f.To), jsonList(f.IntentKeys), jsonList(f.IDs), ts(f.SeenSince), f.Account)
	if err != nil {
		return nil, ledger.Wrap("list unseen findings", f.Provider, translate(err))
	}
	out, err := collect(rows, scanFinding)
	return out, ledger.Wrap("list unseen findings", f.Provider, err)
}

// ResolveFindings resolves each finding and writes its auto_resolved
// event, atomically.
func (e executor) ResolveFindings(ctx context.Context, p ledger.ResolveFindingsParams) ([]ledger.Finding, error) {
	var out []ledger.Finding
	err := e.inTx(ctx, func(x executor) error {
		for _, r := range p.Resolutions {
			f, err := scanFinding(x.queryRow(ctx, `
				UPDATE findings SET status = 'resolved', resolved_at = ?2, resolved_by = 'run', resolver = ?3, note = ?4
				WHERE id = ?1 AND status <> 'resolved' AND last_seen_at < ?5
				RETURNING `+findingCols, r.ID, ts(p.Now), resolverOf(p.RunID), r.Note, ts(p.SeenSince)))
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return translate(err)
			}
			if err := x.addHistory(ctx, ledger.HistoryEvent{SubjectKind: ledger.SubjectFinding, SubjectID: f.ID,
				Action: ledger.ActionAutoResolved, Actor: ledger.ActorRun, Surface: ledger.SurfaceRun, RunID: p.RunID,
				Note: r.Note, At: p.Now}); err != nil {
				return err
			}
			out = append(out, f)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b ledger.Finding) int {
		if c := a.OccurredAt.Compare(b.OccurredAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, ledger.Wrap("resolve findings", "", err)
}

// SuggestFor sets each suggestion in turn.
func (e executor) SuggestFor(ctx context.Context, sugs map[string]ledger.Suggestion) (int, error) {
	n := 0
	err := e.inTx(ctx, func(x executor) error {
		for id, s := range sugs {
			res, err := x.exec(ctx, `UPDATE findings SET suggestion = ?2 WHERE id = ?1 AND status <> 'resolved' AND suggestion = '' AND ?2 <> ''`,
				id, ledger.EncodeSuggestion(s))
			if err != nil {
				return translate(err)
			}
			k, err := res.RowsAffected()
			if err != nil {
				return err
			}
			n += int(k)
		}
		return nil
	})
	return n, ledger.Wrap("suggest for findings", "", err)
}
