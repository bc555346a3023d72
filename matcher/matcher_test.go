package matcher_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/money"
)

var (
	day  = time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC)
	next = day.Add(24 * time.Hour)
	now  = next.Add(6 * time.Hour)
)

func amt(t testing.TB, s, cur string) money.Amount {
	t.Helper()
	a, err := money.Parse(s, cur)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

type in = ledger.Intent
type tx = ledger.ProviderTxn

// intent builds an intent of KES amount created at day+at, succeeded at
// created (updated) time, with the given provider references.
func intent(t testing.TB, key string, st ledger.State, amount string, at time.Duration, refs ...string) in {
	created := day.Add(at)
	return in{IntentParams: ledger.IntentParams{Key: key, Provider: "mpesa", Amount: amt(t, amount, "KES"),
		Customer: "254712340845", Reference: ledger.DeriveReference(key)},
		State: st, CreatedAt: created, UpdatedAt: created.Add(time.Minute), ProviderRefs: refs}
}

func charge(t testing.TB, id string, st ledger.TxnStatus, amount string, at time.Duration, ref, pref string) tx {
	return tx{Provider: "mpesa", ID: id, Type: ledger.TxnCharge, Status: st, Amount: amt(t, amount, "KES"),
		OccurredAt: day.Add(at), Reference: ref, ProviderRef: pref, Counterparty: "2547****0845"}
}

func reversal(t testing.TB, id, of string, amount string, at time.Duration) tx {
	return tx{Provider: "mpesa", ID: id, Type: ledger.TxnReversal, Status: ledger.TxnSucceeded,
		Amount: amt(t, amount, "KES"), OccurredAt: day.Add(at), LinkedID: of}
}

func run(t testing.TB, opt matcher.Options, intents []in, txns []tx) *matcher.Result {
	t.Helper()
	if opt.Provider == "" {
		opt.Provider = "mpesa"
	}
	if opt.From.IsZero() {
		opt.From, opt.To = day, next
	}
	if opt.Now.IsZero() {
		opt.Now = now
	}
	opt.KeepLinks = true
	m, err := matcher.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range intents {
		if err := m.AddIntent(i); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range txns {
		if err := m.AddTxn(x); err != nil {
			t.Fatal(err)
		}
	}
	res, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	// The compact row path decides the same.
	rows := runRows(t, opt, intents, txns)
	if g, w := canon(rows.Findings), canon(res.Findings); !slices.Equal(g, w) {
		t.Fatalf("rows found:\n%q\nstructs found:\n%q", g, w)
	}
	if !slices.Equal(rows.Links, res.Links) || !slices.Equal(rows.UnlinkedIDs, res.UnlinkedIDs) ||
		!slices.Equal(rows.Settlements, res.Settlements) || rows.Summary != res.Summary || rows.Fuzzy != res.Fuzzy {
		t.Fatalf("rows: %+v\nstructs: %+v", rows, res)
	}
	return res
}

// brief renders findings as "kind intent txn,txn severity" lines.
func brief(fs []ledger.Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, fmt.Sprintf("%s %s [%s] %s", f.Kind, f.IntentKey, strings.Join(f.ProviderTxnIDs, ","), f.Severity))
	}
	return out
}

func TestRules(t *testing.T) {
	t.Parallel()
	h := time.Hour
	// child is a refund, dispute or other transaction of charge of.
	child := func(id string, typ ledger.TxnType, amount string, at time.Duration, of string) tx {
		x := charge(t, id, ledger.TxnSucceeded, amount, at, "", "")
		x.Type, x.LinkedID = typ, of
		return x
	}
	k1ref := ledger.DeriveReference("k1")
	cases := []struct {
		name     string
		opt      matcher.Options
		intents  []in
		txns     []tx
		want     []string
		links    map[string]string // txn -> "intent method"
		settled  []matcher.Settlement
		matched  int
		unlinked int
	}{
		{
			name:    "provider reference links",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h+time.Minute, "", "ws_CO_1")},
			links:   map[string]string{"R1": "k1 provider_ref"},
			matched: 1,
		},
		{
			name:    "echoed reference links, case-insensitively",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h)},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h, strings.ToLower(k1ref), "")},
			links:   map[string]string{"R1": "k1 reference"},
			matched: 1,
		},
		{
			name:    "echoed key links",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h)},
			txns:    []tx{charge(t, "ch_1", ledger.TxnSucceeded, "1500", 10*h, "k1", "")},
			links:   map[string]string{"ch_1": "k1 reference"},
			matched: 1,
		},
		{
			name:    "provider reference wins over a reference naming another intent",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1"), intent(t, "k2", ledger.StateSucceeded, "1500", 10*h)},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h, ledger.DeriveReference("k2"), "ws_CO_1")},
			want:    []string{"missing_at_provider k2 [] medium"},
			links:   map[string]string{"R1": "k1 provider_ref"},
			matched: 1,
		},
		{
			name:    "duplicate charge",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1", "ws_CO_2")},
			txns: []tx{charge(t, "R2", ledger.TxnSucceeded, "1500", 10*h, "", "ws_CO_2"),
				charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h, "", "ws_CO_1")},
			want:    []string{"duplicate_charge k1 [R1,R2] high"},
			matched: 2,
		},
		{
			name:    "duplicate charge that was reversed is no finding",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1", "ws_CO_2")},
			txns: []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h, "", "ws_CO_1"),
				charge(t, "R2", ledger.TxnSucceeded, "1500", 10*h, "", "ws_CO_2"),
				reversal(t, "R3", "R2", "1500", 11*h)},
			links:   map[string]string{"R3": "k1 charge"},
			matched: 3,
		},
		{
			name:    "partial refund of a duplicate leaves a duplicate",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1", "ws_CO_2")},
			txns: []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h, "", "ws_CO_1"),
				charge(t, "R2", ledger.TxnSucceeded, "1500", 10*h, "", "ws_CO_2"),
				{Provider: "mpesa", ID: "R3", Type: ledger.TxnRefund, Status: ledger.TxnSucceeded, Amount: amt(t, "500", "KES"), OccurredAt: day.Add(11 * h), LinkedID: "R2"}},
			want:    []string{"duplicate_charge k1 [R1,R2] high"},
			matched: 3,
		},
		{
			name:    "provider took more",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1600", 10*h, "", "ws_CO_1")},
			want:    []string{"amount_mismatch k1 [R1] high"},
			matched: 1,
		},
		{
			name:    "provider took less",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1400", 10*h, "", "ws_CO_1")},
			want:    []string{"amount_mismatch k1 [R1] medium"},
			matched: 1,
		},
		{
			name:    "currency differs",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1")},
			txns: []tx{{Provider: "mpesa", ID: "R1", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
				Amount: amt(t, "1500", "UGX"), OccurredAt: day.Add(10 * h), ProviderRef: "ws_CO_1"}},
			want:    []string{"currency_mismatch k1 [R1] high"},
			matched: 1,
		},
		{
			name:    "failed locally, provider took the money",
			intents: []in{intent(t, "k1", ledger.StateFailed, "1500", 10*h, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h, "", "ws_CO_1")},
			want:    []string{"status_mismatch k1 [R1] high"},
			matched: 1,
		},
		{
			name:    "succeeded locally, provider failed",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnFailed, "1500", 10*h, "", "ws_CO_1")},
			want:    []string{"status_mismatch k1 [R1] medium"},
			matched: 1,
		},
		{
			name:    "succeeded locally, provider failed, inside the grace",
			opt:     matcher.Options{Grace: 24 * h},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnFailed, "1500", 10*h, "", "ws_CO_1")},
			matched: 1,
		},
		{
			name:    "missing at provider",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h)},
			want:    []string{"missing_at_provider k1 [] medium"},
		},
		{
			name:    "missing at provider is not raised when the evidence is incomplete",
			opt:     matcher.Options{NoMissing: true},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h)},
		},
		{
			name:    "pending charge inside the grace",
			opt:     matcher.Options{Grace: 30 * time.Minute, Now: day.Add(23*h + 50*time.Minute)},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 23*h+30*time.Minute, "pi_1")},
			txns:    []tx{charge(t, "ch_1", ledger.TxnPending, "1500", 23*h+31*time.Minute, "", "pi_1")},
			matched: 1,
		},
		{
			name:    "pending charge past the grace",
			opt:     matcher.Options{Grace: 30 * time.Minute},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h, "pi_1")},
			txns:    []tx{charge(t, "ch_1", ledger.TxnPending, "1500", 10*h, "", "pi_1")},
			want:    []string{"missing_at_provider k1 [ch_1] medium"},
			matched: 1,
		},
		{
			name: "unknown charge in the window, none in the tolerance band",
			txns: []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h, "NOPE", ""),
				charge(t, "R0", ledger.TxnSucceeded, "1500", -time.Hour, "NOPE", ""),
				charge(t, "R2", ledger.TxnFailed, "1500", 10*h, "NOPE", ""),
				charge(t, "R3", ledger.TxnPending, "1500", 10*h, "NOPE", "")},
			want:     []string{"unknown_charge  [R1] medium"},
			unlinked: 4,
		},
		{
			name:     "unknown charge reversed in full is no finding",
			txns:     []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h, "NOPE", ""), reversal(t, "R2", "R1", "1500", 11*h)},
			unlinked: 2,
		},
		{
			name:    "late success settles an unknown intent",
			intents: []in{intent(t, "k1", ledger.StateUnknown, "1500", 10*h, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 12*h, "", "ws_CO_1")},
			settled: []matcher.Settlement{{IntentKey: "k1", TxnID: "R1"}},
			matched: 1,
		},
		{
			name: "stuck intents",
			opt:  matcher.Options{Grace: time.Hour},
			intents: []in{intent(t, "unknown", ledger.StateUnknown, "1500", 9*h),
				func() in {
					i := intent(t, "fresh", ledger.StateUnknown, "1500", 23*h+59*time.Minute)
					i.UpdatedAt = now.Add(-10 * time.Minute)
					return i
				}(),
				func() in {
					i := intent(t, "processing", ledger.StateProcessing, "1500", 10*h)
					i.LeaseExpiresAt = day.Add(10*h + 15*time.Minute)
					return i
				}(),
				func() in {
					i := intent(t, "leased", ledger.StateProcessing, "1500", 10*h)
					i.LeaseExpiresAt = now.Add(time.Minute)
					return i
				}(),
				intent(t, "pending", ledger.StatePending, "1500", 10*h),
				func() in {
					i := intent(t, "queued", ledger.StatePending, "1500", 23*h+59*time.Minute)
					i.UpdatedAt = now.Add(-10 * time.Minute)
					return i
				}()},
			want: []string{"stuck_intent unknown [] low", "stuck_intent pending [] low", "stuck_intent processing [] low"},
		},
		{
			name:    "a receipt just after midnight links to an intent just before it",
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 24*h-10*time.Second, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 24*h+20*time.Second, "", "ws_CO_1")},
			links:   map[string]string{"R1": "k1 provider_ref"},
		},
		{
			name:    "the next window links the same pair and owns nothing",
			opt:     matcher.Options{From: next, To: next.Add(24 * h)},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 24*h-10*time.Second, "ws_CO_1")},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 24*h+20*time.Second, "", "ws_CO_1")},
			links:   map[string]string{"R1": "k1 provider_ref"},
			matched: 1,
		},
		{
			name:     "fuzzy is off by default",
			intents:  []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h)},
			txns:     []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h+time.Minute, "typo", "")},
			want:     []string{"unknown_charge  [R1] medium", "missing_at_provider k1 [] medium"},
			unlinked: 1,
		},
		{
			name:    "fuzzy links one candidate",
			opt:     matcher.Options{Fuzzy: true},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h), intent(t, "k2", ledger.StateSucceeded, "900", 10*h, "ws_CO_2")},
			txns: []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h+time.Minute, "typo", ""),
				charge(t, "R2", ledger.TxnSucceeded, "900", 10*h, "", "ws_CO_2")},
			links:   map[string]string{"R1": "k1 fuzzy"},
			matched: 2,
		},
		{
			name:    "fuzzy refuses two candidates",
			opt:     matcher.Options{Fuzzy: true},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h), intent(t, "k2", ledger.StateSucceeded, "1500", 10*h+time.Minute)},
			txns:    []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h+time.Minute, "typo", "")},
			want: []string{"unknown_charge  [R1] medium", "missing_at_provider k1 [] medium",
				"missing_at_provider k2 [] medium"},
			unlinked: 1,
		},
		{
			name:    "fuzzy refuses an intent claimed by two charges",
			opt:     matcher.Options{Fuzzy: true},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h)},
			txns: []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h+time.Minute, "typo", ""),
				charge(t, "R2", ledger.TxnSucceeded, "1500", 10*h+2*time.Minute, "typo", "")},
			want:     []string{"unknown_charge  [R1] medium", "unknown_charge  [R2] medium", "missing_at_provider k1 [] medium"},
			unlinked: 2,
		},
		{
			// R2 could pay k1 only, but R1 could pay k1 or k2: k1 has two
			// candidates, so nothing is linked by guess.
			name: "fuzzy refuses an intent that is the candidate of another charge too",
			opt:  matcher.Options{Fuzzy: true},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h),
				intent(t, "k2", ledger.StateSucceeded, "1500", 13*h)},
			txns: []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 11*h+30*time.Minute, "typo", ""),
				charge(t, "R2", ledger.TxnSucceeded, "1500", 9*h, "typo", "")},
			want: []string{"unknown_charge  [R2] medium", "unknown_charge  [R1] medium", "missing_at_provider k1 [] medium",
				"missing_at_provider k2 [] medium"},
			unlinked: 2,
		},
		{
			// A fuzzy link is made once the charges are netted of their
			// refunds; the refunds and disputes of the charge then follow
			// it to its intent, as they follow a charge linked otherwise.
			name:    "the refund and the dispute of a fuzzy-linked charge follow it",
			opt:     matcher.Options{Fuzzy: true},
			intents: []in{intent(t, "k1", ledger.StateSucceeded, "1500", 10*h)},
			txns: []tx{charge(t, "R1", ledger.TxnSucceeded, "1500", 10*h+time.Minute, "typo", ""),
				child("RF1", ledger.TxnRefund, "500", 12*h, "R1"), child("DP1", ledger.TxnDispute, "1500", 13*h, "R1")},
			want:    []string{"disputed_charge k1 [DP1,R1] high", "unrecorded_refund k1 [RF1] medium"},
			links:   map[string]string{"R1": "k1 fuzzy", "RF1": "k1 charge", "DP1": "k1 charge"},
			matched: 3,
		},
		{
			name:    "a shared reference goes to the intent with the same amount",
			intents: []in{intent(t, "a", ledger.StateSucceeded, "900", 10*h), intent(t, "b", ledger.StateSucceeded, "1500", 10*h)},
			txns: []tx{
				{Provider: "mpesa", ID: "R1", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: amt(t, "1500", "KES"), OccurredAt: day.Add(10 * h), Reference: "acc-7"},
				{Provider: "mpesa", ID: "R2", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded, Amount: amt(t, "900", "KES"), OccurredAt: day.Add(10 * h), Reference: "ACC-7"}},
			links:   map[string]string{"R1": "b reference", "R2": "a reference"},
			matched: 2,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			intents := c.intents
			if c.name == "a shared reference goes to the intent with the same amount" {
				intents[0].Reference, intents[1].Reference = "ACC-7", "ACC-7"
			}
			res := run(t, c.opt, intents, c.txns)
			if got := brief(res.Findings); !slices.Equal(got, c.want) {
				t.Errorf("findings:\n got %q\nwant %q", got, c.want)
			}
			for id, want := range c.links {
				found := false
				for _, l := range res.Links {
					if l.TxnID == id {
						found = true
						if got := l.IntentKey + " " + l.Method.String(); got != want {
							t.Errorf("link of %s = %s, want %s", id, got, want)
						}
					}
				}
				if !found {
					t.Errorf("%s is not linked", id)
				}
			}
			if !slices.Equal(res.Settlements, c.settled) {
				t.Errorf("settled %v, want %v", res.Settlements, c.settled)
			}
			if c.matched != 0 && res.Summary.Matched != c.matched {
				t.Errorf("matched %d, want %d", res.Summary.Matched, c.matched)
			}
			if res.Unlinked != c.unlinked {
				t.Errorf("unlinked %d (%v), want %d", res.Unlinked, res.UnlinkedIDs, c.unlinked)
			}
			if res.Linked+res.Unlinked != len(c.txns) {
				t.Errorf("linked %d + unlinked %d != %d", res.Linked, res.Unlinked, len(c.txns))
			}
		})
	}
}
