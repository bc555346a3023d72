package matcher_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

func bulk(n int) scenario.Bulk {
	return scenario.Bulk{Seed: 42, Provider: "mpesa", From: time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC), N: n}
}

func bulkOptions(b scenario.Bulk) matcher.Options {
	from, to := b.Window()
	return matcher.Options{Provider: b.Provider, From: from, To: to, Now: b.Now(), Grace: b.Grace()}
}

// TestBulkCounts checks the matcher against the bulk generator's planted
// counts.
func TestBulkCounts(t *testing.T) {
	t.Parallel()
	b := bulk(30000)
	m, err := matcher.New(bulkOptions(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Intents(m.AddIntent); err != nil {
		t.Fatal(err)
	}
	if err := b.Txns(m.AddTxn); err != nil {
		t.Fatal(err)
	}
	res, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	want, settled := b.Expected()
	got := map[ledger.Kind]int{}
	for _, f := range res.Findings {
		got[f.Kind]++
	}
	for _, k := range ledger.Kinds {
		if got[k] != want[k] || want[k] == 0 {
			t.Errorf("%s: %d, want %d", k, got[k], want[k])
		}
	}
	if len(res.Settlements) != settled || res.Summary.Intents != b.N {
		t.Errorf("settled %d want %d; summary %+v", len(res.Settlements), settled, res.Summary)
	}
}

// BenchmarkMatch measures the in-memory matcher on a bulk day of
// MATCH_BENCH_N intents (default 1,000,000) and about as many transactions,
// generated before the clock starts. lines/s counts intents + transactions.
func BenchmarkMatch(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("MATCH_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	bk := bulk(n)
	intents := make([]ledger.Intent, 0, n)
	txns := make([]ledger.ProviderTxn, 0, n)
	_ = bk.Intents(func(in ledger.Intent) error { intents = append(intents, in); return nil })
	_ = bk.Txns(func(t ledger.ProviderTxn) error { txns = append(txns, t); return nil })
	b.ResetTimer()
	for b.Loop() {
		m, err := matcher.New(bulkOptions(bk))
		if err != nil {
			b.Fatal(err)
		}
		for i := range intents {
			if err := m.AddIntent(intents[i]); err != nil {
				b.Fatal(err)
			}
		}
		for i := range txns {
			if err := m.AddTxn(txns[i]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := m.Result(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(intents)+len(txns))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
