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

// exerciseExpected covers expected payments: their due date and tolerance
// are stored, compared as parameters and read back by every path (get, scan,
// import), and refused on other kinds.
func exerciseExpected(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	due := T0.Add(72 * time.Hour)
	inv := ledger.IntentParams{Key: "inv:3001", Kind: ledger.IntentExpected, Provider: "mpesa", Amount: kes(t, "1500"),
		Reference: "INV3001", DueAt: due, Tolerance: kes(t, "5")}
	got := mustCreate(t, s, inv)
	if got.Kind != ledger.IntentExpected || !got.DueAt.Equal(due) || !got.Tolerance.Equal(kes(t, "5")) {
		t.Fatalf("created %+v", got.IntentParams)
	}
	stored, err := s.GetIntent(ctx, inv.Key)
	if err != nil || stored.Kind != ledger.IntentExpected || !stored.DueAt.Equal(due) || !stored.Tolerance.Equal(kes(t, "5")) {
		t.Fatalf("get: %+v, %v", stored.IntentParams, err)
	}
	t.Run("the same request returns it, another due date is key reuse", func(t *testing.T) {
		if _, created, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: inv, CreatedAt: T0}); err != nil || created {
			t.Fatalf("replay: created %v, %v", created, err)
		}
		other := inv
		other.DueAt = due.Add(time.Hour)
		var kr *ledger.KeyReuseError
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: other, CreatedAt: T0}); !errors.As(err, &kr) {
			t.Fatalf("another due date: %v, want key reuse", err)
		}
		other = inv
		other.Tolerance = kes(t, "0")
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: other, CreatedAt: T0}); !errors.As(err, &kr) {
			t.Fatalf("no tolerance: %v, want key reuse", err)
		}
	})
	t.Run("only an expected payment has a due date or a tolerance", func(t *testing.T) {
		var fe *ledger.FieldError
		p := params(t, "c1", "10")
		p.DueAt = due
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, CreatedAt: T0}); !errors.As(err, &fe) || fe.Field != "due_at" {
			t.Fatalf("charge with a due date: %v", err)
		}
		p = params(t, "c1", "10")
		p.Kind, p.Tolerance = ledger.IntentExpected, kes(t, "10")
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, CreatedAt: T0}); !errors.As(err, &fe) || fe.Field != "tolerance" {
			t.Fatalf("tolerance as large as the amount: %v", err)
		}
	})
	t.Run("imported, scanned and refunded", func(t *testing.T) {
		row := importRow(t, 1, "inv:3002", "2000", ledger.StatePending)
		row.Kind, row.DueAt, row.Tolerance, row.Reference = ledger.IntentExpected, due, kes(t, "1.50"), "inv-3002"
		plain := importRow(t, 2, "inv:3003", "700", ledger.StatePending)
		plain.Kind = ledger.IntentExpected
		var pending []string
		res := importAll(t, s, []ledger.ImportIntent{row, plain}, func(_ context.Context, keys []string) error {
			pending = append(pending, keys...)
			return nil
		})
		if res.Created != 2 || len(res.Refused) != 0 || res.Pending != 0 || len(pending) != 0 {
			t.Fatalf("import: %+v, pending %v (an expected payment is never charged)", res, pending)
		}
		res = importAll(t, s, []ledger.ImportIntent{row, plain}, nil)
		if res.Existing != 2 || len(res.Refused) != 0 {
			t.Fatalf("import again: %+v", res)
		}
		var rows []string
		err := s.ScanIntents(ctx, ledger.IntentFilter{Provider: "mpesa", From: T0.Add(-time.Hour), To: T0.Add(time.Hour)}, func(r *ledger.IntentRow) error {
			rows = append(rows, fmt.Sprintf("%s expected=%v due=%s tol=%d", r.Key, r.Expected, r.DueAt.Format(time.RFC3339), r.Tolerance))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(rows)
		want := []string{
			"c1 expected=false due=0001-01-01T00:00:00Z tol=0",
			"inv:3001 expected=true due=2026-11-05T09:30:00Z tol=500",
			"inv:3002 expected=true due=2026-11-05T09:30:00Z tol=150",
			"inv:3003 expected=true due=0001-01-01T00:00:00Z tol=0",
		}
		if !slices.Equal(rows, want[1:]) && !slices.Equal(rows, want) {
			t.Fatalf("scanned:\n%q\nwant\n%q", rows, want[1:])
		}
		// An expected payment can be refunded (an overpayment given back).
		if err := s.InTx(ctx, func(tx ledger.Tx) error {
			_, err := tx.TransitionIntent(ctx, ledger.TransitionParams{Key: "inv:3001", From: []ledger.State{ledger.StatePending},
				To: ledger.StateSucceeded, Now: T0})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := createRefund(s, refundParams(t, "refund:inv:3001:1", "inv:3001", "500")); err != nil {
			t.Fatalf("refund of an expected payment: %v", err)
		}
	})
}

// exerciseLookups covers the look-ups of a reconcile's leftovers: intents
// and transactions of other windows by key, normal reference, provider
// reference, the charge refunded, the transaction named, and manual links,
// bounded in time except by key and id.
func exerciseLookups(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	day := 24 * time.Hour
	create := func(key, ref string, at time.Time, kind ledger.IntentKind, of string) {
		t.Helper()
		p := ledger.IntentParams{Key: key, Kind: kind, RefundOf: of, Provider: "mpesa", Amount: kes(t, "100"), Reference: ref}
		state := ledger.StateSucceeded
		if kind == ledger.IntentRefund || key == "other" {
			state = ledger.StatePending
		}
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, State: state, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	create("inv:1", "INV-0001", T0, ledger.IntentExpected, "")
	create("inv:2", "inv 0002", T0.Add(-40*day), ledger.IntentExpected, "")
	create("order:3", "", T0.Add(day), ledger.IntentCharge, "")
	create("refund:3", "", T0.Add(2*day), ledger.IntentRefund, "order:3")
	create("other", "INV0001", T0, ledger.IntentCharge, "")
	if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "stripe:1", Provider: "stripe",
		Amount: kes(t, "100"), Reference: "INV0001"}, CreatedAt: T0}); err != nil {
		t.Fatal(err)
	}
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "other", Owner: "w", Lease: time.Minute, Now: T0})
	if err == nil {
		_, err = s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "other", ClaimToken: in.ClaimToken, ProviderRef: "ws_CO_9", Now: T0})
	}
	if err != nil {
		t.Fatal(err)
	}
	importRefs := importRow(t, 9, "imp:9", "100", ledger.StateSucceeded, "ws_CO_1", "ws_CO_2")
	importAll(t, s, []ledger.ImportIntent{importRefs}, nil)

	txn := func(id, ref, pref, linked string, typ ledger.TxnType, at time.Time) {
		t.Helper()
		tx := ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: typ, Status: ledger.TxnSucceeded, Amount: kes(t, "100"),
			OccurredAt: at, Reference: ref, ProviderRef: pref, LinkedID: linked}
		if _, err := s.UpsertProviderTxn(ctx, tx, ledger.Source{Channel: "statement", Ref: id, ReceivedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	txn("SA1", "inv.0001", "", "", ledger.TxnCharge, T0.Add(2*day))
	txn("SA2", "INV 0001", "", "", ledger.TxnCharge, T0.Add(50*day))
	txn("SB1", "", "ws_CO_1", "", ledger.TxnCharge, T0)
	txn("SC1", "", "", "SB1", ledger.TxnReversal, T0.Add(3*day))
	txn("SD1", "", "", "", ledger.TxnCharge, T0.Add(-100*day))
	// A sighting that fills the reference of a stored transaction fills
	// its normal form too.
	txn("SE1", "", "", "", ledger.TxnCharge, T0)
	txn("SE1", "Inv/0001", "", "", ledger.TxnCharge, T0)

	keys := func(ins []ledger.Intent) []string {
		var out []string
		for _, in := range ins {
			out = append(out, in.Key)
		}
		slices.Sort(out)
		return out
	}
	ids := func(ts []ledger.ProviderTxn) []string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		slices.Sort(out)
		return out
	}
	from, to := T0.Add(-35*day), T0.Add(35*day)
	for _, c := range []struct {
		name string
		l    ledger.IntentLookup
		want []string
	}{
		{"nothing", ledger.IntentLookup{Provider: "mpesa", From: from, To: to}, nil},
		{"by normal reference, in the horizon, of the provider", ledger.IntentLookup{Provider: "mpesa", From: from, To: to,
			RefNorms: []string{"INV0001", "INV0002", ""}}, []string{"inv:1", "other"}},
		{"by key, whatever the age", ledger.IntentLookup{Provider: "mpesa", From: from, To: to, Keys: []string{"inv:2", "nope", "stripe:1"}},
			[]string{"inv:2"}},
		{"by provider reference of an attempt", ledger.IntentLookup{Provider: "mpesa", From: from, To: to,
			ProviderRefs: []string{"ws_CO_2", "ws_CO_9"}}, []string{"imp:9", "other"}},
		{"refunds of a charge", ledger.IntentLookup{Provider: "mpesa", From: from, To: to, RefundOf: []string{"order:3"}},
			[]string{"refund:3"}},
		{"all at once, once each", ledger.IntentLookup{Provider: "mpesa", From: from, To: to, Keys: []string{"inv:1"},
			RefNorms: []string{"INV0001"}, ProviderRefs: []string{"ws_CO_1"}}, []string{"imp:9", "inv:1", "other"}},
	} {
		got, err := s.FindIntents(ctx, c.l)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(keys(got), c.want) {
			t.Errorf("%s: found %v, want %v", c.name, keys(got), c.want)
		}
		for _, in := range got {
			if in.Key == "imp:9" && !slices.Equal(in.ProviderRefs, []string{"ws_CO_1", "ws_CO_2"}) {
				t.Errorf("%s: imp:9 with provider refs %v", c.name, in.ProviderRefs)
			}
		}
	}
	for _, c := range []struct {
		name string
		l    ledger.TxnLookup
		want []string
	}{
		{"nothing", ledger.TxnLookup{Provider: "mpesa", From: from, To: to}, nil},
		{"by normal reference, in the horizon (a filled one too)", ledger.TxnLookup{Provider: "mpesa", From: from, To: to,
			RefNorms: []string{"INV0001"}}, []string{"SA1", "SE1"}},
		{"by id, whatever the age", ledger.TxnLookup{Provider: "mpesa", From: from, To: to, IDs: []string{"SD1", "SA2", "X"}},
			[]string{"SA2", "SD1"}},
		{"by provider reference", ledger.TxnLookup{Provider: "mpesa", From: from, To: to, ProviderRefs: []string{"ws_CO_1", ""}},
			[]string{"SB1"}},
		{"what names a transaction", ledger.TxnLookup{Provider: "mpesa", From: from, To: to, Linked: []string{"SB1", ""}},
			[]string{"SC1"}},
		{"another provider", ledger.TxnLookup{Provider: "stripe", From: from, To: to, IDs: []string{"SA1"}, RefNorms: []string{"INV0001"}},
			nil},
	} {
		got, err := s.FindTxns(ctx, c.l)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(ids(got), c.want) {
			t.Errorf("%s: found %v, want %v", c.name, ids(got), c.want)
		}
	}
	t.Run("manual links by transaction and by intent", func(t *testing.T) {
		for _, l := range []ledger.ManualLink{{Provider: "mpesa", TxnID: "SA2", IntentKey: "inv:2", Actor: "ann", At: T0},
			{Provider: "mpesa", TxnID: "SD1", IntentKey: "other", Actor: "ann", At: T0}} {
			if err := s.AddManualLink(ctx, l); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.FindManualLinks(ctx, "mpesa", []string{"SA2"}, []string{"other", "inv:2"})
		if err != nil {
			t.Fatal(err)
		}
		var pairs []string
		for _, l := range got {
			pairs = append(pairs, l.TxnID+"->"+l.IntentKey)
		}
		slices.Sort(pairs)
		if !slices.Equal(pairs, []string{"SA2->inv:2", "SD1->other"}) {
			t.Fatalf("manual links %v", pairs)
		}
		if got, err := s.FindManualLinks(ctx, "stripe", []string{"SA2"}, nil); err != nil || len(got) != 0 {
			t.Fatalf("another provider: %v, %v", got, err)
		}
	})
}

// exerciseUnseen covers what a run resolves beyond its window: the unseen
// findings of a window, of intents whatever their window, and by id, each
// resolved with a note of its own.
func exerciseUnseen(t *testing.T, newStore NewStore) {
	ctx := context.Background()
	s := newStore(t)
	day := 24 * time.Hour
	finding := func(kind ledger.Kind, key, txn string, at time.Time) ledger.Finding {
		var ids []string
		if txn != "" {
			ids = []string{txn}
		}
		return ledger.Finding{ID: ledger.FindingID(kind, key, ids), Kind: kind, Severity: ledger.SeverityMedium, Provider: "mpesa",
			IntentKey: key, ProviderTxnIDs: ids, Expected: kes(t, "100"), AtRisk: kes(t, "100"), Detail: string(kind), OccurredAt: at}
	}
	inWindow := finding(ledger.KindUnknownCharge, "", "T1", T0)
	earlier := finding(ledger.KindMissingAtProvider, "inv:1", "", T0.Add(-5*day))
	earlierOther := finding(ledger.KindMissingAtProvider, "inv:9", "", T0.Add(-5*day))
	byID := finding(ledger.KindUnknownCharge, "", "T7", T0.Add(-9*day))
	seen := finding(ledger.KindStuckIntent, "k2", "", T0)
	stripe := finding(ledger.KindUnknownCharge, "", "T8", T0)
	stripe.Provider = "stripe"
	if _, err := s.UpsertFindings(ctx, []ledger.Finding{inWindow, earlier, earlierOther, byID, seen, stripe}, 1, T0); err != nil {
		t.Fatal(err)
	}
	runStart := T0.Add(time.Hour)
	if _, err := s.UpsertFindings(ctx, []ledger.Finding{seen}, 2, runStart.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListUnseen(ctx, ledger.UnseenFilter{Provider: "mpesa", From: T0.Add(-time.Hour), To: T0.Add(day),
		IntentKeys: []string{"inv:1"}, IDs: []string{byID.ID, stripe.ID}, SeenSince: runStart})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range got {
		ids = append(ids, f.ID)
	}
	if want := []string{byID.ID, earlier.ID, inWindow.ID}; !slices.Equal(ids, want) {
		t.Fatalf("unseen %v, want %v (by id, by intent, in the window; not the one seen, not another provider's)", ids, want)
	}
	res, err := s.ResolveFindings(ctx, ledger.ResolveFindingsParams{Resolutions: []ledger.Resolution{
		{ID: earlier.ID, Note: "paid 2026-11-04, receipt T3, 2 days after the intent"},
		{ID: inWindow.ID, Note: "linked to intent inv:1"},
		{ID: seen.ID, Note: "never"},
	}, SeenSince: runStart, Now: runStart.Add(time.Minute), RunID: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].ID != earlier.ID || res[1].ID != inWindow.ID {
		t.Fatalf("resolved %+v, want the earlier finding and the window's (not the one seen since)", res)
	}
	for _, f := range res {
		if f.Status != ledger.FindingResolved || f.ResolvedBy != ledger.ResolvedByRun || f.Resolver != "run 2" {
			t.Fatalf("resolved as %+v", f)
		}
	}
	if h := mustHistory(t, s, earlier.ID); !strings.Contains(h, `auto_resolved by run via run run=2 note="paid 2026-11-04, receipt T3, 2 days after the intent"`) {
		t.Fatalf("history:\n%s", h)
	}
	if f, err := s.GetFinding(ctx, seen.ID); err != nil || f.Status != ledger.FindingOpen {
		t.Fatalf("seen since: %+v, %v", f.Status, err)
	}
	// Resolved findings are not listed again, nor resolved twice.
	if got, err := s.ListUnseen(ctx, ledger.UnseenFilter{Provider: "mpesa", IntentKeys: []string{"inv:1"}, SeenSince: runStart}); err != nil || len(got) != 0 {
		t.Fatalf("after: %v, %v", got, err)
	}
	if res, err := s.ResolveFindings(ctx, ledger.ResolveFindingsParams{Resolutions: []ledger.Resolution{{ID: earlier.ID, Note: "again"}},
		SeenSince: runStart, Now: runStart.Add(time.Hour), RunID: 3}); err != nil || len(res) != 0 {
		t.Fatalf("twice: %v, %v", res, err)
	}
}
