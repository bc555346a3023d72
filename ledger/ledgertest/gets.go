package ledgertest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// exerciseBatchGets: GetIntents and GetProviderTxns return what GetIntent
// and GetProviderTxn return, for the keys that exist, once each.
func exerciseBatchGets(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	p := params(t, "k1", "100")
	p.Metadata = map[string]string{"order": "1"}
	mustCreate(t, s, p)
	mustCreate(t, s, params(t, "k2", "12.50"))
	mustCreate(t, s, params(t, "k3", "7"))
	if _, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k2", Owner: "w", Lease: time.Minute, Now: T0}); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"R1", "R2", "R3"} {
		tx := ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
			Amount: kes(t, "100"), OccurredAt: T0, ProviderRef: "ws_CO_" + id}
		for j := range i + 1 {
			src := ledger.Source{Channel: "statement", Ref: fmt.Sprintf("s.csv:%d", j), Raw: []byte(id), ReceivedAt: T0.Add(time.Duration(2-j) * time.Second)}
			if _, err := s.UpsertProviderTxn(ctx, tx, src); err != nil {
				t.Fatal(err)
			}
		}
	}
	other := ledger.ProviderTxn{Provider: "stripe", ID: "R1", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kes(t, "1"), OccurredAt: T0}
	if _, err := s.UpsertProviderTxn(ctx, other, ledger.Source{Channel: "api", Ref: "x", ReceivedAt: T0}); err != nil {
		t.Fatal(err)
	}

	ins, err := s.GetIntents(ctx, []string{"k2", "missing", "k1", "k2"})
	if err != nil || len(ins) != 2 {
		t.Fatalf("GetIntents = %d intents, %v", len(ins), err)
	}
	slices.SortFunc(ins, func(a, b ledger.Intent) int { return strings.Compare(a.Key, b.Key) })
	for i, k := range []string{"k1", "k2"} {
		want, err := s.GetIntent(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprintf("%+v %s", ins[i], ins[i].Amount.Value), fmt.Sprintf("%+v %s", want, want.Amount.Value); g != w {
			t.Fatalf("GetIntents %s:\n got %s\nwant %s", k, g, w)
		}
	}
	txns, err := s.GetProviderTxns(ctx, "mpesa", []string{"R3", "R1", "nope", "R3"})
	if err != nil || len(txns) != 2 {
		t.Fatalf("GetProviderTxns = %d txns, %v", len(txns), err)
	}
	slices.SortFunc(txns, func(a, b ledger.ProviderTxn) int { return strings.Compare(a.ID, b.ID) })
	for i, id := range []string{"R1", "R3"} {
		want, err := s.GetProviderTxn(ctx, "mpesa", id)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprintf("%+v %s", txns[i], txns[i].Amount.Value), fmt.Sprintf("%+v %s", want, want.Amount.Value); g != w {
			t.Fatalf("GetProviderTxns %s:\n got %s\nwant %s", id, g, w)
		}
	}
	if len(txns[1].Sources) != 3 || txns[1].Sources[0].Ref != "s.csv:2" {
		t.Fatalf("sources of R3 = %+v", txns[1].Sources)
	}
	if got, err := s.GetIntents(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("no keys = %v, %v", got, err)
	}
	if got, err := s.GetProviderTxns(ctx, "mpesa", []string{"nope"}); err != nil || len(got) != 0 {
		t.Fatalf("missing ids = %v, %v", got, err)
	}
	// In a transaction, reading its own writes.
	err = s.InTx(ctx, func(tx ledger.Tx) error {
		mustCreate(t, tx, params(t, "k4", "1"))
		got, err := tx.GetIntents(ctx, []string{"k4", "k3"})
		if err != nil || len(got) != 2 {
			return fmt.Errorf("in tx: %d intents, %v", len(got), err)
		}
		txs, err := tx.GetProviderTxns(ctx, "stripe", []string{"R1"})
		if err != nil || len(txs) != 1 || txs[0].Provider != "stripe" || len(txs[0].Sources) != 1 {
			return fmt.Errorf("in tx: %+v, %v", txs, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
