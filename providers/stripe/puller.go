package stripe

import (
	"context"
	"errors"
	"fmt"
	"time"

	stripeapi "github.com/stripe/stripe-go/v85"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// ChannelAPI is the source channel of sightings pulled from the API. Each
// sighting's ref is the Stripe object id, so pulling a window twice adds
// nothing the second time.
const ChannelAPI = "api"

// Pull lists the charges (with their refunds and balance transactions
// expanded, for the settlement), the refunds and the disputes created in
// [from, to), and, when Config.BalanceTransactions is set, the balance
// transactions (fees, payouts, adjustments: every reporting category, read
// as a report row of it is), and emits each as a sighting. It pages through the
// lists with Stripe's cursors.
//
// An object that does not normalise is skipped and handed to
// Config.OnReject with its JSON, or, without one, reported in the returned
// error (a *ledger.ParseError per object, joined) after everything else
// has been emitted; a failed request, a failing emit or a failing OnReject
// stops the pull. Sightings already emitted stay valid either way.
func (c *Client) Pull(ctx context.Context, from, to time.Time, emit func(providers.Sighting) error) error {
	if !from.Before(to) {
		return fmt.Errorf("stripe: pull: empty window %s..%s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	p := &pull{c: c, emit: emit, seen: map[string]bool{},
		s: sighter{channel: ChannelAPI, ref: func(id string) string { return id }, receivedAt: c.now(), key: c.key()}}
	created := &stripeapi.RangeQueryParams{GreaterThanOrEqual: ceilUnix(from), LesserThan: ceilUnix(to)}

	cp := &stripeapi.ChargeListParams{CreatedRange: created}
	cp.Limit = stripeapi.Int64(int64(c.cfg.PageSize))
	cp.AddExpand("data.refunds")
	cp.AddExpand("data.balance_transaction")
	cp.AddExpand("data.refunds.data.balance_transaction")
	for ch, err := range c.sc.V1Charges.List(ctx, cp).All(ctx) {
		if err != nil {
			return p.fail("charges", err)
		}
		if err := p.object(ctx, "/v1/charges", ch.ID, rawOf(ch.LastResponse), chargeSightings); err != nil {
			return err
		}
	}

	rp := &stripeapi.RefundListParams{CreatedRange: created}
	rp.Limit = stripeapi.Int64(int64(c.cfg.PageSize))
	rp.AddExpand("data.balance_transaction")
	for re, err := range c.sc.V1Refunds.List(ctx, rp).All(ctx) {
		if err != nil {
			return p.fail("refunds", err)
		}
		if p.seen[re.ID] {
			continue
		}
		err := p.object(ctx, "/v1/refunds", re.ID, rawOf(re.LastResponse), func(raw []byte, prefix string, s sighter) ([]providers.Sighting, error) {
			one, err := refundSighting(raw, prefix, s, chargeObject{})
			return []providers.Sighting{one}, err
		})
		if err != nil {
			return err
		}
	}

	dp := &stripeapi.DisputeListParams{CreatedRange: created}
	dp.Limit = stripeapi.Int64(int64(c.cfg.PageSize))
	dp.AddExpand("data.charge")
	for d, err := range c.sc.V1Disputes.List(ctx, dp).All(ctx) {
		if err != nil {
			return p.fail("disputes", err)
		}
		if err := p.object(ctx, "/v1/disputes", d.ID, rawOf(d.LastResponse), disputeSightings); err != nil {
			return err
		}
	}

	if c.cfg.BalanceTransactions {
		bp := &stripeapi.BalanceTransactionListParams{CreatedRange: created}
		bp.Limit = stripeapi.Int64(int64(c.cfg.PageSize))
		bp.AddExpand("data.source")
		for bt, err := range c.sc.V1BalanceTransactions.List(ctx, bp).All(ctx) {
			if err != nil {
				return p.fail("balance transactions", err)
			}
			if err := p.object(ctx, "/v1/balance_transactions", bt.ID, rawOf(bt.LastResponse), balanceTxnSightings); err != nil {
				return err
			}
		}
	}
	return errors.Join(p.bad...)
}

type pull struct {
	c    *Client
	s    sighter
	emit func(providers.Sighting) error
	seen map[string]bool
	bad  []error
}

func (p *pull) fail(what string, err error) error {
	return fmt.Errorf("stripe: pull %s: %w", what, classify(err))
}

// object normalises one listed object and emits its sightings, all or none.
func (p *pull) object(ctx context.Context, path, id string, raw []byte, norm func([]byte, string, sighter) ([]providers.Sighting, error)) error {
	ss, err := norm(raw, "", p.s)
	if err != nil {
		perr := &ledger.ParseError{File: "stripe " + path + " " + id, Err: err}
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			perr.Field, perr.Err = fe.Field, fe.Err
		}
		if p.c.cfg.OnReject != nil {
			return p.c.cfg.OnReject(ctx, perr, raw)
		}
		p.bad = append(p.bad, perr)
		return nil
	}
	for _, s := range ss {
		if err := p.emit(s); err != nil {
			return err
		}
		p.seen[s.Txn.ID] = true
	}
	return nil
}

func rawOf(r *stripeapi.APIResponse) []byte {
	if r == nil {
		return nil
	}
	return r.RawJSON
}

// ceilUnix returns the first whole Unix second at or after t, so that
// created >= ceilUnix(from) and created < ceilUnix(to) select exactly the
// whole seconds in [from, to).
func ceilUnix(t time.Time) int64 {
	u := t.Unix()
	if t.Nanosecond() > 0 {
		u++
	}
	return u
}
