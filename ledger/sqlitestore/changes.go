package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/reconcilehq/reconcile/ledger"
)

const intentChangeCols = `id, intent_key, action, old_amount, new_amount, currency, old_state, new_state, actor, surface, note, at`

func scanIntentChange(row scanner) (ledger.IntentChange, error) {
	var (
		c                 ledger.IntentChange
		old, new, cur, at string
	)
	if err := row.Scan(&c.ID, &c.IntentKey, &c.Action, &old, &new, &cur, &c.OldState, &c.NewState, &c.Actor, &c.Surface, &c.Note, &at); err != nil {
		return c, err
	}
	var err error
	if c.OldAmount, err = amountOf(sql.NullString{String: old, Valid: true}, cur); err != nil {
		return c, err
	}
	if c.NewAmount, err = amountOf(sql.NullString{String: new, Valid: true}, cur); err != nil {
		return c, err
	}
	c.At, err = parseTS(at)
	return c, err
}

// ChangeIntent compares the stored amount as a decimal, not as text: SQLite
// keeps the text the writer gave.
func (e executor) ChangeIntent(ctx context.Context, c ledger.IntentChange) (ledger.Intent, ledger.IntentChange, error) {
	if e.tx == nil {
		var (
			in ledger.Intent
			ch ledger.IntentChange
		)
		err := e.atomically(ctx, func(x executor) (err error) {
			in, ch, err = x.ChangeIntent(ctx, c)
			return err
		})
		return in, ch, err
	}
	cur, err := e.GetIntent(ctx, c.IntentKey)
	if err != nil {
		return ledger.Intent{}, ledger.IntentChange{}, err
	}
	if !cur.Amount.Equal(c.OldAmount) || cur.State != c.OldState {
		return cur, ledger.IntentChange{}, ledger.Wrap("change intent", c.IntentKey,
			fmt.Errorf("%w: it is %s %s now", ledger.ErrConflict, ledger.ShowAmount(cur.Amount), cur.State))
	}
	res, err := e.exec(ctx, `UPDATE intents SET amount = ?2, state = ?3, updated_at = ?4 WHERE key = ?1 AND state = ?5`,
		c.IntentKey, c.NewAmount.Value.String(), string(c.NewState), ts(c.At), string(c.OldState))
	if err != nil {
		return ledger.Intent{}, ledger.IntentChange{}, ledger.Wrap("change intent", c.IntentKey, translate(err))
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return cur, ledger.IntentChange{}, ledger.Wrap("change intent", c.IntentKey, fmt.Errorf("%w: it changed meanwhile", ledger.ErrConflict))
	}
	stored, err := scanIntentChange(e.queryRow(ctx, `
		INSERT INTO intent_changes (intent_key, action, old_amount, new_amount, currency, old_state, new_state, actor, surface, note, at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		RETURNING `+intentChangeCols,
		c.IntentKey, string(c.Action), c.OldAmount.Value.String(), c.NewAmount.Value.String(), c.OldAmount.Currency, string(c.OldState),
		string(c.NewState), c.Actor, string(c.Surface), c.Note, ts(c.At)))
	if err != nil {
		return ledger.Intent{}, ledger.IntentChange{}, ledger.Wrap("change intent", c.IntentKey, translate(err))
	}
	in, err := e.GetIntent(ctx, c.IntentKey)
	return in, stored, err
}

func (e executor) IntentChanges(ctx context.Context, key string) ([]ledger.IntentChange, error) {
	rows, err := e.query(ctx, `SELECT `+intentChangeCols+` FROM intent_changes WHERE intent_key = ? ORDER BY id`, key)
	if err != nil {
		return nil, ledger.Wrap("intent changes", key, translate(err))
	}
	defer rows.Close()
	var out []ledger.IntentChange
	for rows.Next() {
		c, err := scanIntentChange(rows)
		if err != nil {
			return nil, ledger.Wrap("intent changes", key, translate(err))
		}
		out = append(out, c)
	}
	return out, ledger.Wrap("intent changes", key, translate(rows.Err()))
}

func (e executor) VoidedIntents(ctx context.Context, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := e.query(ctx, `SELECT DISTINCT intent_key FROM intent_changes WHERE action = 'voided'
		AND intent_key IN (SELECT value FROM json_each(?)) ORDER BY intent_key`, jsonList(keys))
	if err != nil {
		return nil, ledger.Wrap("voided intents", "", translate(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, ledger.Wrap("voided intents", "", translate(err))
		}
		out = append(out, k)
	}
	if errors.Is(rows.Err(), sql.ErrNoRows) {
		return out, nil
	}
	return out, ledger.Wrap("voided intents", "", translate(rows.Err()))
}

const closeCols = `period, provider, closed_by, closed_via, closed_at, note, summary`

func scanClose(row scanner) (ledger.PeriodClose, error) {
	var (
		c  ledger.PeriodClose
		at string
	)
	if err := row.Scan(&c.Period, &c.Provider, &c.ClosedBy, &c.ClosedVia, &at, &c.Note, &c.Summary); err != nil {
		return c, err
	}
	var err error
	c.ClosedAt, err = parseTS(at)
	return c, err
}

func (e executor) ClosePeriod(ctx context.Context, c ledger.PeriodClose) (ledger.PeriodClose, error) {
	if err := ledger.CheckClose(c); err != nil {
		return ledger.PeriodClose{}, ledger.Wrap("close period", c.Period, err)
	}
	out, err := scanClose(e.queryRow(ctx, `
		INSERT INTO period_closes (`+closeCols+`) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING `+closeCols,
		c.Period, c.Provider, c.ClosedBy, string(c.ClosedVia), ts(c.ClosedAt), c.Note, c.Summary))
	return out, ledger.Wrap("close period", c.Period, translate(err))
}

func (e executor) ListCloses(ctx context.Context) ([]ledger.PeriodClose, error) {
	rows, err := e.query(ctx, `SELECT `+closeCols+` FROM period_closes ORDER BY period, provider`)
	if err != nil {
		return nil, ledger.Wrap("list closes", "", translate(err))
	}
	defer rows.Close()
	var out []ledger.PeriodClose
	for rows.Next() {
		c, err := scanClose(rows)
		if err != nil {
			return nil, ledger.Wrap("list closes", "", translate(err))
		}
		out = append(out, c)
	}
	return out, ledger.Wrap("list closes", "", translate(rows.Err()))
}
