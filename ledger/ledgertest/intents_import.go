package ledgertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

func importRow(t testing.TB, line int, key, amount string, state ledger.State, refs ...string) ledger.ImportIntent {
	p := params(t, key, amount)
	return ledger.ImportIntent{NewIntent: ledger.NewIntent{IntentParams: p, State: state, CreatedAt: T0.Add(time.Duration(line) * time.Second)},
		Line: line, ProviderRefs: refs}
}

func importAll(t testing.TB, s ledger.Store, rows []ledger.ImportIntent, pending func(context.Context, []string) error) ledger.ImportIntentsResult {
	t.Helper()
	var res ledger.ImportIntentsResult
	err := s.InTx(context.Background(), func(tx ledger.Tx) (err error) {
		res, err = tx.ImportIntents(context.Background(), ledger.ImportIntentsParams{Rows: slices.Values(rows), Pending: pending})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func refusedLines(res ledger.ImportIntentsResult) []int {
	var lines []int
	for _, r := range res.Refused {
		lines = append(lines, r.Line)
	}
	sort.Ints(lines)
	return lines
}

func exerciseImportIntents(t *testing.T, newStore NewStore) {
	ctx := context.Background()

	t.Run("CreatesOnceWithAttempts", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		stored := mustCreate(t, s, params(t, "api-1", "10"))
		rows := []ledger.ImportIntent{
			importRow(t, 2, "imp-1", "100", ledger.StateSucceeded, "ws_CO_1", "NLJ7RT61SV"),
			importRow(t, 3, "imp-2", "250.50", ledger.StateFailed),
			importRow(t, 4, "api-1", "10", ledger.StateSucceeded, "ignored-ref"), // stored before: existing
			importRow(t, 5, "imp-1", "100.00", ledger.StateSucceeded, "ws_CO_1"), // a repeat with the same parameters
		}
		res := importAll(t, s, rows, nil)
		if res.Rows != 4 || res.Created != 2 || res.Existing != 2 || len(res.Refused) != 0 || res.Pending != 0 {
			t.Fatalf("import = %+v", res)
		}
		in, err := s.GetIntent(ctx, "imp-1")
		if err != nil || in.State != ledger.StateSucceeded || !in.CreatedAt.Equal(T0.Add(2*time.Second)) ||
			in.Reference != ledger.DeriveReference("imp-1") || in.Customer != "254712340845" {
			t.Fatalf("imp-1 = %+v, %v", in, err)
		}
		attempts, err := s.ListAttempts(ctx, "imp-1")
		if err != nil || len(attempts) != 2 || attempts[0].ProviderRef != "ws_CO_1" || attempts[1].ProviderRef != "NLJ7RT61SV" ||
			attempts[0].Number != 1 || attempts[1].Number != 2 || attempts[0].Outcome != ledger.OutcomeImported ||
			attempts[0].ClaimToken != 0 || !attempts[0].StartedAt.Equal(in.CreatedAt) {
			t.Fatalf("imp-1 attempts = %+v, %v", attempts, err)
		}
		if attempts, _ := s.ListAttempts(ctx, "api-1"); len(attempts) != 0 {
			t.Fatalf("an existing intent gained attempts: %+v", attempts)
		}
		if got, _ := s.GetIntent(ctx, "api-1"); got.State != stored.State || !got.CreatedAt.Equal(stored.CreatedAt) {
			t.Fatalf("an existing intent changed: %+v", got)
		}
		// Again: nothing changes and the counts say so.
		again := importAll(t, s, rows, nil)
		if again.Rows != 4 || again.Created != 0 || again.Existing != 4 || len(again.Refused) != 0 {
			t.Fatalf("re-import = %+v", again)
		}
		if attempts, _ := s.ListAttempts(ctx, "imp-1"); len(attempts) != 2 {
			t.Fatalf("re-import added attempts: %+v", attempts)
		}
	})

	t.Run("RefusesKeyReuseAndInvalidRows", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		mustCreate(t, s, params(t, "api-1", "10"))
		bad := importRow(t, 6, "bad", "10", ledger.StatePending)
		bad.Reference = "THIRTEEN-CHAR"
		rows := []ledger.ImportIntent{
			importRow(t, 2, "new-1", "5", ledger.StatePending),
			importRow(t, 3, "api-1", "11", ledger.StateSucceeded), // stored with 10
			importRow(t, 4, "new-2", "7", ledger.StateFailed),
			importRow(t, 5, "new-2", "8", ledger.StateFailed), // the file's own line 4 says 7
			bad,
		}
		pendingCalled := false
		res := importAll(t, s, rows, func(context.Context, []string) error { pendingCalled = true; return nil })
		if res.Rows != 5 || res.Created != 2 || res.Existing != 0 || fmt.Sprint(refusedLines(res)) != "[3 5 6]" {
			t.Fatalf("import = %+v (refused lines %v)", res, refusedLines(res))
		}
		if pendingCalled {
			t.Fatal("Pending was called for an import with refused rows")
		}
		for _, r := range res.Refused {
			var (
				kr *ledger.KeyReuseError
				fe *ledger.FieldError
			)
			switch r.Line {
			case 3:
				if !errors.As(r.Err, &kr) || kr.Key != "api-1" || !kr.Existing.Amount.Equal(kes(t, "10")) || !kr.Requested.Amount.Equal(kes(t, "11")) {
					t.Errorf("line 3: %v", r.Err)
				}
			case 5:
				if !errors.As(r.Err, &kr) || !kr.Existing.Amount.Equal(kes(t, "7")) || !strings.Contains(r.Err.Error(), "key reused") {
					t.Errorf("line 5: %v", r.Err)
				}
			case 6:
				if !errors.As(r.Err, &fe) || fe.Field != "reference" {
					t.Errorf("line 6: %v", r.Err)
				}
			}
			if strings.Contains(r.Err.Error(), "254712340845") {
				t.Errorf("line %d: the error shows a full phone number: %v", r.Line, r.Err)
			}
		}
	})

	t.Run("RollsBackWithTheTransaction", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		errStop := errors.New("stop")
		err := s.InTx(ctx, func(tx ledger.Tx) error {
			if _, err := tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values([]ledger.ImportIntent{
				importRow(t, 2, "k", "1", ledger.StateSucceeded, "ref")})}); err != nil {
				return err
			}
			return errStop
		})
		if !errors.Is(err, errStop) {
			t.Fatal(err)
		}
		if _, err := s.GetIntent(ctx, "k"); !errors.Is(err, ledger.ErrNotFound) {
			t.Fatalf("rolled back import left an intent: %v", err)
		}
		// Outside a transaction the import is atomic on its own.
		res, err := s.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values([]ledger.ImportIntent{
			importRow(t, 2, "k", "1", ledger.StateSucceeded, "ref")})})
		if err != nil || res.Created != 1 {
			t.Fatalf("import outside a transaction = %+v, %v", res, err)
		}
		if attempts, _ := s.ListAttempts(ctx, "k"); len(attempts) != 1 {
			t.Fatalf("attempts = %+v", attempts)
		}
	})

	t.Run("PendingKeysInPages", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		// More rows than one chunk or page of any engine, repeats across
		// them, and intents that stopped being pending.
		const n = 6003
		var rows []ledger.ImportIntent
		for i := range n {
			state := ledger.StateSucceeded
			if i%2 == 0 {
				state = ledger.StatePending
			}
			rows = append(rows, importRow(t, i+2, fmt.Sprintf("k%05d", i), "1", state, fmt.Sprintf("ref-%d", i)))
		}
		rows = append(rows, rows[0], rows[2], rows[1]) // repeats of the first lines, at the end
		for i := range rows[n:] {
			rows[n+i].Line = n + 2 + i
		}
		collect := func() (map[string]int, ledger.ImportIntentsResult) {
			seen := map[string]int{}
			res := importAll(t, s, rows, func(_ context.Context, keys []string) error {
				if len(keys) == 0 || len(keys) > 5000 {
					t.Errorf("a page of %d keys", len(keys))
				}
				for _, k := range keys {
					seen[k]++
				}
				return nil
			})
			return seen, res
		}
		seen, res := collect()
		wantPending := (n + 1) / 2
		if res.Created != n || res.Existing != 3 || len(res.Refused) != 0 || res.Pending != wantPending || len(seen) != wantPending {
			t.Fatalf("import = created %d existing %d refused %v pending %d, %d keys seen", res.Created, res.Existing,
				res.Refused, res.Pending, len(seen))
		}
		for k, c := range seen {
			if c != 1 {
				t.Fatalf("key %s handed over %d times", k, c)
			}
		}
		if seen["k00000"] != 1 || seen["k00001"] != 0 {
			t.Fatalf("pending keys wrong: k00000 %d, k00001 %d", seen["k00000"], seen["k00001"])
		}
		// One of them was charged meanwhile: the next import names the rest.
		if _, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "k00000", Owner: "w", Lease: time.Minute, Now: T0}); err != nil {
			t.Fatal(err)
		}
		seen, res = collect()
		if res.Created != 0 || res.Existing != n+3 || res.Pending != wantPending-1 || len(seen) != wantPending-1 || seen["k00000"] != 0 {
			t.Fatalf("re-import = %+v, %d keys seen", res, len(seen))
		}
		if attempts, _ := s.ListAttempts(ctx, "k00002"); len(attempts) != 1 || attempts[0].ProviderRef != "ref-2" {
			t.Fatalf("attempts of a repeated key = %+v", attempts)
		}
		// Without a callback the count is still given.
		if res := importAll(t, s, rows, nil); res.Pending != wantPending-1 {
			t.Fatalf("pending without a callback = %d", res.Pending)
		}
		// An error of the callback fails the import.
		errEnqueue := errors.New("enqueue failed")
		err := s.InTx(ctx, func(tx ledger.Tx) error {
			_, err := tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values(rows),
				Pending: func(context.Context, []string) error { return errEnqueue }})
			return err
		})
		if !errors.Is(err, errEnqueue) {
			t.Fatalf("callback error = %v", err)
		}
	})
}
