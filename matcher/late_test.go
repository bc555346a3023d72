package matcher_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// lateCase is a window's own intents and transactions, what its leftovers
// should be, and what the look-ups find for them.
type lateCase struct {
	name          string
	intents       []in
	txns          []tx
	leftTxns      []string // "id linked"
	leftIntents   []string
	lateIntents   []in
	lateTxns      []tx
	want          []string
	links         map[string]string
	explainIntent map[string]string
	explainTxn    map[string]string
}

func runLate(t *testing.T, c lateCase) *matcher.Result {
	t.Helper()
	m, err := matcher.New(matcher.Options{Provider: "mpesa", From: day, To: next, Now: now, KeepLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range c.intents {
		if err := m.AddIntent(i); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range c.txns {
		if err := m.AddTxn(x); err != nil {
			t.Fatal(err)
		}
	}
	left, err := m.Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	var lt []string
	for _, l := range left.Txns {
		lt = append(lt, strings.TrimSpace(l.ID+" "+l.LinkedID))
	}
	if !slices.Equal(lt, c.leftTxns) || !slices.Equal(left.IntentKeys, c.leftIntents) {
		t.Fatalf("leftovers: txns %q intents %q; want %q %q", lt, left.IntentKeys, c.leftTxns, c.leftIntents)
	}
	if _, err := m.Leftovers(); err == nil {
		t.Fatal("leftovers taken twice")
	}
	for _, i := range c.lateIntents {
		if err := m.AddLateIntent(i); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range c.lateTxns {
		if err := m.AddLateTxn(x); err != nil {
			t.Fatal(err)
		}
	}
	res, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := brief(res.Findings); !slices.Equal(got, c.want) {
		t.Errorf("findings:\n got %q\nwant %q", got, c.want)
	}
	for id, want := range c.links {
		got := "unlinked"
		for _, l := range res.Links {
			if l.TxnID == id {
				got = l.IntentKey + " " + l.Method.String()
			}
		}
		if got != want {
			t.Errorf("link of %s = %s, want %s", id, got, want)
		}
	}
	var keys, ids []string
	for k := range c.explainIntent {
		keys = append(keys, k)
	}
	for id := range c.explainTxn {
		ids = append(ids, id)
	}
	byIntent, byTxn := m.Explain(keys, ids)
	for k, want := range c.explainIntent {
		if byIntent[k] != want {
			t.Errorf("explain %s:\n got %q\nwant %q", k, byIntent[k], want)
		}
	}
	for id, want := range c.explainTxn {
		if byTxn[id] != want {
			t.Errorf("explain %s:\n got %q\nwant %q", id, byTxn[id], want)
		}
	}
	return res
}

// TestAcrossWindows: what a window leaves over is looked up in other
// windows; evidence of this window links to their intents, and intents of
// this window to their evidence, and an intent of another window that this
// window's evidence links to is judged here in full.
func TestAcrossWindows(t *testing.T) {
	t.Parallel()
	h, d := time.Hour, 24*time.Hour
	inv := func(key, ref, amount string, at time.Duration) in {
		i := intent(t, key, ledger.StatePending, amount, at)
		i.Kind, i.Reference = ledger.IntentExpected, ref
		return i
	}
	pay := func(id, ref, amount string, at time.Duration) tx {
		return charge(t, id, ledger.TxnSucceeded, amount, at, ref, "")
	}
	chargeOf := func(key string, at time.Duration, pref string) in {
		return intent(t, key, ledger.StateSucceeded, "1500", at, pref)
	}
	refund := func(id, of, amount string, at time.Duration) tx {
		x := reversal(t, id, of, amount, at)
		x.Type = ledger.TxnRefund
		return x
	}
	for _, c := range []lateCase{
		{
			name:        "an invoice paid two days later: the payment's window links it",
			txns:        []tx{pay("P1", "Inv 3001", "1500", 10*h)},
			leftTxns:    []string{"P1"},
			lateIntents: []in{inv("inv:3001", "INV3001", "1500", 9*h-2*d)},
			links:       map[string]string{"P1": "inv:3001 reference"},
			explainIntent: map[string]string{
				"inv:3001": "paid 2024-02-06 10:00 UTC (+00:00), P1, 2 days after the intent"},
			explainTxn: map[string]string{
				"P1": "linked to intent inv:3001, created 2024-02-04 09:00 UTC (+00:00), 2 days before the payment"},
		},
		{
			name:        "an invoice paid two days later: the invoice's window finds the payment",
			intents:     []in{inv("inv:3001", "INV3001", "1500", 9*h)},
			leftIntents: []string{"inv:3001"},
			lateTxns:    []tx{pay("P1", "inv-3001", "1500", 10*h+2*d)},
			links:       map[string]string{"P1": "inv:3001 reference"},
		},
		{
			name:        "an invoice paid in two parts on two days",
			intents:     []in{inv("inv:2001", "INV2001", "1500", 9*h)},
			txns:        []tx{pay("P1", "INV2001", "1000", 10*h)},
			leftIntents: []string{"inv:2001"},
			lateTxns:    []tx{pay("P2", "INV2001", "500", 10*h+3*d)},
			explainIntent: map[string]string{
				"inv:2001": "paid in 2 parts: KES 1,000.00 on 2024-02-06 10:00 UTC (+00:00) (P1), KES 500.00 on 2024-02-09 10:00 UTC (+00:00) (P2); the last 3 days after the intent"},
		},
		{
			// The window of the second payment judges the invoice in
			// full: with the first part, found in the invoice's window.
			name:        "the second part's window judges the invoice with the first part",
			txns:        []tx{pay("P2", "INV2001", "500", 10*h)},
			leftTxns:    []string{"P2"},
			lateIntents: []in{inv("inv:2001", "INV2001", "1500", 9*h-3*d)},
			lateTxns:    []tx{pay("P1", "INV2001", "1000", 10*h-3*d)},
		},
		{
			name:        "a duplicate on a later day is found by the window of the duplicate",
			txns:        []tx{charge(t, "C2", ledger.TxnSucceeded, "1500", 10*h, "", "ws_CO_1")},
			leftTxns:    []string{"C2"},
			lateIntents: []in{chargeOf("order:1", 9*h-2*d, "ws_CO_1")},
			lateTxns:    []tx{charge(t, "C1", ledger.TxnSucceeded, "1500", 9*h-2*d, "", "ws_CO_1")},
			want:        []string{"duplicate_charge order:1 [C1,C2] high"},
		},
		{
			name: "a refund of an earlier day's charge names the charge's intent",
			txns: []tx{refund("RF1", "C1", "1500", 10*h)},
			// The refund names a charge not in the span: looked up by id.
			leftTxns:    []string{"RF1 C1"},
			lateIntents: []in{chargeOf("order:1", 9*h-3*d, "ws_CO_1")},
			lateTxns:    []tx{charge(t, "C1", ledger.TxnSucceeded, "1500", 9*h-3*d, "", "ws_CO_1")},
			want:        []string{"unrecorded_refund order:1 [RF1] medium"},
			links:       map[string]string{"RF1": "order:1 charge", "C1": "order:1 provider_ref"},
		},
		{
			// An intent of the tolerance band that the window's evidence
			// links to is looked up in full before it is judged here.
			name:        "an intent of the band linked by the window's evidence is a leftover",
			intents:     []in{chargeOf("order:2", -h, "ws_CO_2")},
			txns:        []tx{charge(t, "C2", ledger.TxnSucceeded, "1500", 30*time.Minute, "", "ws_CO_2")},
			leftIntents: []string{"order:2"},
			lateTxns:    []tx{charge(t, "C0", ledger.TxnSucceeded, "1500", -3*h, "", "ws_CO_2")},
			want:        []string{"duplicate_charge order:2 [C0,C2] high"},
		},
		{
			name:        "a charge intent with no evidence in the window is a leftover; a failed one is not",
			intents:     []in{chargeOf("order:3", 9*h, "ws_CO_3"), intent(t, "order:4", ledger.StateFailed, "10", 9*h)},
			leftIntents: []string{"order:3"},
			want:        []string{"missing_at_provider order:3 [] medium"},
		},
		{
			// Evidence of another window linked to an intent that this
			// window's evidence does not touch leaves it to its window.
			name:        "an intent of another window found but not linked is not judged",
			txns:        []tx{pay("P9", "NOTHING", "10", 10*h)},
			leftTxns:    []string{"P9"},
			lateIntents: []in{inv("inv:9", "INV9", "1500", 9*h-5*d)},
			want:        []string{"unknown_charge  [P9] medium"},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runLate(t, c)
		})
	}
}

// TestLateOrder: the late phase has its order.
func TestLateOrder(t *testing.T) {
	t.Parallel()
	m, err := matcher.New(matcher.Options{Provider: "mpesa", From: day, To: next, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddLateIntent(intent(t, "k", ledger.StateSucceeded, "10", time.Hour)); err == nil {
		t.Fatal("a late intent before the leftovers")
	}
	if _, err := m.Leftovers(); err != nil {
		t.Fatal(err)
	}
	if err := m.AddIntent(intent(t, "k", ledger.StateSucceeded, "10", time.Hour)); err == nil {
		t.Fatal("an intent of the window after the leftovers")
	}
	if err := m.AddLateTxn(charge(t, "C", ledger.TxnSucceeded, "10", time.Hour, "", "")); err == nil {
		t.Fatal("a late transaction inside the span")
	}
}
