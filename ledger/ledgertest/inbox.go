package ledgertest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func exerciseCallbacks(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	body := []byte(`{"Body":{"stkCallback":{"CheckoutRequestID":"ws_CO_1","ResultCode":0}}}`)
	c, dup, err := s.StoreCallback(ctx, ledger.Callback{Provider: "mpesa", DedupeKey: "sha256:abc", Body: body,
		RemoteAddr: "196.201.214.200", ReceivedAt: T0})
	if err != nil || dup || c.ID == 0 || string(c.Body) != string(body) || !c.ProcessedAt.IsZero() {
		t.Fatalf("store = %+v, %v, %v", c, dup, err)
	}
	again, dup, err := s.StoreCallback(ctx, ledger.Callback{Provider: "mpesa", DedupeKey: "sha256:abc", Body: body, ReceivedAt: T0.Add(time.Second)})
	if err != nil || !dup || again.ID != c.ID || !again.ReceivedAt.Equal(T0) {
		t.Fatalf("duplicate delivery = %+v, %v, %v", again, dup, err)
	}
	if _, _, err := s.StoreCallback(ctx, ledger.Callback{Provider: "mpesa", DedupeKey: "sha256:def", Body: []byte("{"), ReceivedAt: T0}); err != nil {
		t.Fatal(err)
	}
	pending, err := s.ListUnprocessedCallbacks(ctx, "mpesa", 10)
	if err != nil || len(pending) != 2 || pending[0].ID != c.ID {
		t.Fatalf("unprocessed = %+v, %v", pending, err)
	}
	if err := s.MarkCallbackProcessed(ctx, c.ID, "stk_callback", "", T0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkCallbackProcessed(ctx, 9999, "", "", T0); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("mark missing: %v", err)
	}
	pending, err = s.ListUnprocessedCallbacks(ctx, "mpesa", 10)
	if err != nil || len(pending) != 1 || pending[0].DedupeKey != "sha256:def" {
		t.Fatalf("unprocessed after mark = %+v, %v", pending, err)
	}
}

func exerciseAlerts(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	a := ledger.Alert{Subject: "f_1", Reason: "opened", Provider: "mpesa", RunID: 7, Severity: ledger.SeverityHigh,
		Channel: "C1", CreatedAt: T0}
	got, created, err := s.RecordAlert(ctx, a)
	if err != nil || !created || got.State != ledger.AlertPending || got.ID == 0 {
		t.Fatalf("record = %+v, %v, %v", got, created, err)
	}
	again, created, err := s.RecordAlert(ctx, a)
	if err != nil || created || again.ID != got.ID {
		t.Fatalf("record again = %+v, %v, %v", again, created, err)
	}
	if _, err := s.FirstDelivered(ctx, "f_1"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("first delivered before delivery: %v", err)
	}
	failed, err := s.MarkAlertFailed(ctx, ledger.AlertFailure{ID: got.ID, Error: "slack 500", MayHavePosted: true, Now: T0})
	if err != nil || failed.Attempts != 1 || failed.State != ledger.AlertPending || failed.Error != "slack 500" || !failed.MayHavePosted {
		t.Fatalf("failed = %+v, %v", failed, err)
	}
	d, err := s.MarkAlertDelivered(ctx, ledger.AlertDelivery{ID: got.ID, Channel: "C1", MessageTS: "1.0001", Now: T0.Add(time.Second)})
	if err != nil || d.State != ledger.AlertDelivered || d.MessageTS != "1.0001" || d.Attempts != 2 || d.Error != "" || d.MayHavePosted {
		t.Fatalf("delivered = %+v, %v", d, err)
	}
	if _, err := s.MarkAlertDelivered(ctx, ledger.AlertDelivery{ID: got.ID, Channel: "C1", MessageTS: "2", Now: T0}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("second delivery: %v", err)
	}
	first, err := s.FirstDelivered(ctx, "f_1")
	if err != nil || first.MessageTS != "1.0001" {
		t.Fatalf("first delivered = %+v, %v", first, err)
	}
	res, _, _ := s.RecordAlert(ctx, ledger.Alert{Subject: "f_1", Reason: "resolved", RunID: 8, CreatedAt: T0})
	if dis, err := s.MarkAlertFailed(ctx, ledger.AlertFailure{ID: res.ID, Error: "channel_not_found", Discard: true, Now: T0}); err != nil || dis.State != ledger.AlertDiscarded || dis.MayHavePosted {
		t.Fatalf("discard = %+v, %v", dis, err)
	}
	list, err := s.ListAlerts(ctx, 7, 10)
	if err != nil || len(list) != 1 {
		t.Fatalf("list run 7 = %+v, %v", list, err)
	}
	if all, _ := s.ListAlerts(ctx, 0, 10); len(all) != 2 {
		t.Fatalf("list all = %+v", all)
	}
}
