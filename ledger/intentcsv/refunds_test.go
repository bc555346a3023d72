package intentcsv_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestImportRefunds imports refunds recorded elsewhere (kind and refund_of
// columns) beside charges, then a file of refunds the books refuse: each
// refused row names its line and field, and nothing of the file is written.
func TestImportRefunds(t *testing.T) {
	t.Parallel()
	for _, eng := range dbtest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := eng.New(t)
			res, err := importFile(t, s, "refunds.csv")
			if err != nil || res.Rows != 4 || res.Created != 4 || res.Pending != 0 {
				t.Fatalf("import = %+v, %v", res, err)
			}
			in, err := s.GetIntent(ctx, "refund:order-5001:2")
			if err != nil || in.Kind != ledger.IntentRefund || in.RefundOf != "charge:order-5001" || in.State != ledger.StateFailed {
				t.Fatalf("refund = %+v, %v", in, err)
			}
			if in, err := s.GetIntent(ctx, "charge:order-5002"); err != nil || in.Kind != ledger.IntentCharge {
				t.Fatalf("charge = %+v, %v", in, err)
			}
			_, err = importFile(t, s, "refunds-bad.csv")
			var rej *ledger.RejectedFileError
			if !errors.As(err, &rej) {
				t.Fatalf("err = %v, want RejectedFileError", err)
			}
			want := []struct {
				line        int
				field, text string
			}{
				{2, "amount", "1000.01 exceeds what remains refundable of charge \"charge:order-5001\": 1000.00 of 1500.00 (500.00 already refunded)"},
				{3, "refund_of", "is required"},
				{4, "currency", "USD differs from the charge's currency KES"},
				{5, "kind", `unknown kind "reversal"`},
				{6, "refund_of", `no intent has key "charge:order-9999"`},
			}
			if len(rej.Problems) != len(want) {
				t.Fatalf("problems = %v", err)
			}
			for i, w := range want {
				p := rej.Problems[i]
				if p.Line != w.line || p.Field != w.field || !strings.Contains(p.Error(), w.text) {
					t.Errorf("problem %d = %q (line %d field %s), want line %d field %s containing %q", i, p, p.Line, p.Field, w.line, w.field, w.text)
				}
			}
			if _, err := s.GetIntent(ctx, "refund:order-5002:4"); !errors.Is(err, ledger.ErrNotFound) {
				t.Fatalf("a good row of a rejected file was imported: %v", err)
			}
		})
	}
}
