package matcher_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/money"
)

// randomInput builds intents and transactions from small pools of
// references, amounts and customers so that collisions, shared references,
// duplicates, refunds of unknown charges and fuzzy candidates all occur.
func randomInput(t testing.TB, r *rand.Rand, nIntents, nTxns int) ([]in, []tx) {
	states := []ledger.State{ledger.StatePending, ledger.StateProcessing, ledger.StateSucceeded, ledger.StateFailed, ledger.StateUnknown}
	amounts := []string{"100", "250", "1500", "1500.50"}
	curs := []string{"KES", "KES", "KES", "USD"}
	customers := []string{"254712340845", "254700000001", "jane@example.com", ""}
	span := 30 * time.Hour
	at := func() time.Time { return day.Add(-3 * time.Hour).Add(time.Duration(r.Int64N(int64(span)))) }
	var intents []in
	for i := range nIntents {
		created := at()
		var refs []string
		for range r.IntN(3) {
			refs = append(refs, fmt.Sprintf("pref-%d", r.IntN(nIntents+5)))
		}
		slices.Sort(refs)
		refs = slices.Compact(refs)
		ref := fmt.Sprintf("REF%d", r.IntN(nIntents/2+1))
		a := amt(t, amounts[r.IntN(len(amounts))], "KES")
		intents = append(intents, in{IntentParams: ledger.IntentParams{Key: fmt.Sprintf("key-%d", i), Provider: "mpesa",
			Amount: a, Customer: customers[r.IntN(len(customers))], Reference: ref},
			State: states[r.IntN(len(states))], CreatedAt: created, UpdatedAt: created.Add(time.Duration(r.IntN(600)) * time.Second),
			LeaseExpiresAt: created.Add(15 * time.Minute), ProviderRefs: refs})
		if j := r.IntN(i + 1); j < i && r.IntN(4) == 0 && intents[j].Kind != ledger.IntentRefund {
			intents[i].Kind, intents[i].RefundOf = ledger.IntentRefund, intents[j].Key // a refund of an earlier charge
		}
	}
	types := []ledger.TxnType{ledger.TxnCharge, ledger.TxnCharge, ledger.TxnCharge, ledger.TxnRefund, ledger.TxnReversal, ledger.TxnFee, ledger.TxnPayout}
	statuses := []ledger.TxnStatus{ledger.TxnSucceeded, ledger.TxnSucceeded, ledger.TxnFailed, ledger.TxnPending}
	var txns []tx
	for i := range nTxns {
		x := tx{Provider: "mpesa", ID: fmt.Sprintf("T%05d", i), Type: types[r.IntN(len(types))], Status: statuses[r.IntN(len(statuses))],
			Amount: amt(t, amounts[r.IntN(len(amounts))], curs[r.IntN(len(curs))]), OccurredAt: at(),
			Counterparty: ledger.MaskCustomer(customers[r.IntN(len(customers))])}
		switch r.IntN(4) {
		case 0:
			x.ProviderRef = fmt.Sprintf("pref-%d", r.IntN(nIntents+5))
		case 1:
			x.Reference = strings.ToLower(fmt.Sprintf("ref%d", r.IntN(nIntents/2+1)))
		case 2:
			x.Reference = fmt.Sprintf("key-%d", r.IntN(nIntents+5))
		}
		if x.Type != ledger.TxnCharge && i > 0 && r.IntN(3) > 0 {
			x.LinkedID = fmt.Sprintf("T%05d", r.IntN(i))
		}
		txns = append(txns, x)
	}
	return intents, txns
}

// canon renders everything a finding says, amounts included.
func canon(fs []ledger.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = fmt.Sprintf("%s|%s|%s|%s|%v|%s|%s|%s|%s|%s|%s", f.ID, f.Kind, f.Severity, f.IntentKey, f.ProviderTxnIDs,
			f.Expected, f.Actual, f.AtRisk, f.Counterparty, f.Detail, f.OccurredAt.Format(time.RFC3339Nano))
	}
	return out
}

func TestInvariants(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 7))
			intents, txns := randomInput(t, r, 5+r.IntN(60), r.IntN(120))
			opt := matcher.Options{Fuzzy: seed%2 == 0, Grace: time.Duration(r.IntN(4)) * time.Hour, ReversalsAreRefunds: seed%3 == 0}
			base := run(t, opt, intents, txns)

			// Linked + unlinked = input, and every transaction appears once.
			if base.Linked+base.Unlinked != len(txns) {
				t.Fatalf("linked %d + unlinked %d != %d", base.Linked, base.Unlinked, len(txns))
			}
			seen := map[string]int{}
			for _, l := range base.Links {
				seen[l.TxnID]++
			}
			for _, id := range base.UnlinkedIDs {
				seen[id]++
			}
			for _, x := range txns {
				if seen[x.ID] != 1 {
					t.Fatalf("txn %s appears %d times in links and unlinked", x.ID, seen[x.ID])
				}
			}
			// Links obey the rules: a transaction whose provider reference
			// was recorded by some intent links by provider reference.
			prefs := map[string]bool{}
			for _, i := range intents {
				if i.Kind == ledger.IntentRefund {
					continue // only refunds link to refund intents
				}
				for _, p := range i.ProviderRefs {
					prefs[p] = true
				}
			}
			for _, l := range base.Links {
				x := txns[slices.IndexFunc(txns, func(x tx) bool { return x.ID == l.TxnID })]
				if x.Type == ledger.TxnPayout {
					t.Fatalf("payout %s linked", x.ID)
				}
				if l.Method == matcher.Fuzzy && !opt.Fuzzy {
					t.Fatalf("fuzzy link %v with fuzzy off", l)
				}
				refund := x.Type == ledger.TxnRefund || x.Type == ledger.TxnReversal && opt.ReversalsAreRefunds
				if x.LinkedID == "" && prefs[x.ProviderRef] && l.Method != matcher.ByProviderRef && !refund {
					t.Fatalf("txn %s has a recorded provider ref but linked by %s", x.ID, l.Method)
				}
			}
			// Findings: ids unique, txn ids sorted, each txn in at most one
			// finding of a kind.
			ids := map[string]bool{}
			for _, f := range base.Findings {
				if ids[f.ID] {
					t.Fatalf("finding id %s twice", f.ID)
				}
				ids[f.ID] = true
				if !slices.IsSorted(f.ProviderTxnIDs) {
					t.Fatalf("txn ids not sorted: %v", f.ProviderTxnIDs)
				}
				if f.ID != ledger.FindingID(f.Kind, f.IntentKey, f.ProviderTxnIDs) {
					t.Fatalf("finding id is not the fingerprint of its evidence: %+v", f)
				}
				if f.OccurredAt.Before(day) || !f.OccurredAt.Before(next) {
					t.Fatalf("finding outside the window: %+v", f)
				}
			}
			if base.Summary.Findings != len(base.Findings) {
				t.Fatal("summary findings != len(findings)")
			}
			// Deterministic under input order.
			want := canon(base.Findings)
			for range 4 {
				si, st := slices.Clone(intents), slices.Clone(txns)
				r.Shuffle(len(si), func(i, j int) { si[i], si[j] = si[j], si[i] })
				r.Shuffle(len(st), func(i, j int) { st[i], st[j] = st[j], st[i] })
				got := run(t, opt, si, st)
				if g := canon(got.Findings); !slices.Equal(g, want) {
					t.Fatalf("findings depend on input order:\n got %q\nwant %q", g, want)
				}
				if !slices.Equal(got.Links, base.Links) || !slices.Equal(got.Settlements, base.Settlements) || got.Summary != base.Summary {
					t.Fatal("links, settlements or summary depend on input order")
				}
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	opt := matcher.Options{Provider: "mpesa", From: day, To: next, Now: now}
	m, err := matcher.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	i := intent(t, "k1", ledger.StateSucceeded, "1500", time.Hour)
	if err := m.AddIntent(i); err != nil {
		t.Fatal(err)
	}
	if err := m.AddIntent(i); err != nil {
		t.Fatal(err) // found when indexing
	}
	if err := m.AddTxn(charge(t, "R1", ledger.TxnSucceeded, "1", time.Hour, "", "")); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("duplicate intent: %v", err)
	}

	m, _ = matcher.New(opt)
	if err := m.AddTxn(charge(t, "R1", ledger.TxnSucceeded, "1", time.Hour, "", "")); err != nil {
		t.Fatal(err)
	}
	if err := m.AddIntent(i); err != matcher.ErrOrder {
		t.Fatalf("intent after txn: %v", err)
	}
	other := i
	other.Provider = "stripe"
	m, _ = matcher.New(opt)
	if err := m.AddIntent(other); err == nil {
		t.Fatal("intent of another provider accepted")
	}
	bad := charge(t, "R1", ledger.TxnSucceeded, "1", time.Hour, "", "")
	bad.Amount = money.Amount{Value: bad.Amount.Value.Shift(-3), Currency: "KES"}
	// A record the matcher cannot evaluate does not stop it: it is left
	// out and reported.
	if err := m.AddTxn(bad); err != nil {
		t.Fatalf("over-precise amount stopped the matcher: %v", err)
	}
	if res, err := m.Result(); err != nil || len(res.Findings) != 1 || res.Findings[0].Kind != ledger.KindUnreadableRecord ||
		!strings.Contains(res.Findings[0].Detail, "R1") {
		t.Fatalf("over-precise amount: %v %+v", err, res)
	}
	// 250 years added to a time of 2024 in Unix nanoseconds wraps around int64.
	ages := 250 * 365 * 24 * time.Hour
	for _, o := range []matcher.Options{{From: day, To: next, Now: now}, {Provider: "p", From: next, To: day, Now: now}, {Provider: "p", From: day, To: next},
		{Provider: "p", From: day, To: next, Now: now, Grace: ages}, {Provider: "p", From: day, To: next, Now: now, Tolerance: ages}} {
		if _, err := matcher.New(o); err == nil {
			t.Fatalf("options %+v accepted", o)
		}
	}
}
