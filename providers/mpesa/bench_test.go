package mpesa

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

func BenchmarkParseCallback(b *testing.B) {
	for _, name := range []string{"stk_success.json", "c2b_production.json", "b2c_success.json", "status_production.json"} {
		body := readFixture(b, "testdata/callbacks/"+name)
		b.Run(strings.TrimSuffix(name, ".json"), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := (CallbackParser{}).ParseCallback(body, "callback:1", received); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseStatement(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(portalHeader)
	const rows = 10000
	for i := range rows {
		fmt.Fprintf(&buf, "SB%08dK,06-02-2024 17:52:04,,Pay Bill from 2547****0845 - PETER K Acc. INV-%d,Completed,\"1,%03d.00\",,,true,Pay Bill Online,2547****0845 - PETER K,,INV-%d\n", i, i, i%1000, i)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := StatementParser{}.ParseStatement(bytes.NewReader(data), "b.csv", func(providers.Sighting) error { n++; return nil },
			func(pe *ledger.ParseError, _ []byte) error { return pe })
		if err != nil || n != rows {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows)/float64(b.N), "ns/line")
}

// BenchmarkDeliver measures one callback through the intake (store, then
// interpret in one transaction) on each engine: first deliveries and
// duplicates.
func BenchmarkDeliver(b *testing.B) {
	for _, e := range dbtest.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			s := e.New(b)
			proc := &intake.Processor{Store: s, Clock: func() time.Time { return t0 }}
			ctx := context.Background()
			body := func(i int) []byte {
				return []byte(fmt.Sprintf(`{"TransactionType":"Pay Bill","TransID":"SB%08dX","TransTime":"20240206175204","TransAmount":"1.00","BusinessShortCode":"4130669","BillRefNumber":"peter","MSISDN":"2547 ***** 845","FirstName":"PETER"}`, i))
			}
			b.Run("new", func(b *testing.B) {
				i := 0
				for b.Loop() {
					i++
					if _, err := proc.Deliver(ctx, intake.Delivery{Provider: Provider, Parser: CallbackParser{}, Body: body(i)}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("duplicate", func(b *testing.B) {
				dup := body(1)
				for b.Loop() {
					if _, err := proc.Deliver(ctx, intake.Delivery{Provider: Provider, Parser: CallbackParser{}, Body: dup}); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
