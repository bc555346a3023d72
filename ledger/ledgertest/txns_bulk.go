package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// exerciseTxnBatches checks UpsertProviderTxns: a batch has the effect of
// its sightings recorded one after the other, contradictions are
// quarantined first-kept whatever their channel and ref, and batches inside
// a transaction are imported whole or not at all.
func exerciseTxnBatches(t *testing.T, newStore NewStore) {
	t.Run("SameSourceContradiction", func(t *testing.T) { t.Parallel(); batchSameSource(t, newStore) })
	t.Run("WithinBatch", func(t *testing.T) { t.Parallel(); batchWithin(t, newStore) })
	t.Run("DayApart", func(t *testing.T) { t.Parallel(); batchDayApart(t, newStore) })
	t.Run("Invalid", func(t *testing.T) { t.Parallel(); batchInvalid(t, newStore) })
	t.Run("WholeOrNothing", func(t *testing.T) { t.Parallel(); batchWholeOrNothing(t, newStore) })
	t.Run("AsOneByOne", func(t *testing.T) { t.Parallel(); batchAsOneByOne(t, newStore) })
	t.Run("AsModel", func(t *testing.T) { t.Parallel(); exerciseTxnsAsModel(t, newStore) })
}

func charge(t testing.TB, id, amount string) ledger.ProviderTxn {
	return ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: kes(t, amount), OccurredAt: T0}
}

// batchSameSource: a sighting under a channel and ref already stored, but
// saying something else (a second export of a row, a second C2B
// confirmation with the same TransID and another amount), is a conflict.
func batchSameSource(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	first := ledger.Sighting{Txn: charge(t, "SC1", "10"), Source: ledger.Source{Channel: "c2b_confirmation", Ref: "c2b:SC1",
		Raw: []byte(`{"TransAmount":"10"}`), ReceivedAt: T0}}
	second := ledger.Sighting{Txn: charge(t, "SC1", "20"), Source: ledger.Source{Channel: "c2b_confirmation", Ref: "c2b:SC1",
		Raw: []byte(`{"TransAmount":"20"}`), ReceivedAt: T0.Add(time.Minute)}}
	c, err := s.UpsertProviderTxns(ctx, []ledger.Sighting{first})
	if err != nil || c.NewTxns != 1 || c.NewSources != 1 {
		t.Fatalf("first = %+v, %v", c, err)
	}
	for range 2 {
		c, err = s.UpsertProviderTxns(ctx, []ledger.Sighting{second})
		if err != nil || c.NewTxns != 0 || c.NewSources != 0 || c.Duplicates != 0 || len(c.Conflicts) != 1 ||
			!strings.Contains(c.Conflicts[0].Reason, "amount KES 20.00, stored KES 10.00") {
			t.Fatalf("contradicting sighting under the same source = %+v, %v", c, err)
		}
	}
	got, err := s.GetProviderTxn(ctx, "mpesa", "SC1")
	if err != nil || !got.Amount.Equal(kes(t, "10")) || len(got.Sources) != 1 || string(got.Sources[0].Raw) != `{"TransAmount":"10"}` {
		t.Fatalf("stored = %+v, %v", got, err)
	}
	q, err := s.ListQuarantine(ctx, "mpesa_conflict", 10)
	if err != nil || len(q) != 1 || string(q[0].Raw) != `{"TransAmount":"20"}` || q[0].Origin != "c2b_confirmation c2b:SC1" ||
		q[0].Field != "provider_txn SC1" {
		t.Fatalf("quarantine = %+v, %v", q, err)
	}
	// The first sighting again is a plain duplicate.
	if c, err = s.UpsertProviderTxns(ctx, []ledger.Sighting{first}); err != nil || c.Duplicates != 1 || len(c.Conflicts) != 0 {
		t.Fatalf("first again = %+v, %v", c, err)
	}
}

// batchWithin: rows of one batch meet each other as if recorded in order.
func batchWithin(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	src := func(ref string, raw string) ledger.Source {
		return ledger.Source{Channel: "statement", Ref: ref, Raw: []byte(raw), ReceivedAt: T0.Add(time.Hour)}
	}
	known := charge(t, "K1", "5")
	if _, err := s.UpsertProviderTxn(ctx, known, ledger.Source{Channel: "api", Ref: "k", ReceivedAt: T0}); err != nil {
		t.Fatal(err)
	}
	pending := charge(t, "P1", "7")
	pending.Status = ledger.TxnPending
	succeeded, failed := pending, pending
	succeeded.Status, failed.Status = ledger.TxnSucceeded, ledger.TxnFailed
	withRef := func(x ledger.ProviderTxn, ref string) ledger.ProviderTxn { x.Reference = ref; return x }
	batch := []ledger.Sighting{
		{Txn: charge(t, "A1", "100"), Source: src("f:1", "a1")},
		{Txn: charge(t, "A1", "100"), Source: src("f:1", "a1")},            // the same row again
		{Txn: pending, Source: src("f:2", "p1 pending")},                   // new, pending
		{Txn: succeeded, Source: src("f:3", "p1 succeeded")},               // pending -> succeeded
		{Txn: failed, Source: src("f:4", "p1 failed")},                     // contradicts succeeded
		{Txn: charge(t, "C1", "30"), Source: src("f:5", "c1 30")},          // new
		{Txn: charge(t, "C1", "31"), Source: src("f:6", "c1 31")},          // contradicts the row before
		{Txn: withRef(known, "r1"), Source: src("f:7", "k1 r1")},           // fills the reference
		{Txn: withRef(known, "r2"), Source: src("f:8", "k1 r2")},           // too late to fill
		{Txn: withRef(charge(t, "K1", "6"), "r0"), Source: src("f:9", "")}, // contradicts, fills nothing
	}
	for round := range 2 {
		c, err := s.UpsertProviderTxns(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		var idx []int
		for _, cf := range c.Conflicts {
			idx = append(idx, cf.Index)
		}
		want := ledger.UpsertCounts{NewTxns: 3, NewSources: 6, Duplicates: 1}
		if round == 1 {
			want = ledger.UpsertCounts{Duplicates: 7}
		}
		if c.NewTxns != want.NewTxns || c.NewSources != want.NewSources || c.Duplicates != want.Duplicates ||
			!slices.Equal(idx, []int{4, 6, 9}) {
			t.Fatalf("round %d: counts = %+v, want %+v and conflicts 4, 6, 9", round, c, want)
		}
		if !strings.Contains(c.Conflicts[0].Reason, "status failed, stored succeeded") ||
			!strings.Contains(c.Conflicts[1].Reason, "amount KES 31.00, stored KES 30.00") {
			t.Fatalf("reasons = %+v", c.Conflicts)
		}
	}
	for id, want := range map[string]string{"A1": "100.00 succeeded  1", "P1": "7.00 succeeded  2", "C1": "30.00 succeeded  1",
		"K1": "5.00 succeeded r1 3"} {
		got, err := s.GetProviderTxn(ctx, "mpesa", id)
		if err != nil {
			t.Fatal(err)
		}
		if g := fmt.Sprintf("%s %s %s %d", got.Amount.Text(), got.Status, got.Reference, len(got.Sources)); g != want {
			t.Errorf("%s = %q, want %q", id, g, want)
		}
	}
	q, err := s.ListQuarantine(ctx, "mpesa_conflict", 10)
	if err != nil || len(q) != 3 {
		t.Fatalf("quarantine = %+v, %v", q, err)
	}
}

// batchDayApart: times a day apart or less agree; more is a conflict.
func batchDayApart(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	base := charge(t, "D1", "1")
	base.OccurredAt = T0.Add(123456 * time.Microsecond)
	day, later := base, base
	day.OccurredAt = base.OccurredAt.Add(-24 * time.Hour)
	later.OccurredAt = base.OccurredAt.Add(24*time.Hour + time.Microsecond)
	c, err := s.UpsertProviderTxns(ctx, []ledger.Sighting{
		{Txn: base, Source: ledger.Source{Channel: "api", Ref: "1", ReceivedAt: T0}},
		{Txn: day, Source: ledger.Source{Channel: "api", Ref: "2", ReceivedAt: T0}},
		{Txn: later, Source: ledger.Source{Channel: "api", Ref: "3", ReceivedAt: T0}},
	})
	if err != nil || c.NewSources != 2 || len(c.Conflicts) != 1 || c.Conflicts[0].Index != 2 ||
		!strings.Contains(c.Conflicts[0].Reason, "time ") {
		t.Fatalf("counts = %+v, %v", c, err)
	}
}

func batchInvalid(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	bad := charge(t, "B2", "1")
	bad.Type = "gift"
	_, err := s.UpsertProviderTxns(ctx, []ledger.Sighting{
		{Txn: charge(t, "B1", "1"), Source: ledger.Source{Channel: "api", Ref: "1", ReceivedAt: T0}},
		{Txn: bad, Source: ledger.Source{Channel: "api", Ref: "2", ReceivedAt: T0}},
	})
	var se *ledger.SightingError
	var fe *ledger.FieldError
	if !errors.As(err, &se) || se.Index != 1 || !errors.As(err, &fe) || fe.Field != "type" {
		t.Fatalf("err = %v", err)
	}
	if _, err := s.GetProviderTxn(ctx, "mpesa", "B1"); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("half a batch stored: %v", err)
	}
}

func batchWholeOrNothing(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	boom := errors.New("boom")
	err := s.InTx(ctx, func(tx ledger.Tx) error {
		for i := range 3 {
			if _, err := tx.UpsertProviderTxns(ctx, []ledger.Sighting{{Txn: charge(t, fmt.Sprintf("W%d", i), "1"),
				Source: ledger.Source{Channel: "statement", Ref: fmt.Sprint(i), ReceivedAt: T0}}}); err != nil {
				return err
			}
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if n := countTxns(t, s, "mpesa"); n != 0 {
		t.Fatalf("rolled back batches left %d transactions", n)
	}
}

func countTxns(t *testing.T, s ledger.Store, provider string) int {
	t.Helper()
	n := 0
	err := s.ListProviderTxns(context.Background(), ledger.TxnFilter{Provider: provider, From: T0.AddDate(-1, 0, 0), To: T0.AddDate(1, 0, 0)},
		func(ledger.ProviderTxn) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// batchAsOneByOne records random sightings of a few ids once as one batch
// and once one by one, on two stores, and compares the books.
func batchAsOneByOne(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("LEDGERTEST_SEED"), 10, 64); err == nil {
		seed = v
	}
	rng := rand.New(rand.NewPCG(11, seed))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	var batch []ledger.Sighting
	for i := range 300 {
		x := ledger.ProviderTxn{Provider: "mpesa", ID: fmt.Sprintf("R%d", rng.IntN(40)),
			Type:   ledger.TxnType(pick(append(slices.Repeat([]string{"charge"}, 20), "refund")...)),
			Status: ledger.TxnStatus(pick("pending", "pending", "succeeded", "succeeded", "succeeded", "failed")),
			Amount: kes(t, pick(append(slices.Repeat([]string{"10"}, 20), "11")...)), OccurredAt: T0.Add(time.Duration(rng.IntN(26)) * time.Hour),
			Reference: pick("", "", "ref-a", "ref-b"), ProviderRef: pick("", "pr-a", "pr-b"),
			Counterparty: pick("", "2547****0001"), LinkedID: pick("", "", "", "L1")}
		src := ledger.Source{Channel: pick("api", "statement"), Ref: fmt.Sprint(rng.IntN(5)), Raw: []byte(fmt.Sprint(i % 7)),
			ReceivedAt: T0.Add(time.Duration(i) * time.Second)}
		batch = append(batch, ledger.Sighting{Txn: x, Source: src})
	}
	// Each store gets the sightings twice (a re-import): one by one, in
	// batches of 64 (the first batch meets stored rows of later ones), and
	// in batches of 64 inside one transaction per pass (where a store may
	// carry what it learnt from a batch to the next).
	one, all, intx := newStore(t), newStore(t), newStore(t)
	for pass := range 2 {
		var byOne ledger.UpsertCounts
		for i, s := range batch {
			c, err := one.UpsertProviderTxns(ctx, []ledger.Sighting{s})
			if err != nil {
				t.Fatal(err)
			}
			for j := range c.Conflicts {
				c.Conflicts[j].Index = i
			}
			byOne.Add(c)
		}
		inBatches := func(w interface {
			UpsertProviderTxns(context.Context, []ledger.Sighting) (ledger.UpsertCounts, error)
		}) ledger.UpsertCounts {
			var sum ledger.UpsertCounts
			for lo := 0; lo < len(batch); lo += 64 {
				c, err := w.UpsertProviderTxns(ctx, batch[lo:min(lo+64, len(batch))])
				if err != nil {
					t.Fatal(err)
				}
				for i := range c.Conflicts {
					c.Conflicts[i].Index += lo
				}
				sum.Add(c)
			}
			return sum
		}
		got := inBatches(all)
		var gotTx ledger.UpsertCounts
		if err := intx.InTx(ctx, func(tx ledger.Tx) error { gotTx = inBatches(tx); return nil }); err != nil {
			t.Fatal(err)
		}
		w := fmt.Sprintf("%+v", byOne)
		if g := fmt.Sprintf("%+v", got); g != w {
			t.Fatalf("seed %d pass %d: counts in batches:\n%s\none by one:\n%s", seed, pass, g, w)
		}
		if g := fmt.Sprintf("%+v", gotTx); g != w {
			t.Fatalf("seed %d pass %d: counts in batches in a transaction:\n%s\none by one:\n%s", seed, pass, g, w)
		}
		if pass == 1 && (byOne.NewTxns != 0 || byOne.NewSources != 0) {
			t.Fatalf("seed %d: the second pass added %+v", seed, byOne)
		}
	}
	if g, w := DumpBooks(t, all), DumpBooks(t, one); g != w {
		t.Fatalf("seed %d: books in batches:\n%s\none by one:\n%s", seed, g, w)
	}
	if g, w := DumpBooks(t, intx), DumpBooks(t, one); g != w {
		t.Fatalf("seed %d: books in batches in a transaction:\n%s\none by one:\n%s", seed, g, w)
	}
}

// DumpBooks renders the books of provider mpesa: transactions, their
// sources and the quarantined conflicts, for comparing two stores.
func DumpBooks(t *testing.T, s ledger.Store) string {
	t.Helper()
	return DumpProviderBooks(t, s, "mpesa")
}

// DumpProviderBooks renders the books of provider: its transactions that
// occurred within a year of T0, their sources and its quarantined
// conflicts, for comparing two stores or a store and a TxnModel.
func DumpProviderBooks(t testing.TB, s ledger.Store, provider string) string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	err := s.ListProviderTxns(ctx, ledger.TxnFilter{Provider: provider, From: T0.AddDate(-1, 0, 0), To: T0.AddDate(1, 0, 0)},
		func(x ledger.ProviderTxn) error { ids = append(ids, x.ID); return nil })
	if err != nil {
		t.Fatal(err)
	}
	txns, err := s.GetProviderTxns(ctx, provider, ids)
	if err != nil {
		t.Fatal(err)
	}
	q, err := s.ListQuarantine(ctx, provider+"_conflict", 1000000)
	if err != nil {
		t.Fatal(err)
	}
	return renderBooks(txns, q)
}

// renderBooks renders transactions (sorted by id here, their sources as
// given) and quarantined conflicts (sorted).
func renderBooks(txns []ledger.ProviderTxn, q []ledger.QuarantineItem) string {
	slices.SortFunc(txns, func(a, b ledger.ProviderTxn) int { return strings.Compare(a.ID, b.ID) })
	var b strings.Builder
	for _, x := range txns {
		fmt.Fprintf(&b, "%s %s %s %s %s|%s|%s|%s|%s %s %s %s %s %s\n", x.ID, x.Type, x.Status, x.Amount.Value.String(),
			x.Amount.Currency, x.OccurredAt.Format(time.RFC3339Nano), x.Reference, x.ProviderRef, x.Counterparty,
			x.LinkedID, x.Settlement.Value.String()+" "+x.Settlement.Currency, x.ExchangeRate,
			x.FirstSeenAt.Format(time.RFC3339Nano), x.UpdatedAt.Format(time.RFC3339Nano))
		for _, src := range x.Sources {
			fmt.Fprintf(&b, "  %s %s %q %s\n", src.Channel, src.Ref, src.Raw, src.ReceivedAt.Format(time.RFC3339Nano))
		}
	}
	var qs []string
	for _, it := range q {
		qs = append(qs, fmt.Sprintf("%s|%s|%s|%s|%s", it.Origin, it.Field, it.Reason, it.Raw, it.At.Format(time.RFC3339Nano)))
	}
	slices.Sort(qs)
	b.WriteString(strings.Join(qs, "\n"))
	return b.String()
}
