package sqlitestore

import (
	"context"
	"database/sql"

	"github.com/reconcilehq/reconcile/ledger"
)

const manualLinkCols = `provider, txn_id, intent_key, actor, note, created_at`

func scanManualLink(row scanner) (ledger.ManualLink, error) {
	var l ledger.ManualLink
	var at string
	if err := row.Scan(&l.Provider, &l.TxnID, &l.IntentKey, &l.Actor, &l.Note, &at); err != nil {
		return l, err
	}
	var err error
	l.At, err = parseTS(at)
	return l, err
}

func (e executor) AddManualLink(ctx context.Context, l ledger.ManualLink) error {
	_, err := e.exec(ctx, `INSERT INTO manual_links (`+manualLinkCols+`) VALUES (?, ?, ?, ?, ?, ?)`,
		l.Provider, l.TxnID, l.IntentKey, l.Actor, l.Note, ts(l.At))
	return ledger.Wrap("add manual link", l.TxnID, translate(err))
}

func (e executor) DeleteManualLink(ctx context.Context, provider, txnID string) (ledger.ManualLink, error) {
	l, err := scanManualLink(e.queryRow(ctx, `DELETE FROM manual_links WHERE provider = ? AND txn_id = ?
		RETURNING `+manualLinkCols, provider, txnID))
	return l, ledger.Wrap("delete manual link", txnID, translate(err))
}

func (e executor) GetManualLink(ctx context.Context, provider, txnID string) (ledger.ManualLink, error) {
	l, err := scanManualLink(e.queryRow(ctx, `SELECT `+manualLinkCols+` FROM manual_links WHERE provider = ? AND txn_id = ?`,
		provider, txnID))
	return l, ledger.Wrap("get manual link", txnID, translate(err))
}

func (e executor) ScanManualLinks(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ManualLink) error) error {
	rows, err := e.query(ctx, `
		SELECT l.provider, l.txn_id, l.intent_key, l.actor, l.note, l.created_at FROM manual_links l
		JOIN provider_txns t ON t.provider = l.provider AND t.txn_id = l.txn_id
		WHERE l.provider = ? AND t.occurred_at >= ? AND t.occurred_at < ? AND t.account = ?
		ORDER BY l.txn_id`, f.Provider, ts(f.From), ts(f.To), f.Account)
	if err != nil {
		return ledger.Wrap("scan manual links", f.Provider, translate(err))
	}
	var links []ledger.ManualLink
	for rows.Next() {
		l, err := scanManualLink(rows)
		if err != nil {
			rows.Close()
			return ledger.Wrap("scan manual links", f.Provider, translate(err))
		}
		links = append(links, l)
	}
	if err := rows.Close(); err != nil {
		return ledger.Wrap("scan manual links", f.Provider, translate(err))
	}
	if err := rows.Err(); err != nil {
		return ledger.Wrap("scan manual links", f.Provider, translate(err))
	}
	// Called once the rows are closed: fn may use the store.
	for _, l := range links {
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}

func (e executor) AddFindingEvent(ctx context.Context, ev ledger.HistoryEvent) error {
	res, err := e.exec(ctx, `INSERT INTO history (subject_kind, subject_id, action, actor, surface, run_id, note, at)
		SELECT 'finding', id, ?, ?, ?, ?, ?, ? FROM findings WHERE id = ?`,
		string(ev.Action), ev.Actor, string(ev.Surface), ev.RunID, ev.Note, ts(ev.At), ev.SubjectID)
	if err == nil {
		if n, _ := res.RowsAffected(); n == 0 {
			err = sql.ErrNoRows
		}
	}
	return ledger.Wrap("add finding event", ev.SubjectID, translate(err))
}
