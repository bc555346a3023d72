package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

func exerciseScan(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	from, to := T0.Add(-time.Hour), T0.Add(time.Hour)
	amount := func(v, cur string) money.Amount {
		a, err := money.Parse(v, cur)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	create := func(key, provider string, a money.Amount, state ledger.State, at time.Time) {
		t.Helper()
		_, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: key, Provider: provider,
			Amount: a, Customer: "254712340845", Metadata: map[string]string{"k": key}}, State: state,
			CreatedAt: at, UpdatedAt: at.Add(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Amounts at every exponent and several scales, states, the window's
	// edges, another provider.
	create("k-kes", "mpesa", amount("1500", "KES"), ledger.StateSucceeded, T0)
	create("k-cents", "mpesa", amount("12.5", "KES"), ledger.StateFailed, T0.Add(time.Microsecond))
	// The largest amount that fits in int64 minor units is far above the
	// limits at the edge: it is planted as a row stored before them.
	create("k-big", "mpesa", amount("1", "KES"), ledger.StateSucceeded, T0.Add(time.Minute))
	Exec(t, s, `UPDATE intents SET amount = '92233720368547758.07' WHERE key = 'k-big'`)
	create("k-jpy", "mpesa", amount("1500", "JPY"), ledger.StateUnknown, T0.Add(2*time.Minute))
	create("k-bhd", "mpesa", amount("1.234", "BHD"), ledger.StatePending, T0.Add(3*time.Minute))
	create("k-edge-from", "mpesa", amount("0.01", "USD"), ledger.StateSucceeded, from)
	create("k-edge-to", "mpesa", amount("1", "USD"), ledger.StateSucceeded, to)
	create("k-before", "mpesa", amount("1", "USD"), ledger.StateSucceeded, from.Add(-time.Microsecond))
	create("k-stripe", "stripe", amount("1", "USD"), ledger.StateSucceeded, T0)
	create("k-claimed", "mpesa", amount("10000", "KES"), ledger.StatePending, T0.Add(4*time.Minute))
	_, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k-claimed", Owner: "w", Lease: 15 * time.Minute, Now: T0.Add(5 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	// Provider references: two per intent, a repeated one, an empty one,
	// and one of an intent outside the window.
	for _, a := range []struct{ key, ref string }{{"k-kes", "ws_CO_2"}, {"k-kes", "ws_CO_1"}, {"k-jpy", "pi_1"},
		{"k-jpy", "pi_1"}, {"k-jpy", ""}, {"k-before", "ws_CO_9"}, {"k-stripe", "pi_9"}} {
		if _, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: a.key, ProviderRef: a.ref,
			Outcome: ledger.OutcomeImported, Now: T0}); err != nil {
			t.Fatal(err)
		}
	}
	upsert := func(tx ledger.ProviderTxn) {
		t.Helper()
		if _, err := s.UpsertProviderTxn(ctx, tx, ledger.Source{Channel: "statement", Ref: tx.ID, ReceivedAt: T0}); err != nil {
			t.Fatal(err)
		}
	}
	upsert(ledger.ProviderTxn{Provider: "mpesa", ID: "R1", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: amount("1500.00", "KES"), OccurredAt: T0, Reference: "ACC1", ProviderRef: "ws_CO_1", Counterparty: "2547****0845"})
	upsert(ledger.ProviderTxn{Provider: "mpesa", ID: "R2", Type: ledger.TxnReversal, Status: ledger.TxnSucceeded,
		Amount: amount("-12.50", "KES"), OccurredAt: T0.Add(time.Minute), LinkedID: "R1"})
	upsert(ledger.ProviderTxn{Provider: "mpesa", ID: "R3", Type: ledger.TxnFee, Status: ledger.TxnPending,
		Amount: amount("0.001", "BHD"), OccurredAt: from})
	upsert(ledger.ProviderTxn{Provider: "mpesa", ID: "R4", Type: ledger.TxnPayout, Status: ledger.TxnFailed,
		Amount: amount("7", "JPY"), OccurredAt: to.Add(-time.Microsecond)})
	upsert(ledger.ProviderTxn{Provider: "mpesa", ID: "R5", Type: ledger.TxnRefund, Status: ledger.TxnSucceeded,
		Amount: amount("1", "USD"), OccurredAt: to})
	upsert(ledger.ProviderTxn{Provider: "stripe", ID: "R6", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: amount("1", "USD"), OccurredAt: T0})
	ifl := ledger.IntentFilter{Provider: "mpesa", From: from, To: to}
	tfl := ledger.TxnFilter{Provider: "mpesa", From: from, To: to}

	// The scans agree with the listings, on the store and in a transaction.
	check := func(t *testing.T, x ledger.Executor) {
		var want []ledger.Intent
		if err := x.ListIntents(ctx, ifl, func(in ledger.Intent) error { want = append(want, in); return nil }); err != nil {
			t.Fatal(err)
		}
		got := map[string]ledger.Intent{}
		err := x.ScanIntents(ctx, ifl, func(r *ledger.IntentRow) error {
			in, err := r.Intent()
			if err != nil {
				return err
			}
			got[in.Key] = in
			return nil
		})
		if err != nil || len(got) != len(want) || len(want) != 7 {
			t.Fatalf("scanned %d intents, listed %d: %v", len(got), len(want), err)
		}
		var wantRefs, gotRefs []string
		for _, w := range want {
			g := got[w.Key]
			if !g.Amount.Equal(w.Amount) || g.Amount.Currency != w.Amount.Currency || g.Reference != w.Reference ||
				g.Customer != w.Customer || g.State != w.State || !g.CreatedAt.Equal(w.CreatedAt) ||
				!g.UpdatedAt.Equal(w.UpdatedAt) || !g.LeaseExpiresAt.Equal(w.LeaseExpiresAt) {
				t.Errorf("scanned %+v\nlisted %+v", g, w)
			}
			for _, r := range w.ProviderRefs {
				wantRefs = append(wantRefs, w.Key+" "+r)
			}
		}
		if g := got["k-claimed"]; !g.LeaseExpiresAt.Equal(T0.Add(20*time.Minute)) || g.State != ledger.StateProcessing {
			t.Errorf("claimed intent scanned as %+v", g)
		}
		if g := got["k-big"]; g.Amount.Text() != "92233720368547758.07" {
			t.Errorf("big amount scanned as %s", g.Amount.Text())
		}
		err = x.ScanProviderRefs(ctx, ifl, func(key, ref []byte) error {
			gotRefs = append(gotRefs, string(key)+" "+string(ref))
			return nil
		})
		gotRefs = slices.Compact(slices.Sorted(slices.Values(gotRefs)))
		slices.Sort(wantRefs)
		if err != nil || !slices.Equal(gotRefs, wantRefs) || len(wantRefs) != 3 {
			t.Fatalf("scanned refs %q, listed %q: %v", gotRefs, wantRefs, err)
		}

		var wantTxns []ledger.ProviderTxn
		if err := x.ListProviderTxns(ctx, tfl, func(tx ledger.ProviderTxn) error { wantTxns = append(wantTxns, tx); return nil }); err != nil {
			t.Fatal(err)
		}
		gotTxns := map[string]ledger.ProviderTxn{}
		minors := map[string]int64{}
		err = x.ScanProviderTxns(ctx, tfl, func(r *ledger.TxnRow) error {
			tx, err := r.Txn()
			gotTxns[tx.ID], minors[tx.ID] = tx, r.Minor
			return err
		})
		if err != nil || len(gotTxns) != len(wantTxns) || len(wantTxns) != 4 {
			t.Fatalf("scanned %d txns, listed %d: %v", len(gotTxns), len(wantTxns), err)
		}
		for _, w := range wantTxns {
			g := gotTxns[w.ID]
			if g.Type != w.Type || g.Status != w.Status || !g.Amount.Equal(w.Amount) || !g.OccurredAt.Equal(w.OccurredAt) ||
				g.Reference != w.Reference || g.ProviderRef != w.ProviderRef || g.Counterparty != w.Counterparty || g.LinkedID != w.LinkedID {
				t.Errorf("scanned %+v\nlisted %+v", g, w)
			}
		}
		if minors["R1"] != 150000 || minors["R2"] != -1250 || minors["R3"] != 1 || minors["R4"] != 7 {
			t.Errorf("minor units %v", minors)
		}
	}
	t.Run("Store", func(t *testing.T) { check(t, s) })
	t.Run("Tx", func(t *testing.T) {
		if err := s.InTx(ctx, func(tx ledger.Tx) error { check(t, tx); return nil }); err != nil {
			t.Fatal(err)
		}
	})

	// A row whose amount does not fit in int64 minor units is handed on
	// with Bad set rather than stopping the scan: one record must not stop
	// a reconcile.
	create("k-huge", "mpesa", amount("1", "KES"), ledger.StateSucceeded, T0.Add(5*time.Minute))
	Exec(t, s, `UPDATE intents SET amount = '1000000000000000000000000000000' WHERE key = 'k-huge'`)
	upsert(ledger.ProviderTxn{Provider: "mpesa", ID: "R-HUGE", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: amount("1", "KES"), OccurredAt: T0})
	Exec(t, s, `UPDATE provider_txns SET amount = '-1000000000000000000000000000000' WHERE txn_id = 'R-HUGE'`)
	bad, rows := map[string]error{}, 0
	err = s.ScanIntents(ctx, ifl, func(r *ledger.IntentRow) error {
		rows++
		if r.Bad != nil {
			bad[string(r.Key)] = r.Bad
		}
		return nil
	})
	if err != nil || rows != 8 || len(bad) != 1 || bad["k-huge"] == nil {
		t.Fatalf("scan with an unreadable intent: %v, %d rows, bad %v", err, rows, bad)
	}
	err = s.ScanProviderTxns(ctx, tfl, func(r *ledger.TxnRow) error {
		if r.Bad != nil {
			bad[string(r.ID)] = r.Bad
		}
		return nil
	})
	if err != nil || len(bad) != 2 || bad["R-HUGE"] == nil {
		t.Fatalf("scan with an unreadable txn: %v, bad %v", err, bad)
	}

	// An error from fn stops the scan and comes back as is; the store
	// stays usable.
	stop := errors.New("stop")
	n := 0
	err = s.ScanIntents(ctx, ifl, func(*ledger.IntentRow) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("scan stopped with %v after %d rows", err, n)
	}
	if err := s.ScanProviderTxns(ctx, tfl, func(*ledger.TxnRow) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("txn scan stopped with %v", err)
	}
	if err := s.ScanProviderRefs(ctx, ifl, func(_, _ []byte) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("ref scan stopped with %v", err)
	}
	if _, err := s.GetIntent(ctx, "k-kes"); err != nil {
		t.Fatal(err)
	}
	// An empty window streams nothing.
	empty := ledger.IntentFilter{Provider: "mpesa", From: to.Add(time.Hour), To: to.Add(2 * time.Hour)}
	err = s.ScanIntents(ctx, empty, func(r *ledger.IntentRow) error { return fmt.Errorf("row %s", r.Key) })
	if err != nil {
		t.Fatal(err)
	}
}
