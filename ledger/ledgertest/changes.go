package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// exerciseChanges covers corrections of intents: an amendment of an
// imported intent's amount (with its minor units), a void, the history
// they keep, compare-and-set, and the refusals of intents that money or a
// person's decision depends on.
func exerciseChanges(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	ops := ledger.Actor{Name: "ops@example.com", Surface: ledger.SurfaceCLI}
	imported := func(key, amount string, state ledger.State, refs ...string) {
		t.Helper()
		err := s.InTx(ctx, func(tx ledger.Tx) error {
			res, err := tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values([]ledger.ImportIntent{{
				NewIntent: ledger.NewIntent{IntentParams: params(t, key, amount), State: state, CreatedAt: T0}, Line: 2, ProviderRefs: refs}})})
			if err == nil && len(res.Refused) > 0 {
				err = fmt.Errorf("refused %+v", res.Refused)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	imported("inv:cents", "150000", ledger.StateSucceeded, "ws_CO_1")
	imported("inv:void", "700", ledger.StatePending)
	imported("inv:refunded", "500", ledger.StateSucceeded)
	imported("inv:typed", "150000", ledger.StateSucceeded)
	mustCreate(t, s, params(t, "charge:sent", "900"))
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "charge:sent", Owner: "w", Lease: time.Minute, Now: T0})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: in.Key, ClaimToken: in.ClaimToken, Now: T0}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "refund:r1", Kind: ledger.IntentRefund,
		RefundOf: "inv:refunded", Provider: "mpesa", Amount: kes(t, "100")}, State: ledger.StateSucceeded, CreatedAt: T0}); err != nil {
		t.Fatal(err)
	}
	change := func(p ledger.ChangeParams) (ledger.Intent, ledger.IntentChange, error) {
		return ledger.ChangeIntent(ctx, s, p, "")
	}

	t.Run("amend", func(t *testing.T) {
		in, c, err := change(ledger.ChangeParams{Key: "inv:cents", Action: ledger.IntentAmended, Amount: kes(t, "1500"), Actor: ops,
			Note: "imported in cents", Now: T0.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if !in.Amount.Equal(kes(t, "1500")) || in.State != ledger.StateSucceeded || !in.UpdatedAt.Equal(T0.Add(time.Hour)) {
			t.Fatalf("amended intent %+v", in)
		}
		if c.ID == 0 || !c.OldAmount.Equal(kes(t, "150000")) || !c.NewAmount.Equal(kes(t, "1500")) || c.Actor != ops.Name ||
			c.Surface != ledger.SurfaceCLI || c.Action != ledger.IntentAmended || !c.At.Equal(T0.Add(time.Hour)) {
			t.Fatalf("change %+v", c)
		}
		got, err := s.GetIntent(ctx, "inv:cents")
		if err != nil || !got.Amount.Equal(kes(t, "1500")) {
			t.Fatalf("read back %+v, %v", got, err)
		}
		// The scan the matcher reads sees the new amount in minor units.
		var minor int64
		err = s.ScanIntents(ctx, ledger.IntentFilter{Provider: "mpesa", From: T0.Add(-time.Hour), To: T0.Add(time.Hour)}, func(r *ledger.IntentRow) error {
			if string(r.Key) == "inv:cents" {
				minor = r.Minor
			}
			return nil
		})
		if err != nil || minor != 150000 {
			t.Fatalf("scanned minor units %d, %v", minor, err)
		}
		for _, bad := range []ledger.ChangeParams{
			{Key: "inv:cents", Action: ledger.IntentAmended, Amount: kes(t, "1500"), Actor: ops, Note: "again", Now: T0},
			{Key: "inv:cents", Action: ledger.IntentAmended, Amount: kes(t, "-1"), Actor: ops, Note: "x", Now: T0},
			{Key: "inv:cents", Action: ledger.IntentAmended, Amount: kes(t, "10"), Actor: ops, Now: T0},
		} {
			var fe *ledger.FieldError
			if _, _, err := change(bad); !errors.As(err, &fe) {
				t.Errorf("%+v: %v", bad, err)
			}
		}
	})

	t.Run("amend as typed", func(t *testing.T) {
		p := ledger.ChangeParams{Key: "inv:typed", Action: ledger.IntentAmended, Actor: ops, Note: "imported in cents", Now: T0}
		var fe *ledger.FieldError
		if _, _, err := ledger.ChangeIntent(ctx, s, p, "1500.001"); !errors.As(err, &fe) || fe.Field != "amount" {
			t.Fatalf("three decimals of KES: got %v, want a field error on amount", err)
		}
		if _, _, err := ledger.ChangeIntent(ctx, s, ledger.ChangeParams{Key: "nope", Action: ledger.IntentAmended, Actor: ops,
			Note: "x", Now: T0}, "1"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("an intent that does not exist: got %v, want ErrNotFound", err)
		}
		in, c, err := ledger.ChangeIntent(ctx, s, p, "1500.00")
		if err != nil {
			t.Fatal(err)
		}
		if !in.Amount.Equal(kes(t, "1500")) || !c.OldAmount.Equal(kes(t, "150000")) {
			t.Fatalf("amended %+v, change %+v: want KES 1500.00, was 150000", in, c)
		}
	})

	t.Run("void", func(t *testing.T) {
		in, c, err := change(ledger.ChangeParams{Key: "inv:void", Action: ledger.IntentVoided, Actor: ops, Note: "duplicate row", Now: T0.Add(2 * time.Hour)})
		if err != nil || in.State != ledger.StateFailed || c.OldState != ledger.StatePending || c.NewState != ledger.StateFailed {
			t.Fatalf("voided %+v %+v, %v", in, c, err)
		}
		voided, err := s.VoidedIntents(ctx, []string{"inv:void", "inv:cents", "nope"})
		if err != nil || len(voided) != 1 || voided[0] != "inv:void" {
			t.Fatalf("voided %v, %v", voided, err)
		}
		if _, _, err := change(ledger.ChangeParams{Key: "inv:void", Action: ledger.IntentVoided, Actor: ops, Note: "again", Now: T0}); !errors.Is(err, ledger.ErrNotCorrectable) {
			t.Fatalf("voiding twice: %v", err)
		}
	})

	t.Run("history", func(t *testing.T) {
		cs, err := s.IntentChanges(ctx, "inv:cents")
		if err != nil || len(cs) != 1 || cs[0].Note != "imported in cents" {
			t.Fatalf("history %+v, %v", cs, err)
		}
		if cs, err := s.IntentChanges(ctx, "nope"); err != nil || len(cs) != 0 {
			t.Fatalf("no history: %+v, %v", cs, err)
		}
	})

	t.Run("refusals", func(t *testing.T) {
		for key, why := range map[string]string{"charge:sent": "sent it", "inv:refunded": "gives money back", "refund:r1": "is a refund"} {
			_, _, err := change(ledger.ChangeParams{Key: key, Action: ledger.IntentVoided, Actor: ops, Note: "x", Now: T0})
			if !errors.Is(err, ledger.ErrNotCorrectable) || !containsText(err, why) {
				t.Errorf("%s: %v, want %q", key, err, why)
			}
		}
		if _, _, err := change(ledger.ChangeParams{Key: "nope", Action: ledger.IntentVoided, Actor: ops, Note: "x", Now: T0}); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("no such intent: %v", err)
		}
		// Compare-and-set: the stored amount or state moved on.
		if _, _, err := s.ChangeIntent(ctx, ledger.IntentChange{IntentKey: "inv:cents", Action: ledger.IntentAmended, OldAmount: kes(t, "150000"),
			NewAmount: kes(t, "15"), OldState: ledger.StateSucceeded, NewState: ledger.StateSucceeded, Actor: "x", Surface: ledger.SurfaceCLI,
			Note: "x", At: T0}); !errors.Is(err, ledger.ErrConflict) {
			t.Errorf("stale change: %v", err)
		}
	})
}

func containsText(err error, s string) bool {
	return err != nil && strings.Contains(err.Error(), s)
}

// exerciseCloses covers month-end closes: recorded once per period and
// provider (or all), listed in order, and a finding raised after its
// month's close told apart.
func exerciseCloses(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	c := ledger.PeriodClose{Period: "2026-11", Provider: "mpesa", ClosedBy: "ops@example.com", ClosedVia: ledger.SurfaceWeb,
		ClosedAt: T0.Add(30 * 24 * time.Hour), Note: "November done", Summary: `{"period":"2026-11"}`}
	got, err := s.ClosePeriod(ctx, c)
	if err != nil || got != c {
		t.Fatalf("closed %+v, %v; want %+v", got, err, c)
	}
	if _, err := s.ClosePeriod(ctx, c); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("closing twice: %v", err)
	}
	all := c
	all.Provider = ""
	if _, err := s.ClosePeriod(ctx, all); err != nil {
		t.Fatalf("closing every provider: %v", err)
	}
	oct := c
	oct.Period = "2026-10"
	if _, err := s.ClosePeriod(ctx, oct); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []ledger.PeriodClose{{Period: "2026-13", ClosedBy: "x", ClosedAt: T0}, {Period: "2026-11-01", ClosedBy: "x", ClosedAt: T0},
		{Period: "2026-09", ClosedAt: T0}} {
		var fe *ledger.FieldError
		if _, err := s.ClosePeriod(ctx, bad); !errors.As(err, &fe) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	list, err := s.ListCloses(ctx)
	if err != nil || len(list) != 3 || list[0].Period != "2026-10" || list[1].Provider != "" || list[2].Provider != "mpesa" {
		t.Fatalf("closes %+v, %v", list, err)
	}
	late := ledger.Finding{Provider: "mpesa", OccurredAt: T0, FirstSeenAt: c.ClosedAt.Add(time.Hour)}
	if got, ok := ledger.ClosedBefore(late, list, time.UTC); !ok || got.Period != "2026-11" {
		t.Fatalf("a finding raised after the close: %+v, %v", got, ok)
	}
	late.FirstSeenAt = c.ClosedAt.Add(-time.Hour)
	if _, ok := ledger.ClosedBefore(late, list, time.UTC); ok {
		t.Fatal("a finding raised before the close is flagged")
	}
}
