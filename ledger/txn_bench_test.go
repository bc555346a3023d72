package ledger

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/money"
)

// BenchmarkValidateTxn validates a statement-like transaction, as every
// line of an import is (by its parser, the importer and the store).
func BenchmarkValidateTxn(b *testing.B) {
	t := ProviderTxn{Provider: "mpesa", ID: "SB00000001", Type: TxnCharge, Status: TxnSucceeded,
		Amount:     money.Amount{Value: decimal.New(150000, -2), Currency: "KES"},
		OccurredAt: time.Date(2024, 3, 1, 9, 30, 0, 0, time.UTC), Reference: "HSE-1", Counterparty: "2547****0001 - MARY"}
	b.ReportAllocs()
	for b.Loop() {
		if err := ValidateTxn(t); err != nil {
			b.Fatal(err)
		}
	}
}
