package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// exercisePayouts covers bank entries, payouts and what payouts carry:
// stored once, filled and never overwritten, found by time, id and trace,
// inside a transaction as outside.
func exercisePayouts(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 0, 0, 0, 0, time.UTC) }

	t.Run("bank entries are stored once and read back", func(t *testing.T) {
		es := []ledger.BankEntry{
			{Provider: "bank:main", TxnID: "FT1@S1#1.1", Statement: "S1 #1", Index: 1, BookingDate: day(9), ValueDate: day(10),
				BankRef: "FT1", EndToEndID: "po_1", Counterparty: "STRIPE", Text: strings.Repeat("x", 3000), Info: "i", Code: "swift:NTRF"},
			{Provider: "bank:main", TxnID: "RV1@S1#1.2", Statement: "S1 #1", Index: 2, BookingDate: day(9), Reversal: true},
		}
		n, err := s.RecordBankEntries(ctx, es)
		if err != nil || n != 2 {
			t.Fatalf("record: %d, %v", n, err)
		}
		changed := es[0]
		changed.Text = "other"
		if n, err := s.RecordBankEntries(ctx, []ledger.BankEntry{changed}); err != nil || n != 0 {
			t.Fatalf("again: %d, %v", n, err)
		}
		got, err := s.GetBankEntries(ctx, "bank:main", []string{"RV1@S1#1.2", "FT1@S1#1.1", "nope"})
		if err != nil || len(got) != 2 {
			t.Fatalf("get: %v, %v", got, err)
		}
		slices.SortFunc(got, func(a, b ledger.BankEntry) int { return a.Index - b.Index })
		if got[0] != es[0] || got[1] != es[1] {
			t.Errorf("read back\n%+v\n%+v\nwant\n%+v\n%+v", got[0], got[1], es[0], es[1])
		}
		bad := es[0]
		bad.BookingDate = day(9).Add(time.Hour)
		if _, err := s.RecordBankEntries(ctx, []ledger.BankEntry{bad}); !isField(err, "booking_date") {
			t.Errorf("a booking date with a time: %v", err)
		}
	})

	t.Run("a large batch of bank entries is stored whole, once", func(t *testing.T) {
		// More than one statement's worth of rows on either engine, with
		// one already stored in the middle.
		es := make([]ledger.BankEntry, 2500)
		for i := range es {
			es[i] = ledger.BankEntry{Provider: "bank:big", TxnID: fmt.Sprintf("E%05d", i), Statement: "S", Index: i + 1,
				BookingDate: day(9)}
		}
		if n, err := s.RecordBankEntries(ctx, es[1200:1201]); err != nil || n != 1 {
			t.Fatalf("one: %d, %v", n, err)
		}
		if n, err := s.RecordBankEntries(ctx, es); err != nil || n != len(es)-1 {
			t.Fatalf("record: %d, %v", n, err)
		}
		ids := make([]string, len(es))
		for i := range es {
			ids[i] = es[i].TxnID
		}
		if got, err := s.GetBankEntries(ctx, "bank:big", ids); err != nil || len(got) != len(es) {
			t.Fatalf("get: %d, %v", len(got), err)
		}
	})

	t.Run("a statement's entries in one transaction are stored whole and read back", func(t *testing.T) {
		// Large enough for the bulk path of either engine; a second
		// statement repeats half of the first.
		entry := func(i int) ledger.BankEntry {
			b := ledger.BankEntry{Provider: "bank:tx", TxnID: fmt.Sprintf("T%05d", i), Statement: "S9 #9", Index: i + 1,
				BookingDate: day(1 + i%28), BankRef: fmt.Sprint("FT", i), EndToEndID: fmt.Sprint("po_", i),
				Counterparty: "STRIPE", Text: "PAYOUT é " + fmt.Sprint(i), Info: "info", Code: "swift:NTRF"}
			if i%3 == 0 {
				b.ValueDate = day(1 + (i+1)%28)
			}
			b.Reversal = i%7 == 0
			return b
		}
		first, second := make([]ledger.BankEntry, 600), make([]ledger.BankEntry, 600)
		for i := range first {
			first[i], second[i] = entry(i), entry(i+300)
		}
		var n1, n2, n3 int
		err := s.InTx(ctx, func(tx ledger.Tx) error {
			var err error
			if n1, err = tx.RecordBankEntries(ctx, first); err != nil {
				return err
			}
			if n2, err = tx.RecordBankEntries(ctx, second); err != nil {
				return err
			}
			n3, err = tx.RecordBankEntries(ctx, first)
			return err
		})
		if err != nil || n1 != 600 || n2 != 300 || n3 != 0 {
			t.Fatalf("record: %d, %d, %d, %v; want 600, 300, 0", n1, n2, n3, err)
		}
		ids := make([]string, 900)
		for i := range ids {
			ids[i] = entry(i).TxnID
		}
		got, err := s.GetBankEntries(ctx, "bank:tx", ids)
		if err != nil || len(got) != 900 {
			t.Fatalf("get: %d, %v", len(got), err)
		}
		slices.SortFunc(got, func(a, b ledger.BankEntry) int { return a.Index - b.Index })
		for i, g := range got {
			if want := entry(i); g != want {
				t.Fatalf("entry %d read back\n%+v\nwant\n%+v", i, g, want)
			}
		}
	})

	kes := func(v string) money.Amount { return kes(t, v) }
	t.Run("payouts are filled, never overwritten", func(t *testing.T) {
		p := ledger.Payout{Provider: "stripe", ID: "po_1", InitiatedAt: T0, FirstSeenAt: T0}
		if n, err := s.RecordPayouts(ctx, []ledger.Payout{p}); err != nil || n != 1 {
			t.Fatalf("record: %d, %v", n, err)
		}
		if n, err := s.RecordPayouts(ctx, []ledger.Payout{p}); err != nil || n != 0 {
			t.Fatalf("again: %d, %v", n, err)
		}
		more := ledger.Payout{Provider: "stripe", ID: "po_1", InitiatedAt: T0.Add(time.Hour), ArrivalAt: T0.Add(48 * time.Hour),
			TraceID: "TR1", Descriptor: "STRIPE", FirstSeenAt: T0.Add(time.Minute)}
		dup := ledger.Payout{Provider: "stripe", ID: "po_1", Destination: "ba_1", InitiatedAt: T0}
		if n, err := s.RecordPayouts(ctx, []ledger.Payout{more, dup}); err != nil || n != 1 {
			t.Fatalf("fill: %d, %v", n, err)
		}
		m := ledger.Payout{Provider: "mpesa", ID: "SFT1", InitiatedAt: T0, Carried: kes("10.00"), Left: kes("0"), FirstSeenAt: T0}
		if _, err := s.RecordPayouts(ctx, []ledger.Payout{m}); err != nil {
			t.Fatal(err)
		}
		got, err := s.FindPayouts(ctx, ledger.PayoutLookup{Provider: "stripe", IDs: []string{"po_1"}})
		if err != nil || len(got) != 1 {
			t.Fatalf("find: %v, %v", got, err)
		}
		g := got[0]
		if !g.InitiatedAt.Equal(T0) || !g.ArrivalAt.Equal(more.ArrivalAt) || g.TraceID != "TR1" || g.Descriptor != "STRIPE" ||
			g.Destination != "ba_1" || !g.FirstSeenAt.Equal(T0) || !g.Carried.IsZero() {
			t.Errorf("filled: %+v", g)
		}
		for _, l := range []ledger.PayoutLookup{
			{Provider: "stripe", From: T0.Add(47 * time.Hour), To: T0.Add(49 * time.Hour)},
			{Provider: "stripe", TraceIDs: []string{"TR1", ""}},
		} {
			got, err := s.FindPayouts(ctx, l)
			if err != nil || len(got) != 1 || got[0].ID != "po_1" {
				t.Errorf("%+v: %v, %v", l, got, err)
			}
		}
		// Expected at its arrival, not when it left.
		if got, err := s.FindPayouts(ctx, ledger.PayoutLookup{Provider: "stripe", From: T0, To: T0.Add(time.Hour)}); err != nil || len(got) != 0 {
			t.Errorf("by initiation: %v, %v", got, err)
		}
		got, err = s.FindPayouts(ctx, ledger.PayoutLookup{Provider: "mpesa", From: T0, To: T0.Add(time.Second)})
		if err != nil || len(got) != 1 || !got[0].Carried.Equal(kes("10.00")) || !got[0].Left.Equal(kes("0")) {
			t.Errorf("mpesa: %v, %v", got, err)
		}
		if _, err := s.RecordPayouts(ctx, []ledger.Payout{{Provider: "stripe", ID: "po_2"}}); !isField(err, "arrival_at") {
			t.Errorf("a payout with no time: %v", err)
		}
	})

	t.Run("payouts are of their account", func(t *testing.T) {
		at := T0.Add(100 * time.Hour)
		own := ledger.Payout{Provider: "stripe", ID: "po_own", ArrivalAt: at, FirstSeenAt: T0}
		conn := ledger.Payout{Provider: "stripe", Account: "acct_1", ID: "po_conn", ArrivalAt: at, TraceID: "TRC", FirstSeenAt: T0}
		if n, err := s.RecordPayouts(ctx, []ledger.Payout{own, conn}); err != nil || n != 2 {
			t.Fatalf("record: %d, %v", n, err)
		}
		// Seen again without its account (it never moves) and filled.
		again := conn
		again.Account, again.Destination = "", "ba_9"
		if n, err := s.RecordPayouts(ctx, []ledger.Payout{again}); err != nil || n != 1 {
			t.Fatalf("again: %d, %v", n, err)
		}
		window := ledger.PayoutLookup{Provider: "stripe", From: at, To: at.Add(time.Hour)}
		for _, c := range []struct {
			accounts []string
			want     string
		}{{nil, "po_conn@acct_1 po_own@"}, {[]string{""}, "po_own@"}, {[]string{"acct_1"}, "po_conn@acct_1"}, {[]string{"acct_2"}, ""}} {
			for _, l := range []ledger.PayoutLookup{window, {Provider: "stripe", IDs: []string{"po_own", "po_conn"}}} {
				l.Accounts = c.accounts
				got, err := s.FindPayouts(ctx, l)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, p := range got {
					ids = append(ids, p.ID+"@"+p.Account)
				}
				slices.Sort(ids)
				if strings.Join(ids, " ") != c.want {
					t.Errorf("accounts %q, %+v: %v, want %s", c.accounts, l, ids, c.want)
				}
			}
		}
		got, err := s.FindPayouts(ctx, ledger.PayoutLookup{Provider: "stripe", TraceIDs: []string{"TRC"}, Accounts: []string{"acct_1"}})
		if err != nil || len(got) != 1 || got[0].Destination != "ba_9" {
			t.Errorf("by trace in its account: %+v, %v", got, err)
		}
	})

	t.Run("payout items by payout and by transaction", func(t *testing.T) {
		items := []ledger.PayoutItem{{Provider: "stripe", PayoutID: "po_1", TxnID: "ch_2"}, {Provider: "stripe", PayoutID: "po_1", TxnID: "ch_1"},
			{Provider: "stripe", PayoutID: "po_1", TxnID: "ch_1"}, {Provider: "stripe", PayoutID: "po_9", TxnID: "ch_1", FirstSeenAt: T0}}
		err := s.InTx(ctx, func(tx ledger.Tx) error {
			n, err := tx.RecordPayoutItems(ctx, items)
			if n != 3 {
				t.Errorf("added %d, want 3", n)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.RecordPayoutItems(ctx, items); err != nil || n != 0 {
			t.Fatalf("again: %d, %v", n, err)
		}
		got, err := s.PayoutItems(ctx, "stripe", []string{"po_1"})
		if err != nil || len(got) != 2 || got[0].TxnID != "ch_1" || got[1].TxnID != "ch_2" {
			t.Errorf("items of po_1: %+v, %v", got, err)
		}
		got, err = s.ItemsOfTxns(ctx, "stripe", []string{"ch_1", "ch_3"})
		if err != nil || len(got) != 2 || got[0].PayoutID != "po_1" || got[1].PayoutID != "po_9" || !got[1].FirstSeenAt.Equal(T0) {
			t.Errorf("payouts of ch_1: %+v, %v", got, err)
		}
		if got, err := s.ItemsOfTxns(ctx, "mpesa", []string{"ch_1"}); err != nil || len(got) != 0 {
			t.Errorf("another provider's: %+v, %v", got, err)
		}
	})
}

func isField(err error, field string) bool {
	var fe *ledger.FieldError
	return errors.As(err, &fe) && fe.Field == field
}
