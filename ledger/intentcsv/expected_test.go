package intentcsv_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/intentcsv"
)

// TestExpectedPayments: the kind column names an expected payment, with a
// due date and a tolerance; a row that names no kind takes its provider's
// kind unless it names the request that charged it; a due date or a
// tolerance on a charge is refused with its line and field.
func TestExpectedPayments(t *testing.T) {
	t.Parallel()
	const file = `key,provider,amount,currency,status,created_at,reference,provider_refs,kind,due_at,tolerance
inv:1,mpesa,1500,KES,pending,2026-03-12T09:00:00+03:00,INV1,,expected,2026-03-20T00:00:00+03:00,5
inv:2,mpesa,700,KES,pending,2026-03-12T09:00:00+03:00,INV2,,,,
stk:3,mpesa,900,KES,succeeded,2026-03-12T09:00:00+03:00,STK3,ws_CO_3,,,
card:4,stripe,25.00,USD,succeeded,2026-03-12T09:00:00Z,,pi_4,,,
`
	kinds := intentcsv.Kinds{"mpesa": ledger.IntentExpected}
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := eng.New(t)
			res, err := intentcsv.Import(ctx, s, "i.csv", strings.NewReader(file), now, &intentcsv.Options{Kinds: kinds})
			if err != nil || res.Created != 4 {
				t.Fatalf("import = %+v, %v", res, err)
			}
			for key, want := range map[string]ledger.IntentKind{"inv:1": ledger.IntentExpected, "inv:2": ledger.IntentExpected,
				"stk:3": ledger.IntentCharge, "card:4": ledger.IntentCharge} {
				in, err := s.GetIntent(ctx, key)
				if err != nil || in.Kind != want {
					t.Errorf("%s: kind %q, %v; want %q", key, in.Kind, err, want)
				}
			}
			in, _ := s.GetIntent(ctx, "inv:1")
			if !in.DueAt.Equal(time.Date(2026, 3, 19, 21, 0, 0, 0, time.UTC)) || in.Tolerance.String() != "KES 5.00" {
				t.Fatalf("inv:1: due %s, tolerance %s", in.DueAt, in.Tolerance)
			}
			// The same file again is the same request; without the kinds,
			// inv:2 would be a charge: key reused.
			if res, err := intentcsv.Import(ctx, s, "i.csv", strings.NewReader(file), now, &intentcsv.Options{Kinds: kinds}); err != nil || res.Existing != 4 {
				t.Fatalf("again = %+v, %v", res, err)
			}
			var rf *ledger.RejectedFileError
			if _, err := intentcsv.Import(ctx, s, "i.csv", strings.NewReader(file), now, nil); !errors.As(err, &rf) || len(rf.Problems) != 1 || rf.Problems[0].Line != 3 {
				t.Fatalf("without the kinds: %v", err)
			}
			bad := `key,provider,amount,currency,status,created_at,kind,due_at,tolerance
c:5,mpesa,100,KES,succeeded,2026-03-12T09:00:00Z,charge,2026-03-20T00:00:00Z,
c:6,mpesa,100,KES,succeeded,2026-03-12T09:00:00Z,expected,,100
c:7,mpesa,100,KES,succeeded,2026-03-12T09:00:00Z,expected,tomorrow,
c:8,mpesa,100,KES,succeeded,2026-03-12T09:00:00Z,expected,,0.001
`
			_, err = intentcsv.Import(ctx, s, "bad.csv", strings.NewReader(bad), now, nil)
			if !errors.As(err, &rf) || len(rf.Problems) != 4 {
				t.Fatalf("bad file: %v", err)
			}
			want := []string{"due_at", "tolerance", "due_at", "tolerance"}
			for i, l := range rf.Problems {
				if l.Line != i+2 || l.Field != want[i] {
					t.Errorf("line %d field %q (%v); want line %d field %q", l.Line, l.Field, l.Err, i+2, want[i])
				}
			}
		})
	}
}
