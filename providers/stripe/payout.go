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

// payoutObject is a payout to the account's bank account (or card).
type payoutObject struct {
	ID                  string     `json:"id"`
	Object              string     `json:"object"`
	Amount              *int64     `json:"amount"`
	Currency            string     `json:"currency"`
	Created             *int64     `json:"created"`
	ArrivalDate         *int64     `json:"arrival_date"`
	Status              string     `json:"status"`
	StatementDescriptor string     `json:"statement_descriptor"`
	Destination         expandable `json:"destination"`
	TraceID             *struct {
		Status string `json:"status"`
		Value  string `json:"value"`
	} `json:"trace_id"`
}

// payoutStatuses are the transaction statuses of Stripe's payout statuses:
// paid money reached the bank, pending and in_transit is on its way, failed
// and canceled came back to the balance.
var payoutStatuses = map[string]ledger.TxnStatus{"paid": ledger.TxnSucceeded, "pending": ledger.TxnPending,
	"in_transit": ledger.TxnPending, "failed": ledger.TxnFailed, "canceled": ledger.TxnFailed}

// payoutSighting normalises a payout object: a payout transaction (its
// amount a magnitude, as a balance line of category payout is read) and
// what it says of its way to the bank (ledger.Payout: when it left, its
// arrival date, trace, statement descriptor and destination).
func payoutSighting(raw []byte, prefix string, s sighter) (providers.Sighting, error) {
	var p payoutObject
	if err := decodeObject(raw, prefix, &p); err != nil {
		return providers.Sighting{}, err
	}
	if err := needID(prefix, p.ID, p.Object, "payout"); err != nil {
		return providers.Sighting{}, err
	}
	amt, err := needAmount(prefix, "amount", p.Amount, p.Currency, false)
	if err != nil {
		return providers.Sighting{}, err
	}
	created, err := needTime(prefix, "created", p.Created)
	if err != nil {
		return providers.Sighting{}, err
	}
	arrival, err := needTime(prefix, "arrival_date", p.ArrivalDate)
	if err != nil {
		return providers.Sighting{}, err
	}
	st, ok := payoutStatuses[p.Status]
	if !ok {
		return providers.Sighting{}, fieldErr(prefix, "status", fmt.Errorf("unknown payout status %q", p.Status))
	}
	txn := ledger.ProviderTxn{Provider: Provider, ID: p.ID, Type: ledger.TxnPayout, Status: st, Amount: amt, OccurredAt: created}
	out := s.sighting(txn, p.ID, raw)
	out.Payout = &ledger.Payout{Provider: Provider, ID: p.ID, InitiatedAt: created, ArrivalAt: arrival,
		Descriptor: p.StatementDescriptor, Destination: string(p.Destination)}
	if p.TraceID != nil {
		out.Payout.TraceID = p.TraceID.Value
	}
	if err := ledger.ValidatePayout(*out.Payout); err != nil {
		var fe *ledger.FieldError
		if errors.As(err, &fe) {
			return providers.Sighting{}, fieldErr(prefix, fe.Field, fe.Err)
		}
		return providers.Sighting{}, err
	}
	return out, nil
}

// payoutItemIDs are the transactions a balance transaction puts in a
// payout: those a report row of it is read as (the charge, refund or
// dispute and its fee; an adjustment), by the same rules, whichever of
// them a pull of the balance transaction emits. The payout's own balance
// transaction puts nothing in it.
func payoutItemIDs(raw []byte, payoutID string) ([]string, error) {
	var b balanceTxnObject
	if err := decodeObject(raw, "", &b); err != nil {
		return nil, err
	}
	cat := b.ReportingCategory
	if cat == "" {
		if cat = typeCategories[b.Type]; cat == "" {
			cat = b.Type
		}
	}
	if cat == "payout" || b.Source.ID == payoutID {
		return nil, nil
	}
	gross, err := needAmount("", "amount", b.Amount, b.Currency, true)
	if err != nil {
		return nil, err
	}
	fee, err := needAmount("", "fee", b.Fee, b.Currency, true)
	if err != nil {
		return nil, err
	}
	line := balanceLine{BalanceTxnID: b.ID, Category: cat, SourceID: b.Source.ID, ChargeID: b.Source.Charge, Gross: gross, Fee: fee}
	res, lerr := line.normalize()
	if lerr != nil {
		return nil, lerr
	}
	ids := make([]string, len(res.txns))
	for i, t := range res.txns {
		ids[i] = t.ID
	}
	return ids, nil
}

// PullPayouts lists the payouts expected to arrive in [from, to) (their
// arrival_date) and, for each, the balance transactions it paid out
// (/v1/balance_transactions?payout=). It emits each balance transaction
// as Pull reads it, then the payout, with its arrival (Sighting.Payout)
// and the transactions it carries (Sighting.PayoutItems). A payout or a
// balance transaction that does not normalise is handled as in Pull
// (Config.OnReject, else the returned error); a payout whose balance
// transactions cannot all be read is emitted without its items.
func (c *Client) PullPayouts(ctx context.Context, from, to time.Time, emit func(providers.Sighting) error) error {
	if !from.Before(to) {
		return fmt.Errorf("stripe: pull payouts: empty window %s..%s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	p := &pull{c: c, emit: emit, seen: map[string]bool{},
		s: sighter{channel: ChannelAPI, ref: func(id string) string { return id }, receivedAt: c.now(), key: c.key()}}
	pp := &stripeapi.PayoutListParams{ArrivalDateRange: &stripeapi.RangeQueryParams{GreaterThanOrEqual: ceilUnix(from),
		LesserThan: ceilUnix(to)}}
	pp.Limit = stripeapi.Int64(int64(c.cfg.PageSize))
	for po, err := range c.sc.V1Payouts.List(ctx, pp).All(ctx) {
		if err != nil {
			return p.fail("payouts", err)
		}
		raw := rawOf(po.LastResponse)
		s, err := payoutSighting(raw, "", p.s)
		if err != nil {
			if err := p.reject(ctx, "/v1/payouts", po.ID, raw, err); err != nil {
				return err
			}
			continue
		}
		complete := true
		bp := &stripeapi.BalanceTransactionListParams{Payout: stripeapi.String(po.ID)}
		bp.Limit = stripeapi.Int64(int64(c.cfg.PageSize))
		bp.AddExpand("data.source")
		for bt, err := range c.sc.V1BalanceTransactions.List(ctx, bp).All(ctx) {
			if err != nil {
				return p.fail("balance transactions of payout "+po.ID, err)
			}
			braw := rawOf(bt.LastResponse)
			ids, err := payoutItemIDs(braw, po.ID)
			if err != nil {
				complete = false
				if err := p.reject(ctx, "/v1/balance_transactions", bt.ID, braw, err); err != nil {
					return err
				}
				continue
			}
			if err := p.object(ctx, "/v1/balance_transactions", bt.ID, braw, balanceTxnSightings); err != nil {
				return err
			}
			for _, id := range ids {
				s.PayoutItems = append(s.PayoutItems, ledger.PayoutItem{Provider: Provider, PayoutID: po.ID, TxnID: id})
			}
		}
		if !complete {
			s.PayoutItems = nil
		}
		if err := emit(s); err != nil {
			return err
		}
	}
	return errors.Join(p.bad...)
}

// reject hands an object that does not normalise to OnReject, or keeps it
// for the pull's error.
func (p *pull) reject(ctx context.Context, path, id string, raw []byte, err error) error {
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
