package intentcsv_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
	"github.com/reconcilehq/reconcile/money"
)

// FuzzRead checks that any input parses without panicking, that every
// accepted row has a currency, a time and an amount at its currency's scale,
// and that every rejection names a line.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"good.csv", "bad.csv", "unknown-column.csv"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("key,provider,amount,currency,status,created_at\n\"unterminated,mpesa\n"))
	f.Add([]byte("key,provider,amount,currency,status,created_at,Amount\nk1,mpesa,10,KES,succeeded,2026-11-02T09:30:00Z,9\n"))
	f.Add([]byte("key,provider,amount,currency,status,created_at\nk1,mpesa,10,USD,succeeded,2026-11-02T09:30:00Z\n"))
	f.Add([]byte("\xff\xfek\x00e\x00y\x00\n\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = intentcsv.Read(bytes.NewReader(data), "fuzz.csv", func(r intentcsv.Row) error {
			exp, err := money.Exponent(r.Intent.Amount.Currency)
			if err != nil {
				t.Fatalf("accepted row without a known currency: %+v", r)
			}
			if r.Intent.CreatedAt.IsZero() || r.Line < 2 {
				t.Fatalf("accepted row without a time or line: %+v", r)
			}
			if -r.Intent.Amount.Value.Exponent() > exp {
				t.Fatalf("accepted amount %s beyond %s scale", r.Intent.Amount.Value, r.Intent.Amount.Currency)
			}
			// Rendering the accepted row and reading it back gives the same intent.
			csv := strings.Join(intentcsv.Required, ",") + "\n" + r.Intent.Key + "," + r.Intent.Provider + "," +
				r.Intent.Amount.Text() + "," + r.Intent.Amount.Currency + "," + string(r.Intent.State) + "," +
				r.Intent.CreatedAt.Format("2006-01-02T15:04:05.999999999Z07:00") + "\n"
			if strings.ContainsAny(r.Intent.Key+r.Intent.Provider, ",\"\r\n") {
				return nil
			}
			again := 0
			_ = intentcsv.Read(strings.NewReader(csv), "again.csv", func(r2 intentcsv.Row) error {
				again++
				if !r2.Intent.Amount.Equal(r.Intent.Amount) || !r2.Intent.CreatedAt.Equal(r.Intent.CreatedAt) || r2.Intent.Key != r.Intent.Key {
					t.Fatalf("round trip changed the row: %+v -> %+v", r.Intent, r2.Intent)
				}
				return nil
			}, func(p *ledger.ParseError, _ []byte) error {
				t.Fatalf("round trip rejected: %v (%q)", p, csv)
				return nil
			})
			if again != 1 {
				t.Fatalf("round trip read %d rows from %q", again, csv)
			}
			return nil
		}, func(p *ledger.ParseError, _ []byte) error {
			if p.Line < 1 || p.File != "fuzz.csv" {
				t.Fatalf("rejection without a line: %v", p)
			}
			return nil
		})
	})
}
