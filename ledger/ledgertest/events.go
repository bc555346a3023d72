package ledgertest

import (
	"context"
	"errors"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
)

func exerciseEvents(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	id := ledger.EventID(ledger.EventChargeSucceeded, "k1")
	if id != ledger.EventID(ledger.EventChargeSucceeded, "k1") || id == ledger.EventID(ledger.EventChargeFailed, "k1") {
		t.Fatal("event ids are not stable per (type, key)")
	}
	ev := ledger.Event{ID: id, Type: ledger.EventChargeSucceeded, IntentKey: "k1", Payload: []byte(`{"key":"k1"}`), CreatedAt: T0}
	got, created, err := s.InsertEvent(ctx, ev)
	if err != nil || !created || string(got.Payload) != `{"key":"k1"}` {
		t.Fatalf("insert = %+v, %v, %v", got, created, err)
	}
	ev.Payload = []byte(`{"key":"other"}`)
	got, created, err = s.InsertEvent(ctx, ev)
	if err != nil || created || string(got.Payload) != `{"key":"k1"}` {
		t.Fatalf("insert again = %+v, %v, %v", got, created, err)
	}
	if _, err := s.GetEvent(ctx, "evt_missing"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("missing event: %v", err)
	}

	r := ledger.APIRequest{Key: "charge:order-1", RequestHash: "h1", Status: 201, Response: []byte(`{"key":"charge:order-1"}`), CreatedAt: T0}
	saved, created, err := s.SaveAPIRequest(ctx, r)
	if err != nil || !created || saved.Status != 201 {
		t.Fatalf("save = %+v, %v, %v", saved, created, err)
	}
	r.RequestHash, r.Status = "h2", 409
	saved, created, err = s.SaveAPIRequest(ctx, r)
	if err != nil || created || saved.RequestHash != "h1" || string(saved.Response) != `{"key":"charge:order-1"}` {
		t.Fatalf("save again = %+v, %v, %v", saved, created, err)
	}
	if _, err := s.GetAPIRequest(ctx, "nope"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("missing request: %v", err)
	}
}
