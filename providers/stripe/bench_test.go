package stripe

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/reconcilehq/reconcile/internal/quicktime"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// BenchmarkParseReport parses an itemized report of charges shaped like
// the ones bench/import.sh generates.
func BenchmarkParseReport(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("balance_transaction_id,created_utc,charge_created_utc,currency,gross,fee,net,reporting_category,source_id,charge_id,payment_intent_id,customer_id,customer_email,automatic_payout_id,description,payment_metadata[intent_key]\n")
	const rows = 10000
	for i := range rows {
		cents := 500 + i%50000
		fee := 30 + cents*29/1000
		fmt.Fprintf(&buf, "txn_%024d,2024-03-01 %02d:%02d:%02d,2024-03-01 %02d:%02d:00,usd,%d.%02d,%d.%02d,%d.%02d,charge,ch_%024d,ch_%024d,pi_%024d,cus_%014d,,po_%024d,\"Order %d, express\",charge:order-%d\n",
			i, i/3600%24, i/60%60, i%60, i/3600%24, i/60%60, cents/100, cents%100, fee/100, fee%100, (cents-fee)/100, (cents-fee)%100,
			i, i, i, i%100000, i/1000, i, i)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := ReportParser{}.ParseStatement(bytes.NewReader(data), "b.csv", func(providers.Sighting) error { n++; return nil },
			func(pe *ledger.ParseError, _ []byte) error { return pe })
		if err != nil || n != 2*rows { // a charge and its fee
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows)/float64(b.N), "ns/line")
}

// TestReportTimeQuickPath: report times are read by quicktime first, which
// agrees with time.ParseInLocation on reportTimeLayout only.
func TestReportTimeQuickPath(t *testing.T) {
	t.Parallel()
	if reportTimeLayout != quicktime.YearFirst {
		t.Fatalf("report times are read as %q by the quick path and as %q otherwise", quicktime.YearFirst, reportTimeLayout)
	}
}
