package ledgertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func exerciseTxns(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	txn := ledger.ProviderTxn{Provider: "mpesa", ID: "NLJ7RT61SV", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: kes(t, "1500"), OccurredAt: T0, ProviderRef: "ws_CO_1"}
	stk := ledger.Source{Channel: "stk_callback", Ref: "ws_CO_1", Raw: []byte(`{"Body":{}}`), ReceivedAt: T0.Add(time.Second)}

	res, err := s.UpsertProviderTxn(ctx, txn, stk)
	if err != nil || !res.Created || !res.SourceAdded || res.Txn.Reference != "" {
		t.Fatalf("first sighting = %+v, %v", res, err)
	}
	res, err = s.UpsertProviderTxn(ctx, txn, stk)
	if err != nil || res.Created || res.SourceAdded {
		t.Fatalf("replayed sighting = %+v, %v", res, err)
	}
	if !res.Txn.UpdatedAt.Equal(T0.Add(time.Second)) {
		t.Fatalf("a replay changed updated_at: %v", res.Txn.UpdatedAt)
	}
	// The statement row names the account reference and a counterparty; the
	// STK callback did not. Empty fields fill in; set ones never change.
	stmt := txn
	stmt.Reference, stmt.Counterparty, stmt.ProviderRef = "INV-1001", "2547****0845", "other"
	res, err = s.UpsertProviderTxn(ctx, stmt, ledger.Source{Channel: "statement", Ref: "stmt.csv:2", ReceivedAt: T0.Add(time.Hour)})
	if err != nil || res.Created || !res.SourceAdded || res.Txn.Reference != "INV-1001" ||
		res.Txn.Counterparty != "2547****0845" || res.Txn.ProviderRef != "ws_CO_1" {
		t.Fatalf("second channel = %+v, %v", res, err)
	}
	c2b := ledger.Source{Channel: "c2b_confirmation", Ref: "NLJ7RT61SV", Raw: []byte(`{"TransID":"NLJ7RT61SV"}`), ReceivedAt: T0.Add(2 * time.Second)}
	if _, err := s.UpsertProviderTxn(ctx, txn, c2b); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetProviderTxn(ctx, "mpesa", "NLJ7RT61SV")
	if err != nil || len(got.Sources) != 3 || string(got.Sources[0].Raw) != `{"Body":{}}` || got.Sources[1].Channel != "c2b_confirmation" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := s.GetProviderTxn(ctx, "stripe", "NLJ7RT61SV"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("other provider: %v", err)
	}

	// Pending becomes final; final never changes.
	p := ledger.ProviderTxn{Provider: "stripe", ID: "ch_1", Type: ledger.TxnCharge, Status: ledger.TxnPending,
		Amount: kes(t, "10"), OccurredAt: T0}
	if _, err := s.UpsertProviderTxn(ctx, p, ledger.Source{Channel: "api", Ref: "a", ReceivedAt: T0}); err != nil {
		t.Fatal(err)
	}
	p.Status = ledger.TxnSucceeded
	res, err = s.UpsertProviderTxn(ctx, p, ledger.Source{Channel: "api", Ref: "b", ReceivedAt: T0})
	if err != nil || res.Txn.Status != ledger.TxnSucceeded {
		t.Fatalf("pending -> succeeded = %+v, %v", res.Txn, err)
	}
	p.Status = ledger.TxnFailed
	res, err = s.UpsertProviderTxn(ctx, p, ledger.Source{Channel: "api", Ref: "c", ReceivedAt: T0})
	if err != nil || res.Txn.Status != ledger.TxnSucceeded {
		t.Fatalf("succeeded overwritten = %+v, %v", res.Txn, err)
	}

	// A sighting that disagrees keeps the stored values and is quarantined
	// once with the reason.
	odd := txn
	odd.Amount = kes(t, "1400")
	oddSrc := ledger.Source{Channel: "statement", Ref: "statement:NLJ7RT61SV:v2", Raw: []byte("row"), ReceivedAt: T0.Add(3 * time.Hour)}
	res, err = s.UpsertProviderTxn(ctx, odd, oddSrc)
	if err != nil || !strings.Contains(res.Conflict, "amount KES 1400.00, stored KES 1500.00") || !res.Txn.Amount.Equal(kes(t, "1500")) {
		t.Fatalf("conflicting sighting = %+v, %v", res, err)
	}
	// Seen again, it is still a conflict (a re-import reports the same) but
	// is not quarantined twice.
	if res, err = s.UpsertProviderTxn(ctx, odd, oddSrc); err != nil || !strings.Contains(res.Conflict, "amount KES 1400.00") ||
		res.SourceAdded || !res.Txn.Amount.Equal(kes(t, "1500")) {
		t.Fatalf("replayed conflicting sighting = %+v, %v", res, err)
	}
	q, err := s.ListQuarantine(ctx, "mpesa_conflict", 10)
	if err != nil || len(q) != 1 || string(q[0].Raw) != "row" || !strings.Contains(q[0].Reason, "amount") {
		t.Fatalf("conflict quarantine = %+v, %v", q, err)
	}

	bad := txn
	bad.ID = ""
	var fe *ledger.FieldError
	if _, err := s.UpsertProviderTxn(ctx, bad, stk); !errors.As(err, &fe) || fe.Field != "id" {
		t.Fatalf("missing id: %v", err)
	}

	var ids []string
	err = s.ListProviderTxns(ctx, ledger.TxnFilter{Provider: "mpesa", From: T0, To: T0.Add(time.Microsecond)}, func(tx ledger.ProviderTxn) error {
		ids = append(ids, tx.ID)
		return nil
	})
	if err != nil || len(ids) != 1 || ids[0] != "NLJ7RT61SV" {
		t.Fatalf("list = %v, %v", ids, err)
	}
	ids = nil
	_ = s.ListProviderTxns(ctx, ledger.TxnFilter{Provider: "mpesa", From: T0.Add(time.Microsecond), To: T0.Add(time.Hour)}, func(tx ledger.ProviderTxn) error {
		ids = append(ids, tx.ID)
		return nil
	})
	if len(ids) != 0 {
		t.Fatalf("window end is exclusive: %v", ids)
	}
}
