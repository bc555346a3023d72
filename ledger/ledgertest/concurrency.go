package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// Contenders and ContendedKeys size the concurrency test; under the race
// detector it contends over contendedUnderRace of the keys (every
// contender still meets every other on each).
const (
	Contenders         = 64
	ContendedKeys      = 1000
	contendedUnderRace = 200
)

// contended is how many of the keys the concurrency test contends over.
func contended() int {
	if underRace {
		return contendedUnderRace
	}
	return ContendedKeys
}

// exerciseConcurrency has 64 goroutines create and claim the same 1,000 keys:
// each key must become exactly one intent with exactly one winning claim;
// after the lease expires exactly one contender takes each over; and reusing
// a key with another amount is refused every time.
func exerciseConcurrency(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	const lease = time.Minute
	n := contended()
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("charge:order-%04d", i)
	}
	p := params(t, "", "250")

	var created, claims, takeovers, refused [ContendedKeys]atomic.Int32
	var failures atomic.Int32
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 5 {
			t.Errorf(format, args...)
		}
	}
	race := func(phase int) {
		var wg sync.WaitGroup
		for g := range Contenders {
			wg.Go(func() {
				for j := range n {
					i := (j + g*n/Contenders) % n // each contender starts elsewhere
					q := p
					q.Key = keys[i]
					if phase == 0 {
						_, ok, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: q, CreatedAt: T0})
						if err != nil {
							fail("create %s: %v", q.Key, err)
							continue
						}
						if ok {
							created[i].Add(1)
						}
						if g%8 == 7 {
							bad := q
							bad.Amount = kes(t, "251")
							var kr *ledger.KeyReuseError
							if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: bad, CreatedAt: T0}); !errors.As(err, &kr) {
								fail("reuse of %s with another amount: %v", q.Key, err)
							}
							refused[i].Add(1)
						}
					}
					now := T0.Add(time.Duration(phase) * lease)
					in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: q.Key, Owner: fmt.Sprintf("g%d", g), Lease: lease, Now: now})
					switch {
					case errors.Is(err, ledger.ErrNotClaimable), errors.Is(err, ledger.ErrNotFound):
					case err != nil:
						fail("claim %s: %v", q.Key, err)
					case phase == 0:
						claims[i].Add(1)
					default:
						if in.ClaimToken != 2 {
							fail("takeover of %s has claim token %d", q.Key, in.ClaimToken)
						}
						takeovers[i].Add(1)
					}
				}
			})
		}
		wg.Wait()
	}
	race(0)
	race(1)

	var nCreated, nClaims, nTakeovers, nRefused int
	for i := range keys {
		in, err := s.GetIntent(ctx, keys[i])
		if err != nil || !in.Amount.Equal(p.Amount) {
			t.Fatalf("intent %s = %+v, %v", keys[i], in, err)
		}
		c, cl, to := created[i].Load(), claims[i].Load(), takeovers[i].Load()
		if c != 1 || cl != 1 || to != 1 {
			t.Errorf("key %s: %d creations, %d claims, %d takeovers; want 1 each", keys[i], c, cl, to)
		}
		nCreated += int(c)
		nClaims += int(cl)
		nTakeovers += int(to)
		nRefused += int(refused[i].Load())
	}
	if want := n * Contenders / 8; nRefused != want {
		t.Errorf("refused key reuse %d times, want %d", nRefused, want)
	}
	t.Logf("%d contenders x %d keys: %d intents created, %d claims won, %d takeovers, %d key reuses refused",
		Contenders, n, nCreated, nClaims, nTakeovers, nRefused)
}
