package pgstore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
)

// findingsChunk bounds the findings one statement carries.
const findingsChunk = 5000

// UpsertFindings does what UpsertFinding does for each finding, in three
// statements per chunk instead of two or three round trips per finding: it
// locks the existing rows, decides in Go what changes, then inserts the new
// ones and updates the known ones from arrays. A finding inserted by
// someone else between the lock and the insert falls back to UpsertFinding.
func (e executor) UpsertFindings(ctx context.Context, fs []ledger.Finding, runID int64, now time.Time) ([]ledger.FindingChange, error) {
	if hasDuplicateIDs(fs) {
		return upsertEach(ctx, e, fs, runID, now)
	}
	out := make([]ledger.FindingChange, 0, len(fs))
	for len(fs) > 0 {
		n := min(len(fs), findingsChunk)
		chs, err := e.upsertFindings(ctx, fs[:n], runID, utc(now))
		if err != nil {
			return nil, err
		}
		out, fs = append(out, chs...), fs[n:]
	}
	return out, nil
}

// upsertEach is the one-by-one path, for batches that name a finding twice
// (the second sighting must see the first).
func upsertEach(ctx context.Context, x ledger.FindingStore, fs []ledger.Finding, runID int64, now time.Time) ([]ledger.FindingChange, error) {
	out := make([]ledger.FindingChange, 0, len(fs))
	for _, f := range fs {
		ch, err := x.UpsertFinding(ctx, f, runID, now)
		if err != nil {
			return nil, err
		}
		out = append(out, ch)
	}
	return out, nil
}

func hasDuplicateIDs(fs []ledger.Finding) bool {
	seen := make(map[string]struct{}, len(fs))
	for _, f := range fs {
		if _, ok := seen[f.ID]; ok {
			return true
		}
		seen[f.ID] = struct{}{}
	}
	return false
}

// findingArrays holds the columns a batch writes, one array per column.
type findingArrays struct {
	id, kind, severity, provider, intentKey, txnIDs []string
	intentKind, account                             []string
	expCur, actCur, riskCur, counterparty, detail   []string
	suggestion                                      []string
	exp, act, risk                                  []decimal.NullDecimal
	occurred                                        []time.Time
	reopen                                          []bool
}

func (a *findingArrays) add(f ledger.Finding, reopen bool) error {
	ids, err := json.Marshal(ledger.SortedIDs(f.ProviderTxnIDs))
	if err != nil {
		return err
	}
	a.id, a.kind, a.severity = append(a.id, f.ID), append(a.kind, string(f.Kind)), append(a.severity, string(f.Severity))
	a.provider, a.intentKey, a.txnIDs = append(a.provider, f.Provider), append(a.intentKey, f.IntentKey), append(a.txnIDs, string(ids))
	a.intentKind, a.account = append(a.intentKind, string(f.IntentKind)), append(a.account, f.Account)
	a.exp, a.expCur = append(a.exp, nullAmount(f.Expected)), append(a.expCur, f.Expected.Currency)
	a.act, a.actCur = append(a.act, nullAmount(f.Actual)), append(a.actCur, f.Actual.Currency)
	a.risk, a.riskCur = append(a.risk, nullAmount(f.AtRisk)), append(a.riskCur, f.AtRisk.Currency)
	a.counterparty, a.detail = append(a.counterparty, f.Counterparty), append(a.detail, f.Detail)
	a.occurred, a.reopen = append(a.occurred, utc(f.OccurredAt)), append(a.reopen, reopen)
	a.suggestion = append(a.suggestion, ledger.EncodeSuggestion(f.Suggestion))
	return nil
}

// insertFindingsSQL inserts new findings with their opened events.
var insertFindingsSQL = `
	WITH ins AS (
		INSERT INTO findings (id, kind, severity, provider, intent_key, provider_txn_ids, expected_amount,
			expected_currency, actual_amount, actual_currency, at_risk_amount, at_risk_currency, counterparty,
			detail, occurred_at, status, first_seen_at, last_seen_at, first_run_id, last_run_id, intent_kind, suggestion, account)
		SELECT u.id, u.kind, u.severity, u.provider, u.intent_key, u.ids::jsonb, u.exp, u.exp_cur, u.act, u.act_cur,
			u.risk, u.risk_cur, u.cp, u.detail, u.occurred, 'open', $16, $16, $17, $17, u.intent_kind, u.sugg, u.account
		FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::text[],
			$9::numeric[], $10::text[], $11::numeric[], $12::text[], $13::text[], $14::text[], $15::timestamptz[], $18::text[],
			$19::text[], $20::text[])
			AS u(id, kind, severity, provider, intent_key, ids, exp, exp_cur, act, act_cur, risk, risk_cur, cp, detail, occurred,
			     intent_kind, sugg, account)
		ON CONFLICT (id) DO NOTHING
		RETURNING ` + findingCols + `),
	h AS (` + insertHistorySQL + `SELECT 'finding', id, 'opened', 'run', 'run', $17, '', $16 FROM ins)
	SELECT ` + findingCols + ` FROM ins`

// updateFindingsSQL updates known findings and writes the events of those
// that reopened or escalated: history rows only for what changed.
var updateFindingsSQL = `
	WITH upd AS (
		UPDATE findings f
		SET severity = u.severity, provider_txn_ids = u.ids::jsonb, expected_amount = u.exp, expected_currency = u.exp_cur,
		    actual_amount = u.act, actual_currency = u.act_cur, at_risk_amount = u.risk, at_risk_currency = u.risk_cur,
		    counterparty = u.cp, detail = u.detail, last_seen_at = $13, last_run_id = $14, suggestion = u.sugg,` + reopenSet("u.reopen") + `
		FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::numeric[], $7::text[],
			$8::numeric[], $9::text[], $10::text[], $11::text[], $12::bool[], $18::text[])
			AS u(id, severity, ids, exp, exp_cur, act, act_cur, risk, risk_cur, cp, detail, reopen, sugg)
		WHERE f.id = u.id
		RETURNING ` + prefixed("f.", findingCols) + `),
	h AS (` + insertHistorySQL + `SELECT 'finding', x.id, x.action, 'run', 'run', $14, x.note, $13
		FROM unnest($15::text[], $16::text[], $17::text[]) WITH ORDINALITY AS x(id, action, note, n)
		WHERE x.id IN (SELECT id FROM upd) ORDER BY x.n)
	SELECT ` + findingCols + ` FROM upd`

func (e executor) upsertFindings(ctx context.Context, fs []ledger.Finding, runID int64, now time.Time) ([]ledger.FindingChange, error) {
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	rows, err := e.db.Query(ctx, `SELECT `+findingCols+` FROM findings WHERE id = ANY($1) ORDER BY id FOR UPDATE`, ids)
	if err != nil {
		return nil, ledger.Wrap("upsert findings", "", translate(err))
	}
	prevs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Finding, error) { return scanFinding(r) })
	if err != nil {
		return nil, ledger.Wrap("upsert findings", "", translate(err))
	}
	prev := make(map[string]ledger.Finding, len(prevs))
	for _, p := range prevs {
		prev[p.ID] = p
	}

	var (
		ins, upd findingArrays
		evs      runEvents
	)
	for _, f := range fs {
		p, known := prev[f.ID]
		dst := &ins
		if known {
			dst = &upd
			evs.add(ledger.FindingEvents([]ledger.FindingChange{{Reopened: ledger.Reopens(p, f), Escalated: ledger.Escalates(p, f),
				Previous: p, Finding: f}}, runID, now))
		}
		if err := dst.add(f, known && ledger.Reopens(p, f)); err != nil {
			return nil, ledger.Wrap("upsert findings", f.ID, err)
		}
	}
	stored := make(map[string]ledger.Finding, len(fs))
	if len(ins.id) > 0 {
		err := e.collectFindings(ctx, stored, insertFindingsSQL, ins.id, ins.kind, ins.severity, ins.provider,
			ins.intentKey, ins.txnIDs, ins.exp, ins.expCur, ins.act, ins.actCur, ins.risk, ins.riskCur, ins.counterparty,
			ins.detail, ins.occurred, now, runID, ins.intentKind, ins.suggestion, ins.account)
		if err != nil {
			return nil, err
		}
	}
	if len(upd.id) > 0 {
		err := e.collectFindings(ctx, stored, updateFindingsSQL, upd.id, upd.severity, upd.txnIDs,
			upd.exp, upd.expCur, upd.act, upd.actCur, upd.risk, upd.riskCur, upd.counterparty, upd.detail, upd.reopen, now, runID,
			evs.id, evs.action, evs.note, upd.suggestion)
		if err != nil {
			return nil, err
		}
	}

	out := make([]ledger.FindingChange, len(fs))
	for i, f := range fs {
		cur, ok := stored[f.ID]
		p, known := prev[f.ID]
		switch {
		case !ok:
			// Inserted by someone else since the lock: lock it and update.
			ch, err := e.UpsertFinding(ctx, f, runID, now)
			if err != nil {
				return nil, err
			}
			out[i] = ch
		case known:
			out[i] = ledger.FindingChange{Reopened: ledger.Reopens(p, f), Escalated: ledger.Escalates(p, f), Previous: p, Finding: cur}
		default:
			out[i] = ledger.FindingChange{New: true, Finding: cur}
		}
	}
	return out, nil
}

func (e executor) collectFindings(ctx context.Context, into map[string]ledger.Finding, sql string, args ...any) error {
	rows, err := e.db.Query(ctx, sql, args...)
	if err != nil {
		return ledger.Wrap("upsert findings", "", translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		f, err := scanFinding(rows)
		if err != nil {
			return ledger.Wrap("upsert findings", "", err)
		}
		into[f.ID] = f
	}
	return ledger.Wrap("upsert findings", "", translate(rows.Err()))
}
