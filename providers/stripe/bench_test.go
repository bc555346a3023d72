package stripe

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/quicktime"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
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

// TestNetOfAgreesWithSub: netOf's comparison of coefficients agrees with
// the decimal subtraction it stands for, in every exponent and size.
func TestNetOfAgreesWithSub(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(25, 26))
	quick := 0
	for range 50000 {
		// Amounts as a report writes them, parsed as the parser parses
		// them.
		amount := func() string {
			v := decimal.New(r.Int64N(2000)-500, -int32(r.IntN(3)))
			switch r.IntN(10) {
			case 0:
				v = decimal.New(r.Int64(), -int32(r.IntN(3)))
			case 1:
				v = decimal.New(r.Int64N(1e17), -2)
			case 2:
				v = decimal.RequireFromString("98765432109876543210987654321").Add(decimal.New(r.Int64N(3), 0))
			}
			return v.String()
		}
		gs, fs, ns := amount(), amount(), amount()
		if r.IntN(2) == 0 {
			ns = decimal.RequireFromString(gs).Sub(decimal.RequireFromString(fs)).String()
			if r.IntN(2) == 0 {
				ns = decimal.RequireFromString(ns).StringFixed(2)
			}
		}
		parse := func(s string) money.Amount {
			a, err := money.Parse(s, "USD")
			if err != nil {
				a = money.Amount{Value: decimal.RequireFromString(s), Currency: "USD"}
			}
			return a
		}
		gross, fee, net := parse(gs), parse(fs), parse(ns)
		short := max(len(gs), len(fs), len(ns)) <= maxShortAmount
		if got, want := netOf(net, gross, fee, short), net.Value.Equal(gross.Value.Sub(fee.Value)); got != want {
			t.Fatalf("netOf(%s, %s, %s) = %v, want %v", net.Value, gross.Value, fee.Value, got, want)
		}
		if e := net.Value.Exponent(); short && gross.Value.Exponent() == e && fee.Value.Exponent() == e {
			quick++
		}
	}
	if quick < 1000 {
		t.Fatalf("only %d comparisons of one exponent", quick)
	}
}
