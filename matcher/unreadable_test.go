package matcher_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// TestOneRecordNeverStopsTheMatcher: an intent or a transaction whose
// amount the matcher cannot evaluate (beyond int64 minor units when read,
// beyond its range, or charges that sum beyond it) becomes an
// unreadable_record finding, and every other record of the window is judged
// as usual.
func TestOneRecordNeverStopsTheMatcher(t *testing.T) {
	t.Parallel()
	m, err := matcher.New(matcher.Options{Provider: "mpesa", From: day, To: next, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var s scratch
	good := intent(t, "k-good", ledger.StateSucceeded, "1500", time.Hour)
	huge := intent(t, "k-huge", ledger.StateSucceeded, "1", 2*time.Hour)
	unread := intentRow(t, &s, huge)
	unread.Bad, unread.Minor = fmt.Errorf("amount: 1000000000000000000000000000000: does not fit in int64 minor units"), 0
	big := intent(t, "k-big", ledger.StateSucceeded, "1", 3*time.Hour)
	bigRow := intentRow(t, &s, big)
	bigRow.Minor = 1 << 62 // fits int64, beyond the matcher's range
	// 100 charges of 10^17 minor units for one intent: their sum wraps
	// around int64 unless it is checked.
	many := intent(t, "k-many", ledger.StateSucceeded, "1", 4*time.Hour, "ws_MANY")
	for _, r := range []*ledger.IntentRow{intentRow(t, &s, good), unread, bigRow, intentRow(t, &s, many)} {
		if err := m.AddIntentRow(r); err != nil {
			t.Fatalf("intent %s stopped the matcher: %v", r.Key, err)
		}
	}
	if err := m.AddProviderRef([]byte("k-many"), []byte("ws_MANY")); err != nil {
		t.Fatal(err)
	}
	goodTxn := txnRow(t, &s, charge(t, "R-GOOD", ledger.TxnSucceeded, "1500", time.Hour, good.Reference, ""))
	badTxn := txnRow(t, &s, charge(t, "R-BAD", ledger.TxnSucceeded, "1", 5*time.Hour, "", ""))
	badTxn.Bad, badTxn.Minor = fmt.Errorf("amount: does not fit in int64 minor units"), 0
	rows := []*ledger.TxnRow{goodTxn, badTxn}
	for i := range 100 {
		r := txnRow(t, &s, charge(t, fmt.Sprintf("R-MANY-%03d", i), ledger.TxnSucceeded, "1", 4*time.Hour, "", "ws_MANY"))
		r.Minor = 100_000_000_000_000_000
		rows = append(rows, r)
	}
	for _, r := range rows {
		if err := m.AddTxnRow(r); err != nil {
			t.Fatalf("txn %s stopped the matcher: %v", r.ID, err)
		}
	}
	res, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range res.Findings {
		id := f.IntentKey
		if id == "" {
			id = strings.Join(f.ProviderTxnIDs, ",")
		}
		got[id] = string(f.Kind)
		if f.Kind == ledger.KindUnreadableRecord && (f.Severity != ledger.SeverityHigh || f.Detail == "") {
			t.Errorf("finding %+v", f)
		}
	}
	want := map[string]string{"k-huge": "unreadable_record", "k-big": "unreadable_record", "k-many": "unreadable_record",
		"R-BAD": "unreadable_record"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("findings %v\nwant %v", got, want)
	}
	if res.Summary.Matched != 101 {
		t.Errorf("summary %+v: the good records were not matched", res.Summary)
	}
}
