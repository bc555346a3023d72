package console

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// searchBooks answers the search's reads from memory.
type searchBooks struct {
	intents []ledger.Intent
	txns    []ledger.ProviderTxn
}

func (s searchBooks) GetIntents(_ context.Context, keys []string) ([]ledger.Intent, error) {
	var out []ledger.Intent
	for _, in := range s.intents {
		for _, k := range keys {
			if in.Key == k {
				out = append(out, in)
			}
		}
	}
	return out, nil
}

func (s searchBooks) GetProviderTxns(_ context.Context, provider string, ids []string) ([]ledger.ProviderTxn, error) {
	var out []ledger.ProviderTxn
	for _, t := range s.txns {
		for _, id := range ids {
			if t.Provider == provider && t.ID == id {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

var searchList = []ledger.Finding{
	{ID: "f_dup", Provider: "mpesa", IntentKey: "charge:order-4471", ProviderTxnIDs: []string{"SKL1AAAA01", "SKL1AAAA02"}, Counterparty: "2547****0845"},
	{ID: "f_unknown", Provider: "mpesa", ProviderTxnIDs: []string{"SKL2BBBB01"}},
	{ID: "f_stuck", Provider: "stripe", IntentKey: "charge:inv-9"},
}

var searchData = searchBooks{
	intents: []ledger.Intent{
		{IntentParams: ledger.IntentParams{Key: "charge:order-4471", Reference: "ORDER4471", Customer: "254712340845"}},
		{IntentParams: ledger.IntentParams{Key: "charge:inv-9", Reference: "INV-9", Customer: "ann@example.com"}},
	},
	txns: []ledger.ProviderTxn{{Provider: "mpesa", ID: "SKL2BBBB01", Reference: "ORDER 4417", Counterparty: "2547****0845 - JOHN"}},
}

// FuzzFindingsSearch: whatever is typed in the search box and the filter,
// the form is read without panicking, the search keeps a subset of the
// list in its order, and an exact receipt always finds its finding.
func FuzzFindingsSearch(f *testing.F) {
	for _, q := range []string{"SKL2BBBB01", "skl1aaaa02", "0712340845", "+254 712 340 845", "2547****0845", "order-4471",
		"Order 4471", "ORDER-4417", "inv 9", "ANN@example.com", "f_dup", "", " ", "***", "@", "0", "ＯＲＤＥＲ４４７１", "\x00", strings.Repeat("9", 300)} {
		f.Add(q, "all", "2026-11-03")
	}
	f.Add("x", "closed", "yesterday")
	zones := map[string]*time.Location{"mpesa": time.UTC, "stripe": time.UTC}
	f.Fuzz(func(t *testing.T, q, status, from string) {
		form, _, _, problems := parseFindingsForm(url.Values{"q": {q}, "status": {status}, "from": {from}, "provider": {"mpesa"}}, zones, nil)
		if len(form.Q) > 200 && len(problems) == 0 {
			t.Fatalf("a search of %d characters is accepted", len(form.Q))
		}
		got, err := findingsSearch(context.Background(), searchData, searchList, q)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for _, g := range got {
			for i < len(searchList) && searchList[i].ID != g.ID {
				i++
			}
			if i == len(searchList) {
				t.Fatalf("q=%q: %v is not a subset of the list in its order", q, got)
			}
		}
		for _, want := range searchList {
			for _, id := range want.ProviderTxnIDs {
				if strings.EqualFold(strings.TrimSpace(q), id) && !containsID(got, want.ID) {
					t.Fatalf("q=%q does not find %s", q, want.ID)
				}
			}
		}
	})
}

func containsID(fs []ledger.Finding, id string) bool {
	for _, f := range fs {
		if f.ID == id {
			return true
		}
	}
	return false
}

// BenchmarkFindingsPageCharts draws the findings page's charts over the
// most findings they read (chartFindingsLimit) and 30 runs.
func BenchmarkFindingsPageCharts(b *testing.B) {
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	kinds := ledger.Kinds
	fs := make([]ledger.Finding, chartFindingsLimit)
	for i := range fs {
		st := []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged, ledger.FindingResolved}[i%3]
		cur := []string{"KES", "USD"}[i%2]
		amt, _ := money.Parse(fmt.Sprintf("%d.%02d", i%5000, i%100), cur)
		fs[i] = ledger.Finding{Kind: kinds[i%len(kinds)], Status: st, AtRisk: amt, FirstSeenAt: now.Add(-time.Duration(i%(60*24)) * time.Hour),
			ResolvedAt: now.Add(-time.Duration(i%(24*10)) * time.Hour)}
	}
	runs := make([]ledger.Run, 30)
	for i := range runs {
		runs[i] = ledger.Run{ID: int64(i + 1), Provider: "mpesa", State: ledger.RunFinished, From: now.AddDate(0, 0, -i),
			Counts: ledger.RunCounts{Transactions: 100 + i, Matched: 90 + i}}
	}
	utc := func(string) *time.Location { return time.UTC }
	b.ResetTimer()
	for range b.N {
		_ = riskCharts(fs, now, time.UTC)
		_ = ageingChart(fs, now)
		_ = matchChart(runs, utc)
	}
}
