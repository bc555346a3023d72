package charge_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// TestCreateIntentRefusesTheProvidersCurrency: the charge service, the way
// Go code creates intents, refuses an M-Pesa intent in another currency
// than KES, as the intents API and the intents CSV import do, and creates
// nothing; its request check says the same.
func TestCreateIntentRefusesTheProvidersCurrency(t *testing.T) {
	t.Parallel()
	forEngines(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		b := setup(t, newStore, setupOpts{})
		ctx := context.Background()
		usd, err := money.Parse("10", "USD")
		if err != nil {
			t.Fatal(err)
		}
		p := ledger.IntentParams{Key: "charge:usd", Provider: "mpesa", Amount: usd, Customer: "254712340845"}
		_, _, err = b.svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: p})
		var fe *ledger.FieldError
		if !errors.As(err, &fe) || fe.Field != "currency" || fe.Err.Error() != "M-Pesa moves only KES, not USD" {
			t.Fatalf("create: %v", err)
		}
		if _, err := b.store.GetIntent(ctx, "charge:usd"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("created anyway: %v", err)
		}
		if err := b.svc.CheckIntent(p); !errors.As(err, &fe) || fe.Field != "currency" {
			t.Fatalf("check: %v", err)
		}
		p.Provider = "fake"
		if _, _, err := b.svc.CreateIntent(ctx, ledger.NewIntent{IntentParams: p}); err != nil {
			t.Fatalf("another provider in USD: %v", err)
		}
	})
}
