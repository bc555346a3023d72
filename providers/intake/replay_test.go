package intake_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

// ReplayKept replays a kept callback body once it is readable and records
// the replay with the note and what it added; an item replayed already, or
// that does not exist, is refused.
func TestReplayKept(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b := setup(t, newStore)
		ops := ledger.Actor{Name: "ops", Surface: ledger.SurfaceCLI}
		id, err := b.store.AddQuarantine(ctx, ledger.QuarantineItem{Source: "mpesa_callback", Origin: "cb.jsonl", Line: 2,
			Field: "amount", Reason: "was refused", Raw: []byte(`{"id":"QK12345678","amount":"10.00"}`), At: t0})
		if err != nil {
			t.Fatal(err)
		}
		parsers := map[string]providers.CallbackParser{"mpesa": b.parser}
		q, res, err := b.proc.ReplayKept(ctx, b.store, intake.KeptReplay{ID: id, Actor: ops, Note: " parser fixed ", Parsers: parsers})
		if err != nil {
			t.Fatal(err)
		}
		if res != "test, 1 new transaction(s), 1 new source(s)" || q.Status != ledger.QuarantineReplayed {
			t.Fatalf("replayed %+v: %q", q, res)
		}
		evs, err := b.store.QuarantineHistory(ctx, id)
		if err != nil || len(evs) != 1 || evs[0].Note != "parser fixed (replayed: "+res+")" || evs[0].Actor != "ops" {
			t.Fatalf("history %+v, %v", evs, err)
		}
		if n := countTxns(t, b.store); n != 1 {
			t.Errorf("txns = %d, want 1", n)
		}
		if _, _, err := b.proc.ReplayKept(ctx, b.store, intake.KeptReplay{ID: id, Actor: ops, Parsers: parsers}); err == nil ||
			!strings.Contains(err.Error(), "item is replayed, not kept") {
			t.Fatalf("replaying again: %v, want refused as not kept", err)
		}
		if _, _, err := b.proc.ReplayKept(ctx, b.store, intake.KeptReplay{ID: id + 100, Actor: ops, Parsers: parsers}); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("an item that does not exist: %v, want ErrNotFound", err)
		}
	})
}
