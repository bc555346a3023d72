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

// BenchmarkSightingsToMeet classifies a batch of new sightings, all of
// whose transactions the batch created (a first import).
func BenchmarkSightingsToMeet(b *testing.B) {
	const n = 10000
	batch := make([]Sighting, n)
	created := make(map[string]bool, n)
	for i := range batch {
		id := "SB" + decimal.NewFromInt(int64(i)).String()
		batch[i].Txn = ProviderTxn{Provider: "mpesa", ID: id}
		created[TxnKey("mpesa", id)] = true
	}
	b.ReportAllocs()
	for b.Loop() {
		if m := SightingsToMeet(batch, created); len(m) != 0 {
			b.Fatal(len(m))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n)/float64(b.N), "ns/line")
}
