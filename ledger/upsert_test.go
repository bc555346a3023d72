package ledger_test

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
	"github.com/reconcilehq/reconcile/money"
)

var t0 = ledgertest.T0

func kes(s string) money.Amount {
	a, err := money.Parse(s, "KES")
	if err != nil {
		panic(err)
	}
	return a
}

func txn(id, amount string, status ledger.TxnStatus) ledger.ProviderTxn {
	return ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge, Status: status, Amount: kes(amount), OccurredAt: t0}
}

func seen(t ledger.ProviderTxn, ref string, minutes int) ledger.Sighting {
	return ledger.Sighting{Txn: t, Source: ledger.Source{Channel: "statement", Ref: ref, Raw: []byte(ref),
		ReceivedAt: t0.Add(time.Duration(minutes) * time.Minute)}}
}

// verdict renders a verdict for the table below.
func verdict(v ledger.SightingVerdict) string {
	if v.Conflict != "" {
		return "conflict: " + strings.TrimPrefix(v.Conflict, "conflicts with the stored transaction: ")
	}
	var parts []string
	if v.Creates {
		parts = append(parts, "creates")
	}
	if v.Fills != 0 {
		parts = append(parts, "fills "+v.Fills.String())
	}
	if v.NewSource {
		parts = append(parts, "source")
	}
	if v.Known() {
		parts = append(parts, "known")
	}
	return strings.Join(parts, ", ")
}

// TestClassifySightings decides about a batch that meets stored
// transactions and repeats its own keys, sighting by sighting.
func TestClassifySightings(t *testing.T) {
	t.Parallel()
	pending := txn("P1", "7", ledger.TxnPending)
	succeeded, failed := pending, pending
	succeeded.Status, failed.Status = ledger.TxnSucceeded, ledger.TxnFailed
	withRef := func(x ledger.ProviderTxn, ref string) ledger.ProviderTxn { x.Reference = ref; return x }
	at := func(x ledger.ProviderTxn, d time.Duration) ledger.ProviderTxn {
		x.OccurredAt = x.OccurredAt.Add(d)
		return x
	}
	settled := func(x ledger.ProviderTxn, value, currency string) ledger.ProviderTxn {
		x.Settlement, x.ExchangeRate = money.Amount{Value: decimal.RequireFromString(value), Currency: currency}, "0.5"
		return x
	}
	// K1 and S1 are stored, K1 with its source k.
	stored := map[string]ledger.Probe{
		"K1": {Found: true, Txn: ledger.StoredTxn{Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: kes("5"),
			OccurredAt: t0, Empty: ledger.FillReference | ledger.FillProviderRef | ledger.FillCounterparty | ledger.FillLinkedID}},
		"S1": {Found: true, Txn: ledger.StoredTxn{Type: ledger.TxnCharge, Status: ledger.TxnPending, Amount: kes("9"),
			OccurredAt: t0, Settlement: money.Amount{Value: decimal.New(3, 0), Currency: "USD"}}},
	}
	cases := []struct {
		s    ledger.Sighting
		want string
	}{
		{seen(txn("A1", "100", ledger.TxnSucceeded), "f:1", 1), "creates, source"},
		{seen(txn("A1", "100", ledger.TxnSucceeded), "f:1", 1), "known"},
		{seen(txn("A1", "100.00", ledger.TxnPending), "f:2", 1), "source"},
		{seen(pending, "f:3", 2), "creates, source"},
		{seen(succeeded, "f:4", 3), "fills status, source"},
		{seen(failed, "f:5", 4), "conflict: status failed, stored succeeded"},
		{seen(pending, "f:6", 4), "source"},
		{seen(txn("C1", "30", ledger.TxnSucceeded), "f:7", 5), "creates, source"},
		{seen(txn("C1", "31", ledger.TxnSucceeded), "f:8", 5), "conflict: amount KES 31.00, stored KES 30.00"},
		{seen(withRef(txn("K1", "5", ledger.TxnSucceeded), "r1"), "f:9", 6), "fills reference, source"},
		{seen(withRef(txn("K1", "5", ledger.TxnSucceeded), "r2"), "f:10", 7), "source"},
		{seen(withRef(txn("K1", "6", ledger.TxnSucceeded), "r0"), "f:11", 8), "conflict: amount KES 6.00, stored KES 5.00"},
		{seen(txn("K1", "5", ledger.TxnPending), "k", 8), "known"},
		{seen(at(txn("K1", "5", ledger.TxnSucceeded), 24*time.Hour), "k", 8), "known"},
		{seen(at(txn("K1", "5", ledger.TxnSucceeded), 24*time.Hour+999*time.Nanosecond), "k", 8), "known"},
		{seen(at(txn("K1", "5", ledger.TxnSucceeded), -24*time.Hour-time.Microsecond), "k", 8),
			"conflict: time 2026-11-01T09:29:59Z, stored 2026-11-02T09:30:00Z"},
		{seen(settled(txn("K1", "5", ledger.TxnSucceeded), "2", "USD"), "k", 9), "fills settlement"},
		{seen(settled(txn("K1", "5", ledger.TxnSucceeded), "4", "EUR"), "k2", 9), "source"},
		{seen(settled(txn("S1", "9", ledger.TxnPending), "3.00", "USD"), "s", 10), "known"},
		{seen(settled(txn("S1", "9", ledger.TxnFailed), "4", "USD"), "s2", 10), "conflict: settlement USD 4.00, stored USD 3.00"},
		{seen(txn("S1", "9", ledger.TxnFailed), "s3", 11), "fills status, source"},
		{seen(txn("S1", "9", ledger.TxnSucceeded), "s", 12), "conflict: status succeeded, stored failed"},
	}
	batch := make([]ledger.Sighting, len(cases))
	probes := make([]ledger.Probe, len(cases))
	for i, c := range cases {
		batch[i] = c.s
		probes[i] = stored[c.s.Txn.ID]
		probes[i].Recorded = probes[i].Found && (c.s.Source.Ref == "k" || c.s.Source.Ref == "s")
	}
	if err := ledger.ValidateSightings(batch); err != nil {
		t.Fatal(err)
	}
	plan := ledger.ClassifySightings(batch, probes)
	for i, c := range cases {
		if got := verdict(plan.Verdicts[i]); got != c.want {
			t.Errorf("sighting %d (%s %s): %s, want %s", i, c.s.Txn.ID, c.s.Source.Ref, got, c.want)
		}
	}
	var writes []string
	for _, w := range plan.Txns {
		x := w.Txn(batch)
		writes = append(writes, fmt.Sprintf("%s create=%v fills=%s status=%s ref=%q settlement=%s updated=%s", x.ID, w.Create,
			w.Fills, x.Status, x.Reference, x.Settlement, x.UpdatedAt.Sub(t0)))
	}
	want := []string{
		`A1 create=true fills=- status=succeeded ref="" settlement=- updated=1m0s`,
		`C1 create=true fills=- status=succeeded ref="" settlement=- updated=5m0s`,
		`K1 create=false fills=reference|settlement status= ref="r1" settlement=USD 2.00 updated=9m0s`,
		`P1 create=true fills=status status=succeeded ref="" settlement=- updated=3m0s`,
		`S1 create=false fills=status status=failed ref="" settlement=- updated=11m0s`,
	}
	if !slices.Equal(writes, want) {
		t.Errorf("writes:\n%s\nwant:\n%s", strings.Join(writes, "\n"), strings.Join(want, "\n"))
	}
	if c := plan.Counts(); c.NewTxns != 3 || c.NewSources != 10 || c.Duplicates != 6 || len(c.Conflicts) != 6 {
		t.Errorf("counts %+v", c)
	}
	if plan.Found != 13 {
		t.Errorf("found %d", plan.Found)
	}
}

// TestClassifySightingsAsModel records random batches (keys repeated
// within and across batches, re-sightings that agree, fill, contradict or
// repeat a stored source, whole batches sent again) into two TxnModels: one
// by its own Record, the other by its probe, ClassifySightings and the
// plan applied. Counts and books must agree after every batch, and the
// plans must hold their invariants.
func TestClassifySightingsAsModel(t *testing.T) {
	t.Parallel()
	seed := ledgertest.Seed(t)
	for round := range 40 {
		g := ledgertest.NewSightingGen(seed, uint64(round), 1+round%5*6)
		byRecord, byPlan := ledgertest.NewTxnModel(), ledgertest.NewTxnModel()
		var sent [][]ledger.Sighting
		for b := range 30 {
			batch := g.Next(sent, 3, 12, 60)
			sent = append(sent, batch)
			if err := ledger.ValidateSightings(batch); err != nil {
				t.Fatal(err)
			}
			probes := byPlan.Probe(batch)
			plan := ledger.ClassifySightings(batch, probes)
			checkPlan(t, batch, plan)
			if plan.Found == 0 {
				if guessed := ledger.ClassifySightings(batch, nil); !reflect.DeepEqual(guessed, plan) {
					t.Fatalf("round %d batch %d: nothing found, yet the plan without probes differs", round, b)
				}
			}
			byPlan.Apply(batch, plan)
			want := byRecord.Record(batch)
			if g, w := fmt.Sprintf("%+v", plan.Counts()), fmt.Sprintf("%+v", want); g != w {
				t.Fatalf("seed %d round %d batch %d: counts\n%s\nrecorded one by one:\n%s", seed, round, b, g, w)
			}
			for _, p := range ledgertest.GenProviders {
				if g, w := byPlan.Dump(p), byRecord.Dump(p); g != w {
					t.Fatalf("seed %d round %d batch %d: books of %s\n%s\nrecorded one by one:\n%s", seed, round, b, p, g, w)
				}
			}
		}
	}
}

// checkPlan checks what any plan must hold: transactions and sources in
// key order, one write per created transaction, from its first sighting,
// and the verdicts' fills those of the writes.
func checkPlan(t *testing.T, batch []ledger.Sighting, plan ledger.UpsertPlan) {
	t.Helper()
	key := func(i int) string { return batch[i].Txn.Provider + "\x00" + batch[i].Txn.ID }
	if !slices.IsSortedFunc(plan.Txns, func(a, b ledger.TxnWrite) int { return cmp.Compare(key(a.Index), key(b.Index)) }) {
		t.Fatal("transactions out of key order")
	}
	if !slices.IsSortedFunc(plan.Sources, func(a, b int) int {
		return cmp.Compare(key(a)+"\x00"+batch[a].Source.Channel+"\x00"+batch[a].Source.Ref,
			key(b)+"\x00"+batch[b].Source.Channel+"\x00"+batch[b].Source.Ref)
	}) {
		t.Fatal("sources out of key order")
	}
	fills := map[string]ledger.TxnFields{}
	for i, v := range plan.Verdicts {
		fills[key(i)] |= v.Fills
		if v.Creates {
			for j := range i {
				if key(j) == key(i) {
					t.Fatalf("sighting %d creates a transaction sighting %d named first", i, j)
				}
			}
		}
		if v.Conflict != "" && (v.Creates || v.Fills != 0 || v.NewSource) {
			t.Fatalf("sighting %d contradicts and writes: %+v", i, v)
		}
		if v.NewSource != slices.Contains(plan.Sources, i) {
			t.Fatalf("sighting %d: verdict %+v, sources %v", i, v, plan.Sources)
		}
	}
	for _, w := range plan.Txns {
		if w.Create != plan.Verdicts[w.Index].Creates || w.Fills != fills[key(w.Index)] {
			t.Fatalf("write %+v, verdict %+v, fills %s", w, plan.Verdicts[w.Index], fills[key(w.Index)])
		}
		for f := ledger.FillReference; f <= ledger.FillSettlement; f <<= 1 {
			if from := w.From(f); (from >= 0) != (w.Fills&f != 0) || (from >= 0 && plan.Verdicts[from].Fills&f == 0) {
				t.Fatalf("write %+v: field %s from %d", w, f, from)
			}
		}
	}
}

// BenchmarkClassifySightings decides about a batch of a first import (no
// probe: every sighting new) and of a re-import (every sighting found and
// recorded).
func BenchmarkClassifySightings(b *testing.B) {
	const n = 10000
	batch := make([]ledger.Sighting, n)
	probes := make([]ledger.Probe, n)
	for i := range batch {
		x := txn(fmt.Sprintf("SB%07d", (i*7919)%n), "1500", ledger.TxnSucceeded)
		x.Reference, x.Counterparty = "INV-1", "2547****0001"
		batch[i] = seen(x, fmt.Sprint("f:", i), 0)
		probes[i] = ledger.Probe{Found: true, Recorded: true, Txn: ledger.StoredTxn{Type: x.Type, Status: x.Status,
			Amount: x.Amount, OccurredAt: x.OccurredAt, Empty: ledger.FillProviderRef | ledger.FillLinkedID}}
	}
	for _, c := range []struct {
		name   string
		probes []ledger.Probe
	}{{"new", nil}, {"known", probes}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if p := ledger.ClassifySightings(batch, c.probes); len(p.Verdicts) != n {
					b.Fatal(len(p.Verdicts))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(b.N), "ns/line")
		})
	}
}

// ExampleClassifySightings decides about a statement line of a
// transaction a callback recorded (it fills the reference and adds the
// statement as a source) and a second line of the same receipt with
// another amount (a contradiction).
func ExampleClassifySightings() {
	at := time.Date(2026, 3, 14, 7, 2, 0, 0, time.UTC)
	line := func(n int, amount string) ledger.Sighting {
		return ledger.Sighting{
			Txn: ledger.ProviderTxn{Provider: "mpesa", ID: "SCE2EF4GH5", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
				Amount: kes(amount), OccurredAt: at, Reference: "INV-5002"},
			Source: ledger.Source{Channel: "statement", Ref: fmt.Sprint("statement.csv:", n), ReceivedAt: at.Add(time.Hour)},
		}
	}
	batch := []ledger.Sighting{line(2, "2300"), line(3, "2400")}
	stored := ledger.Probe{Found: true, Txn: ledger.StoredTxn{Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: kes("2300"), OccurredAt: at, Empty: ledger.FillReference | ledger.FillLinkedID}}
	plan := ledger.ClassifySightings(batch, []ledger.Probe{stored, stored})
	for i, v := range plan.Verdicts {
		fmt.Printf("line %d: fills %s, new source %v, conflict %q\n", i+2, v.Fills, v.NewSource, v.Conflict)
	}
	fmt.Printf("%+v\n", plan.Counts())
	// Output:
	// line 2: fills reference, new source true, conflict ""
	// line 3: fills -, new source false, conflict "conflicts with the stored transaction: amount KES 2400.00, stored KES 2300.00"
	// {NewTxns:0 NewSources:1 Duplicates:0 Conflicts:[{Index:1 Reason:conflicts with the stored transaction: amount KES 2400.00, stored KES 2300.00}]}
}
