package mpesa

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
	"github.com/reconcilehq/reconcile/providers/statement"
)

// TestDemoLoop wires everything the way `reconcile demo` does on the
// embedded default: the fake Daraja answers pushes and posts callbacks over
// HTTP to the real handler; intents settle from callbacks, from queries
// where callbacks were lost, and the fake's portal statement fills in every
// receipt. Every successful payment ends as one transaction.
func TestDemoLoop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := &fakeClock{now: time.Date(2024, 2, 6, 14, 0, 0, 0, time.UTC)}
	store := dbtest.SQLite(t)
	proc := &intake.Processor{Store: store, Applier: testApplier{}, Clock: clock.Now}
	hcfg := HandlerConfig{PathToken: testToken, AllowIPs: []string{}, Quarantine: store, Clock: clock.Now}
	h, err := NewHandler(hcfg, proc, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	fake := mpesafake.New(mpesafake.Config{Seed: 5, Clock: clock.Now, Decide: mpesafake.Mixed,
		ConfirmationURL: hcfg.CallbackURL(srv.URL, "c2b/confirmation")})
	base := fake.Start()
	defer fake.Close()
	short, pass, key, secret := fake.Credentials()
	charger, err := NewCharger(Config{BaseURL: base, ShortCode: short, PassKey: pass, ConsumerKey: key, ConsumerSecret: secret,
		CallbackURL: hcfg.CallbackURL(srv.URL, "stk"), Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}

	const n = 20
	for i := range n {
		key := fmt.Sprintf("charge:order-%d", i)
		amt := kes(t, fmt.Sprint(100+i))
		if _, _, err := store.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: key, Provider: Provider,
			Amount: amt, Customer: "254712340845"}, CreatedAt: clock.Now()}); err != nil {
			t.Fatal(err)
		}
		in, err := store.ClaimIntent(ctx, ledger.ClaimParams{Key: key, Owner: "demo", Lease: time.Minute, Now: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		a, err := store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: key, ClaimToken: in.ClaimToken, Now: clock.Now()})
		if err != nil {
			t.Fatal(err)
		}
		res, err := charger.Charge(ctx, providers.ChargeRequest{IntentKey: key, Amount: amt, Customer: in.Customer,
			Reference: in.Reference, Attempt: a.Number})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: a.ID, ProviderRef: res.ProviderRef, Outcome: ledger.OutcomePending}); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Minute)
	}
	if err := fake.SettleAll(ctx); err != nil {
		t.Fatal(err)
	}
	// Where the callback was lost, the query tells.
	paid, lost := 0, 0
	for _, p := range fake.Pushes() {
		if p.Outcome.ResultCode == 0 {
			paid++
		}
		if p.Outcome.Callback != mpesafake.DeliverNever {
			continue
		}
		lost++
		q, err := charger.QueryStatus(ctx, p.CheckoutRequestID)
		if err != nil || q.Status != providers.StatusSucceeded {
			t.Fatalf("query of a lost callback = %+v, %v", q, err)
		}
	}
	if paid == 0 || lost == 0 || paid == n {
		t.Fatalf("the seeded mix lacks a case: %d paid, %d lost of %d", paid, lost, n)
	}
	var export bytes.Buffer
	if err := fake.WriteStatement(&export); err != nil {
		t.Fatal(err)
	}
	im := &statement.Importer{Store: store, Clock: clock.Now}
	c, err := im.Import(ctx, statement.File{Name: "portal.csv", Reader: &export, Parser: StatementParser{Clock: clock.Now},
		Source: "mpesa_statement"})
	if err != nil || c.Lines != paid || c.NewTxns != lost {
		t.Fatalf("statement import = %+v, %v (want %d lines, %d new)", c, err, paid, lost)
	}
	if got := txnCount(t, store); got != paid {
		t.Errorf("txns = %d, want %d", got, paid)
	}
	states := map[ledger.State]int{}
	for i := range n {
		states[intentState(t, store, fmt.Sprintf("charge:order-%d", i))]++
	}
	if states[ledger.StateSucceeded] != paid-lost || states[ledger.StateFailed] != n-paid || states[ledger.StateProcessing] != lost {
		t.Errorf("states = %v (paid %d, lost %d)", states, paid, lost)
	}
	for _, p := range fake.Pushes() {
		if p.Receipt == "" {
			continue
		}
		tx, err := store.GetProviderTxn(ctx, Provider, p.Receipt)
		if err != nil {
			t.Fatal(err)
		}
		if tx.Reference == "" || len(tx.Sources) < 2 && p.Outcome.Callback != mpesafake.DeliverNever {
			t.Errorf("%s: reference %q, %d sources", p.Receipt, tx.Reference, len(tx.Sources))
		}
	}
}
