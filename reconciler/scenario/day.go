package scenario

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	mpesaprovider "github.com/reconcilehq/reconcile/providers/mpesa"
)

// EAT is M-Pesa's zone, Africa/Nairobi (UTC+3, no daylight saving).
var EAT = mpesaprovider.EAT

// Expected is a finding a correct reconcile reports: its kind, intent and
// provider transactions (sorted).
type Expected struct {
	Kind      ledger.Kind
	IntentKey string
	TxnIDs    []string
}

func (e Expected) String() string {
	return fmt.Sprintf("%s %q [%s]", e.Kind, e.IntentKey, strings.Join(e.TxnIDs, " "))
}

// Of returns the Expected form of findings, sorted.
func Of(fs []ledger.Finding) []Expected {
	out := make([]Expected, 0, len(fs))
	for _, f := range fs {
		out = append(out, Expected{Kind: f.Kind, IntentKey: f.IntentKey, TxnIDs: slices.Clone(f.ProviderTxnIDs)})
	}
	sortExpected(out)
	return out
}

func sortExpected(es []Expected) {
	for i := range es {
		slices.Sort(es[i].TxnIDs)
	}
	slices.SortFunc(es, func(a, b Expected) int {
		if c := cmp.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		if c := cmp.Compare(a.IntentKey, b.IntentKey); c != 0 {
			return c
		}
		return slices.Compare(a.TxnIDs, b.TxnIDs)
	})
}

// Attempt is one recorded try at the provider.
type Attempt struct {
	Ref     string
	Outcome ledger.Outcome
	At      time.Time
}

// Intent is an intent to create, with its attempts. A processing intent is
// claimed at its creation time for Lease.
type Intent struct {
	ledger.NewIntent
	Lease    time.Duration
	Attempts []Attempt
}

// Day is one provider's day: what to load, when to reconcile it and what a
// reconcile must find.
type Day struct {
	Name     string
	Provider string
	// From and To are the day's window.
	From, To time.Time
	// Now is when the day is reconciled.
	Now time.Time
	// Grace is the settlement grace to reconcile with.
	Grace   time.Duration
	Intents []Intent
	// Sightings are the provider's evidence in delivery order, repeated
	// deliveries included.
	Sightings []providers.Sighting
	// Expected are the planted findings, sorted; Settled the unknown
	// intents that evidence settles, sorted.
	Expected []Expected
	Settled  []string
	// Late is evidence that arrives after the first reconcile and remedies
	// the finding Remedied.
	Late     []providers.Sighting
	Remedied Expected
	// Traps names the situations planted that must not be findings.
	Traps []string
}

// Load writes the day's intents, attempts and sightings to store in one
// transaction.
func (d *Day) Load(ctx context.Context, store ledger.Store) error {
	return store.InTx(ctx, func(tx ledger.Tx) error {
		for _, in := range d.Intents {
			if err := loadIntent(ctx, tx, in); err != nil {
				return fmt.Errorf("scenario %s: intent %s: %w", d.Name, in.Key, err)
			}
		}
		return Deliver(ctx, tx, d.Sightings)
	})
}

// Deliver records sightings as the intake would.
func Deliver(ctx context.Context, ex ledger.Executor, sightings []providers.Sighting) error {
	for _, s := range sightings {
		if _, err := ex.UpsertProviderTxn(ctx, s.Txn, s.Source); err != nil {
			return err
		}
	}
	return nil
}

func loadIntent(ctx context.Context, tx ledger.Tx, in Intent) error {
	n := in.NewIntent
	if n.State == ledger.StateProcessing {
		n.State, n.UpdatedAt = ledger.StatePending, n.CreatedAt
	}
	created, _, err := tx.CreateIntent(ctx, n)
	if err != nil {
		return err
	}
	if in.State == ledger.StateProcessing {
		created, err = tx.ClaimIntent(ctx, ledger.ClaimParams{Key: in.Key, Owner: "worker-1", Lease: in.Lease, Now: in.CreatedAt})
		if err != nil {
			return err
		}
	}
	for _, a := range in.Attempts {
		if _, err := tx.StartAttempt(ctx, ledger.AttemptParams{IntentKey: in.Key, ClaimToken: created.ClaimToken,
			ProviderRef: a.Ref, Outcome: a.Outcome, Now: a.At}); err != nil {
			return err
		}
	}
	return nil
}
