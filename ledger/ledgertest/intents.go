package ledgertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

func exerciseIntents(t *testing.T, newStore NewStore) {
	ctx := context.Background()

	t.Run("CreateIsIdempotent", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		p := params(t, "charge:order-4471", "1500")
		p.Metadata = map[string]string{"order": "4471"}
		in, created, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, CreatedAt: T0})
		if err != nil || !created {
			t.Fatalf("first create: created=%v err=%v", created, err)
		}
		if in.State != ledger.StatePending || in.Reference != ledger.DeriveReference(p.Key) || len(in.Reference) != 12 {
			t.Fatalf("created intent = %+v", in)
		}
		again, created, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, CreatedAt: T0.Add(time.Minute)})
		if err != nil || created {
			t.Fatalf("replay: created=%v err=%v", created, err)
		}
		if !again.CreatedAt.Equal(T0) || !again.Amount.Equal(p.Amount) || again.Metadata["order"] != "4471" {
			t.Fatalf("replay returned %+v", again)
		}
		// The same amount written with other digits is the same request.
		p2 := p
		p2.Amount = kes(t, "1500.00")
		if _, created, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p2, CreatedAt: T0}); err != nil || created {
			t.Fatalf("replay with 1500.00: created=%v err=%v", created, err)
		}
	})

	t.Run("KeyReuseIsRefused", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		p := params(t, "charge:order-1", "100")
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, CreatedAt: T0}); err != nil {
			t.Fatal(err)
		}
		usd, _ := money.Parse("100", "USD")
		for name, mut := range map[string]func(*ledger.IntentParams){
			"amount":   func(q *ledger.IntentParams) { q.Amount = kes(t, "101") },
			"currency": func(q *ledger.IntentParams) { q.Amount = usd },
			"customer": func(q *ledger.IntentParams) { q.Customer = "254799999999" },
			"metadata": func(q *ledger.IntentParams) { q.Metadata = map[string]string{"x": "y"} },
		} {
			q := p
			mut(&q)
			_, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: q, CreatedAt: T0})
			var kr *ledger.KeyReuseError
			if !errors.As(err, &kr) || !errors.Is(err, ledger.ErrConflict) {
				t.Fatalf("%s: err = %v, want KeyReuseError", name, err)
			}
			if !strings.Contains(err.Error(), "key reused with different parameters") ||
				!strings.Contains(err.Error(), p.Amount.String()) || !strings.Contains(err.Error(), q.Amount.String()) {
				t.Fatalf("%s: error does not name both: %v", name, err)
			}
			if strings.Contains(err.Error(), "254712340845") {
				t.Fatalf("%s: error shows a full phone number: %v", name, err)
			}
		}
	})

	t.Run("Validation", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for field, p := range map[string]ledger.IntentParams{
			"key":       {Provider: "mpesa", Amount: kes(t, "1")},
			"provider":  {Key: "k", Amount: kes(t, "1")},
			"amount":    {Key: "k", Provider: "mpesa"},
			"reference": {Key: "k", Provider: "mpesa", Amount: kes(t, "1"), Reference: "THIRTEEN-CHAR"},
		} {
			_, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, CreatedAt: T0})
			var fe *ledger.FieldError
			if !errors.As(err, &fe) || fe.Field != field {
				t.Errorf("missing %s: err = %v", field, err)
			}
		}
		neg := params(t, "k", "-5")
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: neg, CreatedAt: T0}); err == nil {
			t.Error("negative amount accepted")
		}
	})

	t.Run("Claim", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		mustCreate(t, s, params(t, "k1", "10"))
		lease := time.Minute
		in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k1", Owner: "w1", Lease: lease, Now: T0})
		if err != nil || in.State != ledger.StateProcessing || in.ClaimToken != 1 || in.ClaimOwner != "w1" ||
			!in.LeaseExpiresAt.Equal(T0.Add(lease)) {
			t.Fatalf("claim = %+v, %v", in, err)
		}
		if _, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k1", Owner: "w2", Lease: lease, Now: T0.Add(30 * time.Second)}); !errors.Is(err, ledger.ErrNotClaimable) {
			t.Fatalf("claim during lease: %v", err)
		}
		in, err = s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k1", Owner: "w2", Lease: lease, Now: T0.Add(lease)})
		if err != nil || in.ClaimToken != 2 || in.ClaimOwner != "w2" {
			t.Fatalf("takeover after expiry = %+v, %v", in, err)
		}
		if _, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "nope", Owner: "w", Lease: lease, Now: T0}); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("claim missing: %v", err)
		}
		// Releasing the lease lets the next delivery claim at once.
		rel, err := s.TransitionIntent(ctx, ledger.TransitionParams{Key: "k1", From: []ledger.State{ledger.StateProcessing},
			To: ledger.StateProcessing, ClaimToken: 2, Now: T0.Add(lease + time.Second)})
		if err != nil || !rel.LeaseExpiresAt.Equal(T0.Add(lease+time.Second)) {
			t.Fatalf("release = %+v, %v", rel, err)
		}
		in, err = s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k1", Owner: "w2", Lease: lease, Now: T0.Add(lease + 2*time.Second)})
		if err != nil || in.ClaimToken != 3 {
			t.Fatalf("claim after release = %+v, %v", in, err)
		}
		// The old claim is fenced out; the new one may finish.
		if _, err := s.TransitionIntent(ctx, ledger.TransitionParams{Key: "k1", From: []ledger.State{ledger.StateProcessing},
			To: ledger.StateSucceeded, ClaimToken: 1, Now: T0}); !errors.Is(err, ledger.ErrConflict) {
			t.Fatalf("stale claim transition: %v", err)
		}
		in, err = s.TransitionIntent(ctx, ledger.TransitionParams{Key: "k1", From: []ledger.State{ledger.StateProcessing},
			To: ledger.StateSucceeded, ClaimToken: 3, Now: T0.Add(2 * lease)})
		if err != nil || in.State != ledger.StateSucceeded || !in.LeaseExpiresAt.IsZero() {
			t.Fatalf("transition = %+v, %v", in, err)
		}
		if _, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k1", Owner: "w3", Lease: lease, Now: T0.Add(time.Hour)}); !errors.Is(err, ledger.ErrNotClaimable) {
			t.Fatalf("claim of a final intent: %v", err)
		}
	})

	t.Run("ListIntents", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for i, at := range []time.Duration{-time.Second, 0, time.Hour, 24 * time.Hour} {
			p := params(t, "k"+string(rune('a'+i)), "10")
			if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, CreatedAt: T0.Add(at)}); err != nil {
				t.Fatal(err)
			}
		}
		other := params(t, "stripe-1", "10")
		other.Provider = "stripe"
		mustCreate(t, s, other)
		var keys []string
		err := s.ListIntents(ctx, ledger.IntentFilter{Provider: "mpesa", From: T0, To: T0.Add(24 * time.Hour)}, func(in ledger.Intent) error {
			keys = append(keys, in.Key)
			return nil
		})
		if err != nil || strings.Join(keys, ",") != "kb,kc" {
			t.Fatalf("window [T0, T0+24h) = %v, %v", keys, err)
		}
		var states []string
		err = s.ListIntentsInState(ctx, "mpesa", []ledger.State{ledger.StatePending}, func(in ledger.Intent) error {
			states = append(states, in.Key)
			return nil
		})
		if err != nil || len(states) != 4 {
			t.Fatalf("pending = %v, %v", states, err)
		}
	})

	t.Run("Import", func(t *testing.T) { t.Parallel(); exerciseImportIntents(t, newStore) })

	t.Run("ImportedState", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		in, created, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: params(t, "old", "10"), State: ledger.StateSucceeded, CreatedAt: T0})
		if err != nil || !created || in.State != ledger.StateSucceeded || !in.UpdatedAt.Equal(T0) {
			t.Fatalf("create succeeded: %+v %v", in, err)
		}
		in, _, err = s.CreateIntent(ctx, ledger.NewIntent{IntentParams: params(t, "older", "10"), State: ledger.StateFailed,
			CreatedAt: T0, UpdatedAt: T0.Add(time.Hour)})
		if err != nil || !in.UpdatedAt.Equal(T0.Add(time.Hour)) || in.State != ledger.StateFailed {
			t.Fatalf("create with updated_at: %+v %v", in, err)
		}
		var fe *ledger.FieldError
		_, _, err = s.CreateIntent(ctx, ledger.NewIntent{IntentParams: params(t, "bad", "10"), CreatedAt: T0, UpdatedAt: T0.Add(-time.Hour)})
		if !errors.As(err, &fe) || fe.Field != "updated_at" {
			t.Fatalf("updated_at before created_at: %v", err)
		}
	})
}

func mustCreate(t testing.TB, s ledger.Executor, p ledger.IntentParams) ledger.Intent {
	t.Helper()
	in, _, err := s.CreateIntent(context.Background(), ledger.NewIntent{IntentParams: p, CreatedAt: T0})
	if err != nil {
		t.Fatal(err)
	}
	return in
}
