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
	acknowledged_by, resolver, intent_kind, suggestion, account`

func scanFinding(row pgx.Row) (ledger.Finding, error) {
	var (
		f                       ledger.Finding
		ids                     []byte
		exp, act, risk          decimal.NullDecimal
		expCur, actCur, riskCur string
		acked, resolved         *time.Time
		sugg                    string
	)
	if err := row.Scan(&f.ID, &f.Kind, &f.Severity, &f.Provider, &f.IntentKey, &ids, &exp, &expCur, &act, &actCur,
		&risk, &riskCur, &f.Counterparty, &f.Detail, &f.OccurredAt, &f.Status, &f.FirstSeenAt, &f.LastSeenAt,
		&f.FirstRunID, &f.LastRunID, &acked, &resolved, &f.ResolvedBy, &f.Note, &f.AcknowledgedBy, &f.Resolver,
		&f.IntentKind, &sugg, &f.Account); err != nil {
		return ledger.Finding{}, err
	}
	if err := json.Unmarshal(ids, &f.ProviderTxnIDs); err != nil {
		return ledger.Finding{}, fmt.Errorf("decode provider txn ids: %w", err)
	}
	var err error
	if f.Suggestion, err = ledger.DecodeSuggestion(sugg); err != nil {
		return ledger.Finding{}, err
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
				WITH ins AS (
					INSERT INTO findings (id, kind, severity, provider, intent_key, provider_txn_ids, expected_amount,
						expected_currency, actual_amount, actual_currency, at_risk_amount, at_risk_currency, counterparty,
						detail, occurred_at, status, first_seen_at, last_seen_at, first_run_id, last_run_id, intent_kind, suggestion, account)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, 'open', $16, $16, $17, $17, $18, $19, $20)
					ON CONFLICT (id) DO NOTHING
					RETURNING `+findingCols+`),
				h AS (`+insertHistorySQL+`SELECT 'finding', id, 'opened', 'run', 'run', $17, '', $16 FROM ins)
				SELECT `+findingCols+` FROM ins`,
				f.ID, f.Kind, f.Severity, f.Provider, f.IntentKey, ids, nullAmount(f.Expected), f.Expected.Currency,
				nullAmount(f.Actual), f.Actual.Currency, nullAmount(f.AtRisk), f.AtRisk.Currency, f.Counterparty,
				f.Detail, utc(f.OccurredAt), now, runID, string(f.IntentKind), ledger.EncodeSuggestion(f.Suggestion), f.Account))
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
		ch := ledger.FindingChange{Reopened: ledger.Reopens(prev, f), Escalated: ledger.Escalates(prev, f), Previous: prev, Finding: f}
		var evs runEvents
		evs.add(ledger.FindingEvents([]ledger.FindingChange{ch}, runID, now))
		cur, err := scanFinding(e.db.QueryRow(ctx, `
			WITH upd AS (
				UPDATE findings
				SET severity = $2, provider_txn_ids = $3, expected_amount = $4, expected_currency = $5,
				    actual_amount = $6, actual_currency = $7, at_risk_amount = $8, at_risk_currency = $9,
				    counterparty = $10, detail = $11, last_seen_at = $12, last_run_id = $13, suggestion = $17,`+reopenSet("$14")+`
				WHERE id = $1
				RETURNING `+findingCols+`),
			h AS (`+insertHistorySQL+`SELECT 'finding', upd.id, x.action, 'run', 'run', $13, x.note, $12
				FROM upd CROSS JOIN unnest($15::text[], $16::text[]) AS x(action, note))
			SELECT `+findingCols+` FROM upd`,
			f.ID, f.Severity, ids, nullAmount(f.Expected), f.Expected.Currency, nullAmount(f.Actual), f.Actual.Currency,
			nullAmount(f.AtRisk), f.AtRisk.Currency, f.Counterparty, f.Detail, now, runID, ch.Reopened, evs.action, evs.note, ledger.EncodeSuggestion(f.Suggestion)))
		if err != nil {
			return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, translate(err))
		}
		ch.Finding = cur
		return ch, nil
	}
	return ledger.FindingChange{}, ledger.Wrap("upsert finding", f.ID, ledger.ErrConflict)
}

// reopenSet is the SET clause of a run's update that reopens a resolved
// finding when the boolean parameter param is true.
func reopenSet(param string) string {
	return `
		status = CASE WHEN ` + param + ` THEN 'open' ELSE status END,
		resolved_at = CASE WHEN ` + param + ` THEN NULL ELSE resolved_at END,
		resolved_by = CASE WHEN ` + param + ` THEN '' ELSE resolved_by END,
		resolver = CASE WHEN ` + param + ` THEN '' ELSE resolver END,
		note = CASE WHEN ` + param + ` THEN 'reopened: seen again' ELSE note END`
}

// ResolveUnseen resolves, and writes each resolution's auto_resolved event,
// in one statement.
func (e executor) ResolveUnseen(ctx context.Context, p ledger.ResolveUnseenParams) ([]ledger.Finding, error) {
	rows, err := e.db.Query(ctx, `
		WITH r AS (
			UPDATE findings SET status = 'resolved', resolved_at = $5, resolved_by = 'run', resolver = $9, note = $6
			WHERE provider = $1 AND account = $10 AND occurred_at >= $2 AND occurred_at < $3
			  AND status <> 'resolved' AND last_seen_at < $4 AND NOT (kind = ANY($7))
			RETURNING `+findingCols+`),
		h AS (`+insertHistorySQL+`SELECT 'finding', id, 'auto_resolved', 'run', 'run', $8, $6, $5 FROM r)
		SELECT `+findingCols+` FROM r`, p.Provider, utc(p.From), utc(p.To), utc(p.SeenSince), utc(p.Now), p.Note,
		kindStrings(p.Keep), p.RunID, resolverOf(p.RunID), p.Account)
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
		  AND ($6::timestamptz IS NULL OR occurred_at >= $6)
		  AND ($7::timestamptz IS NULL OR occurred_at < $7)
		  AND (cardinality($8::text[]) = 0 OR account = ANY($8))
		ORDER BY occurred_at DESC, id LIMIT $5`, flt.Provider, statuses, kinds, flt.RunID, limit, nullTime(flt.From), nullTime(flt.To),
		nonNil(flt.Accounts))
	if err != nil {
		return nil, ledger.Wrap("list findings", flt.Provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Finding, error) { return scanFinding(r) })
	return out, ledger.Wrap("list findings", flt.Provider, translate(err))
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

// ListUnseen unites the window (findings_window_idx), the intents
// (findings_intent_idx) and the ids (the primary key).
func (e executor) ListUnseen(ctx context.Context, f ledger.UnseenFilter) ([]ledger.Finding, error) {
	rows, err := e.db.Query(ctx, `
		WITH k AS (
		    SELECT id FROM findings WHERE provider = $1 AND account = $7 AND occurred_at >= $2 AND occurred_at < $3
		    UNION
		    SELECT id FROM findings WHERE intent_key = ANY($4) AND intent_key <> ''
		    UNION
		    SELECT id FROM findings WHERE id = ANY($5))
		SELECT `+findingCols+` FROM findings
		WHERE id IN (SELECT id FROM k) AND provider = $1 AND account = $7 AND status <> 'resolved' AND last_seen_at < $6
		ORDER BY occurred_at, id`, f.Provider, utc(f.From), utc(f.To), nonNil(f.IntentKeys), nonNil(f.IDs), utc(f.SeenSince), f.Account)
	if err != nil {
		return nil, ledger.Wrap("list unseen findings", f.Provider, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Finding, error) { return scanFinding(r) })
	return out, ledger.Wrap("list unseen findings", f.Provider, translate(err))
}

// ResolveFindings resolves, and writes each resolution's auto_resolved
// event, in one statement.
func (e executor) ResolveFindings(ctx context.Context, p ledger.ResolveFindingsParams) ([]ledger.Finding, error) {
	if len(p.Resolutions) == 0 {
		return nil, nil
	}
	ids, notes := make([]string, len(p.Resolutions)), make([]string, len(p.Resolutions))
	for i, r := range p.Resolutions {
		ids[i], notes[i] = r.ID, r.Note
	}
	rows, err := e.db.Query(ctx, `
		WITH n AS (SELECT * FROM unnest($1::text[], $2::text[]) AS n(id, note)),
		r AS (
			UPDATE findings f SET status = 'resolved', resolved_at = $3, resolved_by = 'run', resolver = $4, note = n.note
			FROM n WHERE f.id = n.id AND f.status <> 'resolved' AND f.last_seen_at < $5
			RETURNING `+prefixed("f.", findingCols)+`),
		h AS (`+insertHistorySQL+`SELECT 'finding', id, 'auto_resolved', 'run', 'run', $6, note, $3 FROM r)
		SELECT `+findingCols+` FROM r ORDER BY occurred_at, id`, ids, notes, utc(p.Now), resolverOf(p.RunID), utc(p.SeenSince), p.RunID)
	if err != nil {
		return nil, ledger.Wrap("resolve findings", "", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Finding, error) { return scanFinding(r) })
	return out, ledger.Wrap("resolve findings", "", translate(err))
}

// SuggestFor sets each suggestion in one statement.
func (e executor) SuggestFor(ctx context.Context, sugs map[string]ledger.Suggestion) (int, error) {
	if len(sugs) == 0 {
		return 0, nil
	}
	ids, enc := make([]string, 0, len(sugs)), make([]string, 0, len(sugs))
	for id, s := range sugs {
		ids, enc = append(ids, id), append(enc, ledger.EncodeSuggestion(s))
	}
	tag, err := e.db.Exec(ctx, `
		UPDATE findings f SET suggestion = n.s
		FROM unnest($1::text[], $2::text[]) AS n(id, s)
		WHERE f.id = n.id AND f.status <> 'resolved' AND f.suggestion = '' AND n.s <> ''`, ids, enc)
	if err != nil {
		return 0, ledger.Wrap("suggest for findings", "", translate(err))
	}
	return int(tag.RowsAffected()), nil
}
