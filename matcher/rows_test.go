package matcher_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// scratch hands out byte slices from one buffer that is overwritten after
// every call, the way a store's read buffer is: a matcher that kept a
// borrowed slice would see garbage.
type scratch struct{ buf []byte }

func (s *scratch) bytes(v string) []byte {
	if s.buf == nil {
		s.buf = make([]byte, 0, 1<<16)
	}
	if len(s.buf)+len(v) > cap(s.buf) {
		panic("scratch: out of room") // growing would leave earlier slices unspoiled
	}
	s.buf = append(s.buf, v...)
	return s.buf[len(s.buf)-len(v) : len(s.buf) : len(s.buf)]
}

func (s *scratch) spoil() {
	for i := range s.buf {
		s.buf[i] = '#'
	}
	s.buf = s.buf[:0]
}

func intentRow(t testing.TB, s *scratch, in ledger.Intent) *ledger.IntentRow {
	minor, err := in.Amount.Minor()
	if err != nil {
		t.Fatal(err)
	}
	r := &ledger.IntentRow{Key: s.bytes(in.Key), Reference: s.bytes(in.Reference), Customer: s.bytes(in.Customer),
		Currency: in.Amount.Currency, Minor: minor, State: in.State, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt,
		LeaseExpiresAt: in.LeaseExpiresAt, RefundOf: s.bytes(in.RefundOf), Expected: in.Kind == ledger.IntentExpected, DueAt: in.DueAt}
	if !in.Tolerance.IsZero() {
		if r.Tolerance, err = in.Tolerance.Minor(); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func txnRow(t testing.TB, s *scratch, x ledger.ProviderTxn) *ledger.TxnRow {
	minor, err := x.Amount.Minor()
	if err != nil {
		t.Fatal(err)
	}
	r := &ledger.TxnRow{ID: s.bytes(x.ID), Reference: s.bytes(x.Reference), ProviderRef: s.bytes(x.ProviderRef),
		Counterparty: s.bytes(x.Counterparty), LinkedID: s.bytes(x.LinkedID), Type: x.Type, Status: x.Status,
		Currency: x.Amount.Currency, Minor: minor, OccurredAt: x.OccurredAt, ExchangeRate: s.bytes(x.ExchangeRate)}
	if !x.Settlement.IsZero() {
		r.Settlement, r.SettlementCurrency = s.bytes(x.Settlement.Text()), s.bytes(x.Settlement.Currency)
	}
	return r
}

// runRows matches through AddIntentRow, AddProviderRef and AddTxnRow, with
// every borrowed byte spoiled once the call returns.
func runRows(t testing.TB, opt matcher.Options, intents []in, txns []tx) *matcher.Result {
	t.Helper()
	m, err := matcher.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	var s scratch
	for _, i := range intents {
		if err := m.AddIntentRow(intentRow(t, &s, i)); err != nil {
			t.Fatal(err)
		}
		s.spoil()
	}
	// References come after all intents, in reverse, with one of an intent
	// that was not added.
	for k := len(intents) - 1; k >= 0; k-- {
		for _, p := range intents[k].ProviderRefs {
			if err := m.AddProviderRef(s.bytes(intents[k].Key), s.bytes(p)); err != nil {
				t.Fatal(err)
			}
			s.spoil()
		}
	}
	if err := m.AddProviderRef([]byte("no-such-intent"), []byte("pref-1")); err != nil {
		t.Fatal(err)
	}
	for _, x := range txns {
		if err := m.AddTxnRow(txnRow(t, &s, x)); err != nil {
			t.Fatal(err)
		}
		s.spoil()
	}
	res, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestRowErrors(t *testing.T) {
	t.Parallel()
	opt := matcher.Options{Provider: "mpesa", From: day, To: next, Now: now}
	var s scratch
	i := intent(t, "k1", ledger.StateSucceeded, "1500", 0)
	m, _ := matcher.New(opt)
	if err := m.AddIntentRow(intentRow(t, &s, i)); err != nil {
		t.Fatal(err)
	}
	if err := m.AddIntentRow(intentRow(t, &s, i)); err != nil {
		t.Fatal(err) // found when indexing
	}
	if err := m.AddTxnRow(txnRow(t, &s, charge(t, "R1", ledger.TxnSucceeded, "1", 0, "", ""))); err == nil ||
		!bytes.Contains([]byte(err.Error()), []byte(`"k1" given twice`)) {
		t.Fatalf("duplicate intent: %v", err)
	}

	m, _ = matcher.New(opt)
	if err := m.AddTxnRow(txnRow(t, &s, charge(t, "R1", ledger.TxnSucceeded, "1", 0, "", ""))); err != nil {
		t.Fatal(err)
	}
	if err := m.AddIntentRow(intentRow(t, &s, i)); !errors.Is(err, matcher.ErrOrder) {
		t.Fatalf("intent after txn: %v", err)
	}
	if err := m.AddProviderRef([]byte("k1"), []byte("p")); !errors.Is(err, matcher.ErrOrder) {
		t.Fatalf("reference after txn: %v", err)
	}

	m, _ = matcher.New(opt)
	bad := intentRow(t, &s, i)
	bad.State = "done"
	if err := m.AddIntentRow(bad); err == nil {
		t.Fatal("unknown state accepted")
	}
	bad = intentRow(t, &s, i)
	bad.Currency = "XXZ"
	if err := m.AddIntentRow(bad); err == nil {
		t.Fatal("unknown currency accepted")
	}
	bad = intentRow(t, &s, i)
	bad.Key = nil
	if err := m.AddIntentRow(bad); err == nil {
		t.Fatal("empty key accepted")
	}
	x := txnRow(t, &s, charge(t, "R1", ledger.TxnSucceeded, "1", 0, "", ""))
	x.Type = "gift"
	if err := m.AddTxnRow(x); err == nil {
		t.Fatal("unknown type accepted")
	}
	x = txnRow(t, &s, charge(t, "R1", ledger.TxnSucceeded, "1", 0, "", ""))
	x.ID = nil
	if err := m.AddTxnRow(x); err == nil {
		t.Fatal("empty id accepted")
	}
}

// TestRowsDoNotAllocate: adding rows allocates nothing per row once the
// arena and record chunks are in place.
func TestRowsDoNotAllocate(t *testing.T) {
	m, _ := matcher.New(matcher.Options{Provider: "mpesa", From: day, To: next, Now: now})
	var s scratch
	in := intent(t, "k", ledger.StateSucceeded, "1500", 0)
	rows := make([]*ledger.IntentRow, 200)
	for i := range rows {
		in.Key = "key-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		rows[i] = intentRow(t, &s, in)
	}
	k := 0
	if n := testing.AllocsPerRun(100, func() {
		_ = m.AddIntentRow(rows[k])
		_ = m.AddProviderRef(rows[k].Key, []byte("ws_CO_1"))
		k++
	}); n > 0.1 {
		t.Fatalf("AddIntentRow allocates %.2f times per row", n)
	}
	x := txnRow(t, &s, charge(t, "R1", ledger.TxnSucceeded, "1500", 0, "", "ws_CO_1"))
	if n := testing.AllocsPerRun(100, func() { _ = m.AddTxnRow(x) }); n > 0.1 {
		t.Fatalf("AddTxnRow allocates %.2f times per row", n)
	}
}
