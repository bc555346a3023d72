package providers

import (
	"context"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// PayoutPuller fetches the payouts a provider made to bank accounts that
// are expected to arrive in [from, to), each with what it carries (Stripe's
// /v1/payouts and, for each, its balance transactions). It emits the
// payout's sighting (with Sighting.Payout) and the sightings of its items
// (with Sighting.PayoutItems); emitting one twice must be harmless.
type PayoutPuller interface {
	PullPayouts(ctx context.Context, from, to time.Time, emit func(Sighting) error) error
}

// ExtrasStore records what sightings say beyond their transactions; a
// ledger.Tx is one.
type ExtrasStore interface {
	RecordBankEntries(ctx context.Context, es []ledger.BankEntry) (int, error)
	RecordPayouts(ctx context.Context, ps []ledger.Payout) (int, error)
	RecordPayoutItems(ctx context.Context, items []ledger.PayoutItem) (int, error)
}

// Extras gathers what a batch of sightings says beyond its transactions,
// to be recorded with them (Record), in the same database transaction.
type Extras struct {
	Bank    []ledger.BankEntry
	Payouts []ledger.Payout
	Items   []ledger.PayoutItem
}

// Add takes what s says beyond its transaction.
func (x *Extras) Add(s Sighting) {
	if s.Bank != nil {
		x.Bank = append(x.Bank, *s.Bank)
	}
	if s.Payout != nil {
		p := *s.Payout
		p.Account = s.Txn.Account
		x.Payouts = append(x.Payouts, p)
	}
	x.Items = append(x.Items, s.PayoutItems...)
}

// Empty reports whether there is nothing to record.
func (x *Extras) Empty() bool { return len(x.Bank)+len(x.Payouts)+len(x.Items) == 0 }

// Reset empties x, keeping its room.
func (x *Extras) Reset() {
	clear(x.Bank)
	x.Bank, x.Payouts, x.Items = x.Bank[:0], x.Payouts[:0], x.Items[:0]
}

// ExtraCounts says what recording extras added.
type ExtraCounts struct {
	// Payouts counts payouts added or filled; Items the payout items
	// added; BankEntries the bank entries added.
	Payouts, Items, BankEntries int
}

// Record stores x through s: the payouts, then their items, then the bank
// entries. Sightings of a batch are recorded first, so that each item and
// entry follows its transaction. at stamps what carries no first sighting.
func (x *Extras) Record(ctx context.Context, s ExtrasStore, at time.Time) (ExtraCounts, error) {
	var c ExtraCounts
	var err error
	for i := range x.Payouts {
		if x.Payouts[i].FirstSeenAt.IsZero() {
			x.Payouts[i].FirstSeenAt = at
		}
	}
	for i := range x.Items {
		if x.Items[i].FirstSeenAt.IsZero() {
			x.Items[i].FirstSeenAt = at
		}
	}
	if c.Payouts, err = s.RecordPayouts(ctx, x.Payouts); err != nil {
		return c, err
	}
	if c.Items, err = s.RecordPayoutItems(ctx, x.Items); err != nil {
		return c, err
	}
	c.BankEntries, err = s.RecordBankEntries(ctx, x.Bank)
	return c, err
}
