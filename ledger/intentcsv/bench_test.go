package intentcsv_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
)

// BenchmarkRead reads an intents CSV shaped like the ones bench/import.sh
// generates.
func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("key,provider,amount,currency,status,created_at,reference,provider_refs,customer,updated_at\n")
	const rows = 10000
	at := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		fmt.Fprintf(&buf, "charge:order-%d,mpesa,%d,KES,succeeded,%s,INV%d,SB%08d,2547%08d,\n",
			i, 100+i%5000, at.Add(time.Duration(i)*8*time.Second).Format(time.RFC3339), i, i, i)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := intentcsv.Read(bytes.NewReader(data), "b.csv", nil, func(intentcsv.Row) error { n++; return nil },
			func(pe *ledger.ParseError, _ []byte) error { return pe })
		if err != nil || n != rows {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows)/float64(b.N), "ns/line")
}
