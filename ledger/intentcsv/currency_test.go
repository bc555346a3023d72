package intentcsv_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
)

// TestImportProviderCurrency: an M-Pesa intent in another currency than
// KES is refused, as the intents API refuses it, with its line and field,
// and quarantined.
func TestImportProviderCurrency(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := eng.New(t)
			body := "key,provider,amount,currency,status,created_at\n" +
				"charge:c1,mpesa,10,KES,succeeded,2026-11-02T09:30:00Z\n" +
				"charge:c2,mpesa,10,usd,succeeded,2026-11-02T09:30:00Z\n" +
				"charge:c3,stripe,10,USD,succeeded,2026-11-02T09:30:00Z\n"
			_, err := intentcsv.Import(ctx, s, "c.csv", strings.NewReader(body), now, nil)
			var rej *ledger.RejectedFileError
			if !errors.As(err, &rej) || len(rej.Problems) != 1 || rej.Problems[0].Line != 3 || rej.Problems[0].Field != "currency" ||
				!strings.Contains(err.Error(), "c.csv line 3: field currency: M-Pesa moves only KES, not USD") {
				t.Fatalf("err = %v", err)
			}
			q, _ := s.ListQuarantine(ctx, "intents_csv", 10)
			if len(q) != 1 || q[0].Line != 3 || q[0].Field != "currency" || q[0].Origin != "c.csv" || !strings.Contains(string(q[0].Raw), "charge:c2") {
				t.Fatalf("quarantine = %+v", q)
			}
			if _, err := s.GetIntent(ctx, "charge:c1"); !errors.Is(err, ledger.ErrNotFound) {
				t.Fatalf("a good row of a refused file was imported: %v", err)
			}
		})
	}
}
