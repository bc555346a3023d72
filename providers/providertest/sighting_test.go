package providertest_test

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/providertest"
)

// fatal records whether CheckSighting gave up on the test.
type fatal struct {
	testing.TB
	failed bool
}

func (f *fatal) Helper()               { f.TB.Helper() }
func (f *fatal) Fatalf(string, ...any) { f.failed = true }

func TestCheckSighting(t *testing.T) {
	t.Parallel()
	good := func() providers.Sighting {
		return providers.Sighting{
			Txn: ledger.ProviderTxn{Provider: "stripe", ID: "ch_1", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
				Amount:     money.Amount{Value: decimal.RequireFromString("12.50"), Currency: "EUR"},
				OccurredAt: time.Date(2024, 11, 23, 14, 0, 0, 0, time.UTC)},
			Source: ledger.Source{Channel: "api", Ref: "ch_1"},
		}
	}
	for name, spoil := range map[string]func(*providers.Sighting){
		"good":                func(*providers.Sighting) {},
		"no id":               func(s *providers.Sighting) { s.Txn.ID = "" },
		"unknown currency":    func(s *providers.Sighting) { s.Txn.Amount.Currency = "XXY" },
		"too many decimals":   func(s *providers.Sighting) { s.Txn.Amount.Value = decimal.RequireFromString("12.505") },
		"not UTC":             func(s *providers.Sighting) { s.Txn.OccurredAt = s.Txn.OccurredAt.In(time.FixedZone("EAT", 3*3600)) },
		"no source":           func(s *providers.Sighting) { s.Source.Ref = "" },
		"settled in the same": func(s *providers.Sighting) { s.Txn.Settlement = s.Txn.Amount },
		"settled at bad scale": func(s *providers.Sighting) {
			s.Txn.Settlement = money.Amount{Value: decimal.RequireFromString("1.5"), Currency: "JPY"}
		},
		"settled below zero": func(s *providers.Sighting) {
			s.Txn.Settlement = money.Amount{Value: decimal.RequireFromString("-13.40"), Currency: "USD"}
		},
		"settled in another one": func(s *providers.Sighting) {
			s.Txn.Settlement = money.Amount{Value: decimal.RequireFromString("13.40"), Currency: "USD"}
		},
	} {
		s := good()
		spoil(&s)
		f := &fatal{TB: t}
		providertest.CheckSighting(f, s)
		if want := name != "good" && name != "settled in another one"; f.failed != want {
			t.Errorf("%s: failed %v, want %v", name, f.failed, want)
		}
	}
}
