package ledgertest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// branch is the second M-Pesa account of the accounts exercise; the
// default account is the empty one.
const branch = "600639"

// exerciseAccounts checks that the books keep the accounts of a provider
// apart: every intent, transaction, finding and run names its account,
// and what a run of one account reads, looks up, claims and resolves is
// that account's alone.
func exerciseAccounts(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	seedAccounts(t, s)
	window := func(account string) (ledger.IntentFilter, ledger.TxnFilter) {
		return ledger.IntentFilter{Provider: "mpesa", Account: account, From: T0, To: T0.Add(time.Hour)},
			ledger.TxnFilter{Provider: "mpesa", Account: account, From: T0, To: T0.Add(time.Hour)}
	}
	for account, want := range map[string][2][]string{
		"":     {{"k-main"}, {"T-MAIN"}},
		branch: {{"k-branch", "k-branch-import"}, {"T-BRANCH"}},
	} {
		fi, ft := window(account)
		var keys, ids []string
		if err := s.ScanIntents(ctx, fi, func(r *ledger.IntentRow) error { keys = append(keys, string(r.Key)); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := s.ScanProviderTxns(ctx, ft, func(r *ledger.TxnRow) error { ids = append(ids, string(r.ID)); return nil }); err != nil {
			t.Fatal(err)
		}
		slices.Sort(keys)
		slices.Sort(ids)
		if !slices.Equal(keys, want[0]) || !slices.Equal(ids, want[1]) {
			t.Errorf("account %q scans intents %v and transactions %v, want %v and %v", account, keys, ids, want[0], want[1])
		}
		listed := 0
		err := s.ListProviderTxns(ctx, ft, func(tx ledger.ProviderTxn) error {
			listed++
			if tx.Account != account {
				t.Errorf("account %q lists %s of account %q", account, tx.ID, tx.Account)
			}
			return nil
		})
		if err != nil || listed != len(want[1]) {
			t.Errorf("account %q lists %d transactions (%v), want %d", account, listed, err, len(want[1]))
		}
	}
	checkAccountLookups(t, s)
	checkAccountRuns(t, s)
	checkAccountFindings(t, s)
}

// seedAccounts stores an intent and a transaction in each account (the
// branch's second intent by bulk import), and checks that a key or a
// transaction cannot move to another account.
func seedAccounts(t *testing.T, s ledger.Store) {
	ctx := context.Background()
	main := params(t, "k-main", "100")
	br := params(t, "k-branch", "100")
	br.Account = branch
	for _, p := range []ledger.IntentParams{main, br} {
		in, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, CreatedAt: T0})
		if err != nil || in.Account != p.Account {
			t.Fatalf("create %s in account %q: got account %q (%v)", p.Key, p.Account, in.Account, err)
		}
	}
	moved := br
	moved.Account = ""
	if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: moved, CreatedAt: T0}); !errors.Is(err, ledger.ErrConflict) {
		t.Fatalf("the same key in another account: %v, want a key reuse", err)
	}
	imp := ledger.ImportIntent{NewIntent: ledger.NewIntent{IntentParams: params(t, "k-branch-import", "70"), CreatedAt: T0}, Line: 2}
	imp.Account = branch
	err := s.InTx(ctx, func(tx ledger.Tx) error {
		res, err := tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values([]ledger.ImportIntent{imp})})
		if err == nil && res.Created != 1 {
			t.Errorf("import created %d intents, want 1", res.Created)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if in, err := s.GetIntent(ctx, "k-branch-import"); err != nil || in.Account != branch {
		t.Fatalf("imported intent in account %q (%v), want %q", in.Account, err, branch)
	}
	tMain, tBranch := charge(t, "T-MAIN", "100"), charge(t, "T-BRANCH", "100")
	tMain.Reference, tBranch.Reference, tBranch.Account = "k-main", "k-branch", branch
	src := func(id string) ledger.Source {
		return ledger.Source{Channel: "statement", Ref: "s:" + id, Raw: []byte(id), ReceivedAt: T0}
	}
	c, err := s.UpsertProviderTxns(ctx, []ledger.Sighting{{Txn: tMain, Source: src("T-MAIN")}, {Txn: tBranch, Source: src("T-BRANCH")}})
	if err != nil || c.NewTxns != 2 {
		t.Fatalf("upsert two accounts' transactions: %+v, %v", c, err)
	}
	elsewhere := tBranch
	elsewhere.Account = ""
	res, err := s.UpsertProviderTxn(ctx, elsewhere, ledger.Source{Channel: "c2b_confirmation", Ref: "c2b:T-BRANCH", ReceivedAt: T0})
	if err != nil || res.Conflict == "" {
		t.Fatalf("a transaction seen in another account: %+v, %v; want a conflict", res, err)
	}
	if got, err := s.GetProviderTxn(ctx, "mpesa", "T-BRANCH"); err != nil || got.Account != branch {
		t.Fatalf("T-BRANCH is in account %q (%v), want %q", got.Account, err, branch)
	}
}

// checkAccountLookups checks that the look-ups across windows find only
// the account's own intents and transactions.
func checkAccountLookups(t *testing.T, s ledger.Store) {
	ctx := context.Background()
	from, to := T0.Add(-48*time.Hour), T0.Add(48*time.Hour)
	ins, err := s.FindIntents(ctx, ledger.IntentLookup{Provider: "mpesa", Account: branch, From: from, To: to,
		Keys: []string{"k-main", "k-branch"}, RefNorms: []string{ledger.NormalReference("k-main")}})
	if err != nil || len(ins) != 1 || ins[0].Key != "k-branch" {
		t.Errorf("branch look-up found %v (%v), want k-branch alone", keysOf(ins), err)
	}
	txns, err := s.FindTxns(ctx, ledger.TxnLookup{Provider: "mpesa", From: from, To: to, IDs: []string{"T-MAIN", "T-BRANCH"}})
	if err != nil || len(txns) != 1 || txns[0].ID != "T-MAIN" {
		t.Errorf("default account look-up found %d transactions (%v), want T-MAIN alone", len(txns), err)
	}
}

func keysOf(ins []ledger.Intent) []string {
	out := make([]string, len(ins))
	for i, in := range ins {
		out[i] = in.Key
	}
	return out
}

// checkAccountRuns checks that each account claims the same window as a
// run of its own.
func checkAccountRuns(t *testing.T, s ledger.Store) {
	ctx := context.Background()
	claim := func(account string) ledger.Run {
		r, err := s.ClaimRun(ctx, ledger.RunClaim{Provider: "mpesa", Account: account, From: T0, To: T0.Add(time.Hour),
			Owner: "w-" + account, Lease: time.Minute, Now: T0})
		if err != nil {
			t.Fatalf("claim account %q: %v", account, err)
		}
		return r
	}
	a, b := claim(""), claim(branch)
	if a.ID == b.ID || a.Account != "" || b.Account != branch || b.Key != ledger.AccountRunKey("mpesa", branch, T0, T0.Add(time.Hour)) {
		t.Fatalf("runs of two accounts: %+v and %+v", a, b)
	}
	if got, err := s.GetRunByKey(ctx, b.Key); err != nil || got.ID != b.ID || got.Account != branch {
		t.Fatalf("run by key %s: %+v, %v", b.Key, got, err)
	}
}

// checkAccountFindings checks that findings keep their account, list by
// it, and that a run of one account resolves none of another's.
func checkAccountFindings(t *testing.T, s ledger.Store) {
	ctx := context.Background()
	mk := func(id, account string) ledger.Finding {
		return ledger.Finding{ID: id, Kind: ledger.KindMissingAtProvider, Severity: ledger.SeverityMedium, Provider: "mpesa",
			Account: account, IntentKey: id, Expected: kes(t, "100"), OccurredAt: T0}
	}
	if _, err := s.UpsertFindings(ctx, []ledger.Finding{mk("f-main", ""), mk("f-branch", branch)}, 1, T0); err != nil {
		t.Fatal(err)
	}
	if ch, err := s.UpsertFinding(ctx, mk("f-branch-2", branch), 1, T0); err != nil || ch.Finding.Account != branch {
		t.Fatalf("upsert finding: %+v, %v", ch.Finding, err)
	}
	for _, c := range []struct {
		accounts []string
		want     int
	}{{nil, 3}, {[]string{""}, 1}, {[]string{branch}, 2}, {[]string{"", branch}, 3}} {
		fs, err := s.ListFindings(ctx, ledger.FindingFilter{Provider: "mpesa", Accounts: c.accounts})
		if err != nil || len(fs) != c.want {
			t.Errorf("findings of accounts %q: %d (%v), want %d", c.accounts, len(fs), err, c.want)
		}
	}
	later := T0.Add(time.Hour)
	unseen, err := s.ListUnseen(ctx, ledger.UnseenFilter{Provider: "mpesa", Account: branch, From: T0, To: later,
		IntentKeys: []string{"f-main", "f-branch"}, SeenSince: later})
	if err != nil || len(unseen) != 2 {
		t.Errorf("branch's unseen findings: %d (%v), want its own 2", len(unseen), err)
	}
	rs, err := s.ResolveUnseen(ctx, ledger.ResolveUnseenParams{Provider: "mpesa", From: T0, To: later, SeenSince: later,
		Note: "not seen", Now: later, RunID: 2})
	if err != nil || len(rs) != 1 || rs[0].ID != "f-main" {
		t.Fatalf("default account's run resolved %d findings (%v), want f-main alone", len(rs), err)
	}
	if f, err := s.GetFinding(ctx, "f-branch"); err != nil || f.Status != ledger.FindingOpen || f.Account != branch {
		t.Fatalf("branch finding after the default account's run: %+v, %v", f, err)
	}
}
