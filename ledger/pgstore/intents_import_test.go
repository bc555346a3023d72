package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/money"
)

var importT0 = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

func kesAmount(t testing.TB, s string) money.Amount {
	t.Helper()
	a, err := money.Parse(s, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func charge(t testing.TB, line int, key, amount string, state ledger.State, refs ...string) ledger.ImportIntent {
	return ledger.ImportIntent{NewIntent: ledger.NewIntent{
		IntentParams: ledger.IntentParams{Key: key, Provider: "mpesa", Amount: kesAmount(t, amount), Customer: "254712340845"},
		State:        state, CreatedAt: importT0.Add(time.Duration(line) * time.Second)}, Line: line, ProviderRefs: refs}
}

// importOutcome is what an import did, in a form to compare: the result,
// the refusals in line order with their messages, and the pending keys
// handed over.
type importOutcome struct {
	res             ledger.ImportIntentsResult
	refused         []string
	pending, refund []string
	stats           pgstore.ImportStats
}

func runImport(t *testing.T, s ledger.Store, rows []ledger.ImportIntent, opt pgstore.ImportOptions) importOutcome {
	t.Helper()
	var out importOutcome
	p := ledger.ImportIntentsParams{Rows: slices.Values(rows),
		Pending:        func(_ context.Context, keys []string) error { out.pending = append(out.pending, keys...); return nil },
		PendingRefunds: func(_ context.Context, keys []string) error { out.refund = append(out.refund, keys...); return nil },
	}
	res, stats, err := pgstore.ImportIntentsWith(context.Background(), s.(*pgstore.Store), p, opt)
	if err != nil {
		t.Fatal(err)
	}
	out.stats = stats
	slices.SortFunc(res.Refused, func(a, b ledger.RefusedIntent) int { return a.Line - b.Line })
	for _, r := range res.Refused {
		out.refused = append(out.refused, fmt.Sprintf("line %d: %v", r.Line, r.Err))
	}
	res.Refused = nil
	out.res = res
	slices.Sort(out.pending)
	slices.Sort(out.refund)
	return out
}

// storedRows renders the intents and attempts stored under keys.
func storedRows(t *testing.T, s ledger.Store, keys []string) string {
	t.Helper()
	ctx := context.Background()
	ins, err := s.GetIntents(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(ins, func(a, b ledger.Intent) int { return strings.Compare(a.Key, b.Key) })
	var b strings.Builder
	for _, in := range ins {
		fmt.Fprintf(&b, "%s %s %q %s %s %s exp%d %s %q %v %s %d %s %s\n", in.Key, in.Kind, in.RefundOf, in.Provider,
			in.Amount.Value, in.Amount.Currency, in.Amount.Value.Exponent(), in.Customer, in.Reference, in.Metadata, in.State,
			in.ClaimToken, in.CreatedAt.Format(time.RFC3339Nano), in.UpdatedAt.Format(time.RFC3339Nano))
		attempts, err := s.ListAttempts(ctx, in.Key)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range attempts {
			fmt.Fprintf(&b, "  attempt %d claim %d ref %q %s %q %s\n", a.Number, a.ClaimToken, a.ProviderRef, a.Outcome, a.Error,
				a.StartedAt.Format(time.RFC3339Nano))
		}
	}
	return b.String()
}

// randomImport is a file over a small set of keys, so that keys repeat
// within and across batches, stored before or not. Messy files change
// parameters between the lines of a key, mix refunds in and carry invalid
// rows; clean ones repeat each key's line unchanged.
func randomImport(t *testing.T, r *rand.Rand, prefix string, messy bool) (pre []ledger.NewIntent, rows []ledger.ImportIntent, keys []string) {
	for i := range 12 {
		keys = append(keys, fmt.Sprintf("%sk%02d", prefix, i))
	}
	amounts := []string{"5", "10", "10.00", "20", "250.50", "0.01", "123456789012.99"}
	states := []ledger.State{ledger.StatePending, ledger.StateSucceeded, ledger.StateFailed, ledger.StateProcessing}
	for _, k := range keys[:4] {
		n := charge(t, 0, k, amounts[r.IntN(len(amounts))], states[r.IntN(2)]).NewIntent
		pre = append(pre, n)
	}
	perKey := map[string]ledger.ImportIntent{}
	for line := 2; line < 2+10+r.IntN(50); line++ {
		k := keys[r.IntN(len(keys))]
		row := charge(t, line, k, amounts[r.IntN(len(amounts))], states[r.IntN(len(states))])
		row.CreatedAt = row.CreatedAt.Add(time.Duration(r.IntN(1e9))) // below a microsecond too
		if r.IntN(3) == 0 {
			row.UpdatedAt = row.CreatedAt.Add(time.Duration(r.IntN(1e12)))
		}
		for range r.IntN(3) {
			row.ProviderRefs = append(row.ProviderRefs, fmt.Sprintf("REF%d", r.IntN(1000)))
		}
		if r.IntN(4) == 0 {
			row.Metadata = map[string]string{"order": fmt.Sprint(r.IntN(2)), "note": "café \"ü\" \\ ✓"}
		}
		if !messy {
			if first, ok := perKey[k]; ok {
				row.IntentParams, row.State = first.IntentParams, first.State
			} else {
				perKey[k] = row
			}
		} else {
			switch r.IntN(10) {
			case 0, 1:
				row.Kind, row.RefundOf = ledger.IntentRefund, keys[r.IntN(len(keys))]
				row.Amount = kesAmount(t, []string{"1", "5", "300"}[r.IntN(3)])
				row.State = []ledger.State{ledger.StatePending, ledger.StateSucceeded, ledger.StateFailed}[r.IntN(3)]
			case 2:
				row.Amount = money.Amount{Currency: "KES"} // invalid: no amount
			case 3:
				row.Provider = "stripe"
			}
		}
		rows = append(rows, row)
	}
	return pre, rows, keys
}

// TestImportIntentsFastMatchesStaged: the direct writes of new intents give
// the same stored rows, counts, refusals and pending keys as the staged set
// statements, on random files, for batch sizes that put repeated keys in
// the same batch and in different ones.
func TestImportIntentsFastMatchesStaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fast, staged := dbtest.Postgres(t), dbtest.Postgres(t)
	for seed := range 60 {
		r := rand.New(rand.NewPCG(uint64(seed), 11))
		prefix := fmt.Sprintf("s%d-", seed)
		pre, rows, keys := randomImport(t, r, prefix, seed%3 != 0)
		for _, s := range []ledger.Store{fast, staged} {
			for _, n := range pre {
				if _, _, err := s.CreateIntent(ctx, n); err != nil {
					t.Fatal(err)
				}
			}
		}
		batch := []int{1, 2, 3, 7, 1000}[seed%5]
		probe := seed%2 == 0
		got := runImport(t, fast, rows, pgstore.ImportOptions{Batch: batch, Probe: probe})
		want := runImport(t, staged, rows, pgstore.ImportOptions{Batch: 1000, Staged: true})
		got.stats, want.stats = pgstore.ImportStats{}, pgstore.ImportStats{}
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("seed %d, batch %d:\nfast   %+v\nstaged %+v", seed, batch, got, want)
		}
		if g, w := storedRows(t, fast, keys), storedRows(t, staged, keys); g != w {
			t.Errorf("seed %d, batch %d: stored rows differ:\nfast:\n%s\nstaged:\n%s", seed, batch, g, w)
		}
		for _, s := range []ledger.Store{fast, staged} {
			if n, err := pgstore.StaleMinor(s.(*pgstore.Store)); err != nil || n != 0 {
				t.Errorf("seed %d: %d rows with a stale amount_minor (%v)", seed, n, err)
			}
		}
		// A re-import of the same file agrees too.
		got = runImport(t, fast, rows, pgstore.ImportOptions{Batch: batch, Probe: probe})
		want = runImport(t, staged, rows, pgstore.ImportOptions{Batch: 1000, Staged: true})
		got.stats, want.stats = pgstore.ImportStats{}, pgstore.ImportStats{}
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", want) {
			t.Errorf("seed %d, batch %d, again:\nfast   %+v\nstaged %+v", seed, batch, got, want)
		}
	}
}

// TestImportIntentsRepeats: a key's first line decides, within a batch and
// across batches: it is created once, its attempts come from its first line
// only, and it is pending only when its first line asks so.
func TestImportIntentsRepeats(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t)
	if _, _, err := s.CreateIntent(ctx, charge(t, 0, "stored", "10", ledger.StatePending).NewIntent); err != nil {
		t.Fatal(err)
	}
	rows := []ledger.ImportIntent{
		charge(t, 2, "a", "10", ledger.StatePending, "RA1"),
		charge(t, 3, "a", "10", ledger.StatePending, "RA2"), // same batch
		charge(t, 4, "b", "20", ledger.StateSucceeded),
		charge(t, 5, "stored", "10", ledger.StateSucceeded),
		charge(t, 6, "a", "10", ledger.StateSucceeded), // next batch
		charge(t, 7, "b", "20", ledger.StatePending),   // first line succeeded
		charge(t, 8, "stored", "10", ledger.StatePending),
	}
	got := runImport(t, s, rows, pgstore.ImportOptions{Batch: 4})
	if got.res.Rows != 7 || got.res.Created != 2 || got.res.Existing != 5 || len(got.refused) != 0 ||
		got.res.Pending != 1 || fmt.Sprint(got.pending) != "[a]" || got.stats != (pgstore.ImportStats{}) {
		t.Fatalf("import = %+v", got)
	}
	attempts, err := s.ListAttempts(ctx, "a")
	if err != nil || len(attempts) != 1 || attempts[0].ProviderRef != "RA1" {
		t.Fatalf("attempts of a = %+v, %v", attempts, err)
	}
}

// TestImportIntentsConcurrentWriter: when another transaction writes one of
// a batch's new keys between the look-up and the COPY, the batch falls back
// to the staged statements: the other rows are created with their attempts,
// and the row of that key is the same request or refused as key reuse.
func TestImportIntentsConcurrentWriter(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, amount string
		refused      bool
	}{{"Same", "30", false}, {"Different", "31", true}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := dbtest.Postgres(t)
			rows := []ledger.ImportIntent{
				charge(t, 2, "c1", "10", ledger.StatePending, "R1"),
				charge(t, 3, "c2", "20", ledger.StatePending, "R2"),
				charge(t, 4, "c3", "30", ledger.StatePending, "R3"),
				charge(t, 5, "c4", "40", ledger.StateSucceeded, "R4"),
			}
			raced := false
			opt := pgstore.ImportOptions{Batch: 100, Probe: true, BeforeCreate: func(ctx context.Context, keys []string) error {
				if raced || !slices.Contains(keys, "c3") {
					return nil
				}
				raced = true
				_, _, err := s.CreateIntent(ctx, charge(t, 9, "c3", c.amount, ledger.StateFailed).NewIntent)
				return err
			}}
			got := runImport(t, s, rows, opt)
			wantRefused, wantExisting := 0, 1
			if c.refused {
				wantRefused, wantExisting = 1, 0
			}
			if got.stats.Fallbacks != 1 || got.res.Created != 3 || got.res.Existing != wantExisting || len(got.refused) != wantRefused {
				t.Fatalf("import = %+v", got)
			}
			if c.refused && !strings.HasPrefix(got.refused[0], "line 4: key reused") {
				t.Fatalf("refused = %v", got.refused)
			}
			if !c.refused && (got.res.Pending != 2 || fmt.Sprint(got.pending) != "[c1 c2]") {
				t.Fatalf("pending = %d %v (c3 was written failed by the other transaction)", got.res.Pending, got.pending)
			}
			for key, n := range map[string]int{"c1": 1, "c2": 1, "c3": 0, "c4": 1} {
				attempts, err := s.ListAttempts(ctx, key)
				if err != nil || len(attempts) != n {
					t.Fatalf("attempts of %s = %+v, %v", key, attempts, err)
				}
			}
			in, err := s.GetIntent(ctx, "c3")
			if err != nil || in.State != ledger.StateFailed {
				t.Fatalf("c3 = %+v, %v", in, err)
			}
		})
	}
}

// TestImportIntentsOtherErrorsStop: an error that is not a key written
// meanwhile stops the import.
func TestImportIntentsOtherErrorsStop(t *testing.T) {
	t.Parallel()
	s := dbtest.Postgres(t)
	boom := errors.New("boom")
	_, _, err := pgstore.ImportIntentsWith(context.Background(), s.(*pgstore.Store), ledger.ImportIntentsParams{
		Rows: slices.Values([]ledger.ImportIntent{charge(t, 2, "x", "10", ledger.StatePending)}),
	}, pgstore.ImportOptions{Batch: 10, Probe: true, BeforeCreate: func(context.Context, []string) error { return boom }})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

// TestImportIntentsRowsPanic: a panic while reading the rows, which happens
// on the import's own goroutine, reaches the caller.
func TestImportIntentsRowsPanic(t *testing.T) {
	t.Parallel()
	s := dbtest.Postgres(t)
	rows := func(yield func(ledger.ImportIntent) bool) {
		if !yield(charge(t, 2, "p1", "10", ledger.StatePending)) {
			return
		}
		panic("bad row source")
	}
	defer func() {
		if p, ok := recover().(*ledger.ReaderPanic); !ok || p.Value != "bad row source" {
			t.Fatalf("recovered %v", p)
		}
	}()
	_, _, _ = pgstore.ImportIntentsWith(context.Background(), s.(*pgstore.Store), ledger.ImportIntentsParams{Rows: rows},
		pgstore.ImportOptions{Batch: 10})
	t.Fatal("no panic")
}

// TestImportIntentsGuess: a batch of new charges after a batch that found
// nothing stored is written without a look-up; when a key was stored after
// all, the batch is looked up and written as any other, and the next batch
// is looked up first.
func TestImportIntentsGuess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t)
	if _, _, err := s.CreateIntent(ctx, charge(t, 0, "g4", "40", ledger.StateSucceeded).NewIntent); err != nil {
		t.Fatal(err)
	}
	var rows []ledger.ImportIntent
	for i := range 9 {
		rows = append(rows, charge(t, 2+i, fmt.Sprintf("g%d", i), fmt.Sprint(10*i+10), ledger.StatePending, fmt.Sprintf("RG%d", i)))
	}
	rows[4].Amount = kesAmount(t, "41") // g4 is stored with 40, not 50 either
	// Batches: g0-g2 guessed; g3-g5 guessed, meets g4, looked up; g6-g8
	// looked up (the last batch found g4), found nothing.
	got := runImport(t, s, rows, pgstore.ImportOptions{Batch: 3})
	if got.stats != (pgstore.ImportStats{GuessFailed: 1}) || got.res.Created != 8 || len(got.refused) != 1 ||
		!strings.HasPrefix(got.refused[0], "line 6: key reused") || got.res.Pending != 8 {
		t.Fatalf("import = %+v", got)
	}
	for i := range 9 {
		want := 1
		if i == 4 {
			want = 0
		}
		if attempts, err := s.ListAttempts(ctx, fmt.Sprintf("g%d", i)); err != nil || len(attempts) != want {
			t.Fatalf("attempts of g%d = %+v, %v", i, attempts, err)
		}
	}
}
