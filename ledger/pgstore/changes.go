package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
)

const intentChangeCols = `id, intent_key, action, old_amount, new_amount, currency, old_state, new_state, actor, surface, note, at`

func scanIntentChange(row pgx.Row) (ledger.IntentChange, error) {
	var (
		c        ledger.IntentChange
		old, new decimal.Decimal
		cur      string
	)
	if err := row.Scan(&c.ID, &c.IntentKey, &c.Action, &old, &new, &cur, &c.OldState, &c.NewState, &c.Actor, &c.Surface, &c.Note, &c.At); err != nil {
		return c, err
	}
	c.OldAmount = amountOf(decimal.NullDecimal{Decimal: old, Valid: true}, cur)
	c.NewAmount = amountOf(decimal.NullDecimal{Decimal: new, Valid: true}, cur)
	c.At = c.At.UTC()
	return c, nil
}

func (e executor) ChangeIntent(ctx context.Context, c ledger.IntentChange) (ledger.Intent, ledger.IntentChange, error) {
	stored, err := scanIntentChange(e.db.QueryRow(ctx, `
		WITH u AS (
		    UPDATE intents SET amount = $2, amount_minor = minor_units($2, currency), state = $3, updated_at = $4
		    WHERE key = $1 AND amount = $5 AND currency = $6 AND state = $7
		    RETURNING key)
		INSERT INTO intent_changes (intent_key, action, old_amount, new_amount, currency, old_state, new_state, actor, surface, note, at)
		SELECT key, $8, $5, $2, $6, $7, $3, $9, $10, $11, $4 FROM u
		RETURNING `+intentChangeCols,
		c.IntentKey, c.NewAmount.Value, string(c.NewState), utc(c.At), c.OldAmount.Value, c.OldAmount.Currency, string(c.OldState),
		string(c.Action), c.Actor, string(c.Surface), c.Note))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := e.GetIntent(ctx, c.IntentKey)
		if gerr != nil {
			return ledger.Intent{}, ledger.IntentChange{}, gerr
		}
		return cur, ledger.IntentChange{}, ledger.Wrap("change intent", c.IntentKey,
			fmt.Errorf("%w: it is %s %s now", ledger.ErrConflict, ledger.ShowAmount(cur.Amount), cur.State))
	}
	if err != nil {
		return ledger.Intent{}, ledger.IntentChange{}, ledger.Wrap("change intent", c.IntentKey, translate(err))
	}
	in, err := e.GetIntent(ctx, c.IntentKey)
	return in, stored, err
}

func (e executor) IntentChanges(ctx context.Context, key string) ([]ledger.IntentChange, error) {
	rows, err := e.db.Query(ctx, `SELECT `+intentChangeCols+` FROM intent_changes WHERE intent_key = $1 ORDER BY id`, key)
	if err != nil {
		return nil, ledger.Wrap("intent changes", key, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.IntentChange, error) { return scanIntentChange(r) })
	return out, ledger.Wrap("intent changes", key, translate(err))
}

func (e executor) VoidedIntents(ctx context.Context, keys []string) ([]string, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, `SELECT DISTINCT intent_key FROM intent_changes WHERE action = 'voided' AND intent_key = ANY($1)
		ORDER BY intent_key`, nonNil(keys))
	if err != nil {
		return nil, ledger.Wrap("voided intents", "", translate(err))
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, ledger.Wrap("voided intents", "", translate(err))
}

const closeCols = `period, provider, closed_by, closed_via, closed_at, note, summary`

func scanClose(row pgx.Row) (ledger.PeriodClose, error) {
	var c ledger.PeriodClose
	err := row.Scan(&c.Period, &c.Provider, &c.ClosedBy, &c.ClosedVia, &c.ClosedAt, &c.Note, &c.Summary)
	c.ClosedAt = c.ClosedAt.UTC()
	return c, err
}

func (e executor) ClosePeriod(ctx context.Context, c ledger.PeriodClose) (ledger.PeriodClose, error) {
	if err := ledger.CheckClose(c); err != nil {
		return ledger.PeriodClose{}, ledger.Wrap("close period", c.Period, err)
	}
	out, err := scanClose(e.db.QueryRow(ctx, `
		INSERT INTO period_closes (`+closeCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+closeCols,
		c.Period, c.Provider, c.ClosedBy, string(c.ClosedVia), utc(c.ClosedAt), c.Note, c.Summary))
	return out, ledger.Wrap("close period", c.Period, translate(err))
}

func (e executor) ListCloses(ctx context.Context) ([]ledger.PeriodClose, error) {
	rows, err := e.db.Query(ctx, `SELECT `+closeCols+` FROM period_closes ORDER BY period, provider`)
	if err != nil {
		return nil, ledger.Wrap("list closes", "", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.PeriodClose, error) { return scanClose(r) })
	return out, ledger.Wrap("list closes", "", translate(err))
}
