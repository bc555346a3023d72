package demo_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/demo"
	"github.com/reconcilehq/reconcile/ledger"
)

// findingsOf lists a demo's findings as "provider kind intent txn,txn".
func findingsOf(t *testing.T, store ledger.Store) []string {
	t.Helper()
	out, err := demo.Run(context.Background(), demo.Options{Store: store, Out: io.Discard, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.Outcomes["mpesa"].Settled; len(s) != 1 {
		t.Errorf("the dead worker's M-Pesa intent was not settled by evidence: %+v", s)
	}
	var list []string
	for _, o := range out.Outcomes {
		for _, f := range o.Findings {
			list = append(list, f.Provider+" "+string(f.Kind)+" "+f.IntentKey+" "+strings.Join(f.ProviderTxnIDs, ","))
		}
	}
	slices.Sort(list)
	return list
}

// TestDemo runs the demonstration twice on SQLite and once on PostgreSQL:
// every finding kind is found, nothing else is, and every run finds the same.
func TestDemo(t *testing.T) {
	t.Parallel()
	first := findingsOf(t, dbtest.SQLite(t))
	kinds := map[string]bool{}
	for _, f := range first {
		kinds[strings.Fields(f)[1]] = true
	}
	for _, k := range ledger.Kinds {
		if !kinds[string(k)] && k != ledger.KindUnreadableRecord {
			t.Errorf("the demo shows no %s", k)
		}
	}
	// The invoice paid two days late raised a finding on its own day,
	// which the run of the day of its payment resolved: it is not among
	// them, nor is the invoice paid in two parts.
	for _, f := range first {
		if strings.Contains(f, "inv-3001") || strings.Contains(f, "inv-2001") {
			t.Errorf("a finding about an invoice paid in full: %s", f)
		}
	}
	// 14 of the day, and 6 of the bank account's week: one of each kind.
	if len(first) != 20 {
		t.Errorf("findings = %d, want 20:\n%s", len(first), strings.Join(first, "\n"))
	}
	for name, s := range map[string]ledger.Store{"sqlite again": dbtest.SQLite(t), "postgres": dbtest.Postgres(t)} {
		if again := findingsOf(t, s); !slices.Equal(again, first) {
			t.Errorf("%s found\n%s\nwant\n%s", name, strings.Join(again, "\n"), strings.Join(first, "\n"))
		}
	}
}
