package sqlitestore

import (
	"context"
	"errors"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
)

// createRefund creates a refund intent inside a write transaction (the
// caller's, or one of its own): SQLite's single writer orders refunds of one
// charge, each checked against the refunds committed before it. A replay of
// the same request is answered before any check: its amount is already
// counted.
func (e executor) createRefund(ctx context.Context, n ledger.NewIntent, meta any) (ledger.Intent, bool, error) {
	if e.tx == nil {
		var (
			in      ledger.Intent
			created bool
		)
		err := e.atomically(ctx, func(x executor) (err error) {
			in, created, err = x.createRefund(ctx, n, meta)
			return err
		})
		return in, created, err
	}
	p := n.IntentParams
	in, err := e.GetIntent(ctx, p.Key)
	switch {
	case err == nil:
		if !in.IntentParams.Same(p) {
			return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key,
				&ledger.KeyReuseError{Key: p.Key, Existing: in.IntentParams, Requested: p})
		}
		return in, false, nil
	case !errors.Is(err, ledger.ErrNotFound):
		return ledger.Intent{}, false, err
	}
	r, err := e.refundable(ctx, p.RefundOf, nil)
	if err != nil {
		return ledger.Intent{}, false, err
	}
	if err := ledger.CheckRefund(p, r); err != nil {
		return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key, err)
	}
	in, err = scanIntent(e.queryRow(ctx, `
		INSERT INTO intents (key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at, updated_at,
		    ref_norm, account)
		VALUES (?1, 'refund', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
		RETURNING `+intentCols,
		p.Key, p.RefundOf, p.Provider, p.Amount.Text(), p.Amount.Currency, p.Customer, p.Reference, meta, string(n.State),
		ts(n.CreatedAt), ts(n.UpdatedAt), ledger.NormalReference(p.Reference), p.Account))
	if err != nil {
		return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key, translate(err))
	}
	return in, true, nil
}

// refundable reads the charge of key and sums, exactly, its refunds that did
// not fail, leaving out the keys in skip. Amounts are stored as text: they
// are summed here as decimals, never by SQLite as floating point.
func (e executor) refundable(ctx context.Context, key string, skip map[string]bool) (ledger.Refundable, error) {
	r := ledger.Refundable{Refunded: decimal.Zero}
	in, err := e.GetIntent(ctx, key)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return r, nil
	case err != nil:
		return r, err
	}
	r.Charge, r.Found = in, true
	rows, err := e.query(ctx, `SELECT key, amount FROM intents WHERE kind = 'refund' AND refund_of = ? AND state <> 'failed'`, key)
	if err != nil {
		return r, ledger.Wrap("sum refunds", key, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var k, a string
		if err := rows.Scan(&k, &a); err != nil {
			return r, ledger.Wrap("sum refunds", key, translate(err))
		}
		if skip[k] {
			continue
		}
		d, err := decimal.NewFromString(a)
		if err != nil {
			return r, ledger.Wrap("sum refunds", key, err)
		}
		r.Refunded = r.Refunded.Add(d)
	}
	return r, ledger.Wrap("sum refunds", key, translate(rows.Err()))
}

// importedRefund is a refund the import created, on line of the file.
type importedRefund struct {
	line          int
	key, refundOf string
}

// importedRefunds reads the refunds the import created, by charge and then
// line. They are read whole before they are checked: the connection serves
// one statement at a time.
func (imp *intentImport) importedRefunds(ctx context.Context) ([]importedRefund, error) {
	rows, err := imp.e.query(ctx, `SELECT r.line, r.key, r.refund_of FROM temp.intent_import_refunds r ORDER BY r.refund_of, r.line`)
	if err != nil {
		return nil, err
	}
	var all []importedRefund
	for rows.Next() {
		var g importedRefund
		if err := rows.Scan(&g.line, &g.key, &g.refundOf); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, g)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return all, nil
}

// checkRefundGroup checks the created refunds of one charge, group, in
// file order against the charge and its refunds not in group plus those of
// group before each. A refused refund is counted as such, and its key added
// to refused.
func (imp *intentImport) checkRefundGroup(ctx context.Context, group []importedRefund, refused *[]string) error {
	skip := make(map[string]bool, len(group))
	keys := make([]string, len(group))
	for i, g := range group {
		skip[g.key], keys[i] = true, g.key
	}
	r, err := imp.e.refundable(ctx, group[0].refundOf, skip)
	if err != nil {
		return err
	}
	stored, err := imp.e.GetIntents(ctx, keys)
	if err != nil {
		return err
	}
	byKey := make(map[string]ledger.Intent, len(stored))
	for _, in := range stored {
		byKey[in.Key] = in
	}
	for _, g := range group {
		in := byKey[g.key]
		err := ledger.CheckRefund(in.IntentParams, r)
		if err == nil {
			err = ledger.CheckImportedRefundSends(in.State, r.Charge)
		}
		if err != nil {
			imp.res.Refused = append(imp.res.Refused, ledger.RefusedIntent{Line: g.line, Err: err})
			imp.res.Created--
			*refused = append(*refused, g.key)
			continue
		}
		if ledger.CountsAsRefunded(in.State) {
			r.Refunded = r.Refunded.Add(in.Amount.Value)
		}
	}
	return nil
}

// checkRefunds checks the refunds the import created, a charge at a time:
// each against its charge and, in file order, the charge's refunds not
// created by the import plus those of the file before it. A refused refund
// is deleted again with its imported attempts, so that the rest of the
// import stands as written.
func (imp *intentImport) checkRefunds(ctx context.Context) error {
	all, err := imp.importedRefunds(ctx)
	if err != nil {
		return err
	}
	var group []importedRefund
	var refused []string
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		if err := imp.checkRefundGroup(ctx, group, &refused); err != nil {
			return err
		}
		group = group[:0]
		return nil
	}
	for _, g := range all {
		if len(group) > 0 && group[0].refundOf != g.refundOf {
			if err := flush(); err != nil {
				return err
			}
		}
		group = append(group, g)
	}
	if err := flush(); err != nil {
		return err
	}
	if len(refused) == 0 {
		return nil
	}
	if _, err := imp.e.exec(ctx, `DELETE FROM attempts WHERE intent_key IN (SELECT value FROM json_each(?))`, jsonList(refused)); err != nil {
		return err
	}
	_, err = imp.e.exec(ctx, `DELETE FROM intents WHERE key IN (SELECT value FROM json_each(?))`, jsonList(refused))
	return err
}
