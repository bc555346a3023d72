package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

const manualLinkCols = `provider, txn_id, intent_key, actor, note, created_at`

func scanManualLink(row pgx.Row) (ledger.ManualLink, error) {
	var l ledger.ManualLink
	err := row.Scan(&l.Provider, &l.TxnID, &l.IntentKey, &l.Actor, &l.Note, &l.At)
	l.At = l.At.UTC()
	return l, err
}

func (e executor) AddManualLink(ctx context.Context, l ledger.ManualLink) error {
	_, err := e.db.Exec(ctx, `INSERT INTO manual_links (`+manualLinkCols+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		l.Provider, l.TxnID, l.IntentKey, l.Actor, l.Note, utc(l.At))
	return ledger.Wrap("add manual link", l.TxnID, translate(err))
}

func (e executor) DeleteManualLink(ctx context.Context, provider, txnID string) (ledger.ManualLink, error) {
	l, err := scanManualLink(e.db.QueryRow(ctx, `DELETE FROM manual_links WHERE provider = $1 AND txn_id = $2
		RETURNING `+manualLinkCols, provider, txnID))
	return l, ledger.Wrap("delete manual link", txnID, translate(err))
}

func (e executor) GetManualLink(ctx context.Context, provider, txnID string) (ledger.ManualLink, error) {
	l, err := scanManualLink(e.db.QueryRow(ctx, `SELECT `+manualLinkCols+` FROM manual_links WHERE provider = $1 AND txn_id = $2`,
		provider, txnID))
	return l, ledger.Wrap("get manual link", txnID, translate(err))
}

func (e executor) ScanManualLinks(ctx context.Context, f ledger.TxnFilter, fn func(ledger.ManualLink) error) error {
	rows, err := e.db.Query(ctx, `
		SELECT `+prefixed("l.", manualLinkCols)+` FROM manual_links l
		JOIN provider_txns t ON t.provider = l.provider AND t.txn_id = l.txn_id
		WHERE l.provider = $1 AND t.occurred_at >= $2 AND t.occurred_at < $3 AND t.account = $4
		ORDER BY l.txn_id`, f.Provider, utc(f.From), utc(f.To), f.Account)
	if err != nil {
		return ledger.Wrap("scan manual links", f.Provider, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		l, err := scanManualLink(rows)
		if err != nil {
			return ledger.Wrap("scan manual links", f.Provider, translate(err))
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	return ledger.Wrap("scan manual links", f.Provider, translate(rows.Err()))
}

func (e executor) AddFindingEvent(ctx context.Context, ev ledger.HistoryEvent) error {
	tag, err := e.db.Exec(ctx, insertHistorySQL+`SELECT 'finding', id, $2, $3, $4, $5, $6, $7 FROM findings WHERE id = $1`,
		ev.SubjectID, string(ev.Action), ev.Actor, string(ev.Surface), ev.RunID, ev.Note, utc(ev.At))
	if err == nil && tag.RowsAffected() == 0 {
		err = pgx.ErrNoRows
	}
	return ledger.Wrap("add finding event", ev.SubjectID, translate(err))
}
