package pgstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/money"
)

// TestMinorUnitsInlined checks that PostgreSQL inlines minor_units into the
// expressions that use it (the amount_minor columns): called as a SQL
// function instead, it costs every row written tens of times more.
func TestMinorUnitsInlined(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t).(*pgstore.Store)
	rows, err := s.Pool().Query(ctx, `EXPLAIN (VERBOSE) SELECT minor_units(amount, currency) FROM intents`)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "minor_units(") || !strings.Contains(text, "trim_scale") {
		t.Fatalf("minor_units is not inlined:\n%s", text)
	}
}

// TestAmountMinorAgrees compares AmountMinor, which the COPY of large
// imports writes into amount_minor, with minor_units, which the set
// statements write, for every currency (and unknown ones) on amounts at
// the edges: trailing zeros, more decimals than the currency has, the
// limits of int64 and beyond.
func TestAmountMinorAgrees(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t).(*pgstore.Store)
	values := []string{"0", "0.00", "-0.0", "0.000000000000000000000000", "1", "-1", "1.5", "1.50", "1.05", "1.005",
		"1.0050", "1.00500000", "12345.6789", "0.0001", "0.00001", "123456789012345678", "1234567890123456789",
		"0.1234567890123456789", "9223372036854775807", "-9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "922337203685477580.7", "92233720368547758.07", "-92233720368547758.07",
		"-92233720368547758.08", "92233720368547758.08", "9223372036854775.807", "-9223372036854775.808",
		"922337203685477.5807", "922337203685477.5808", "100000000000000000000", "1e-30", "-1000000000000000000000000000000",
		"1000000000000000000000000000000.00", "99999999999999999.99", "999999999999999999.9"}
	r := rand.New(rand.NewPCG(7, 9))
	for range 300 {
		v := decimal.New(r.Int64N(1e18)-5e17, -r.Int32N(8))
		if r.IntN(3) == 0 {
			v = decimal.New(r.Int64N(1e9), r.Int32N(12))
		}
		values = append(values, v.String())
	}
	currencies := append(money.Codes(), "XXX", "", "kes", "jpy", "KWD ")
	var amounts, codes []string
	for _, c := range currencies {
		for _, v := range values {
			amounts, codes = append(amounts, v), append(codes, c)
		}
	}
	rows, err := s.Pool().Query(ctx, `SELECT a::text, c, minor_units(a, c) FROM unnest($1::numeric[], $2::text[]) AS u(a, c)`,
		amounts, codes)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var a, c string
		var want *int64
		if err := rows.Scan(&a, &c, &want); err != nil {
			t.Fatal(err)
		}
		got, ok := pgstore.AmountMinor(money.Amount{Value: decimal.RequireFromString(a), Currency: c})
		if ok != (want != nil) || (ok && got != *want) {
			w := "NULL"
			if want != nil {
				w = fmt.Sprint(*want)
			}
			t.Errorf("%s %q: AmountMinor = %d, %v; minor_units = %s", a, c, got, ok, w)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != len(amounts) {
		t.Fatalf("%d rows, want %d", n, len(amounts))
	}
}
