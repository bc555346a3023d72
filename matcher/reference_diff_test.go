package matcher_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/money"
)

// fastMatch runs the matcher on a matching case.
func fastMatch(sc matchCase) (*matcher.Result, error) {
	opt := sc.opt
	opt.KeepLinks = true
	m, err := matcher.New(opt)
	if err != nil {
		return nil, err
	}
	for _, in := range sc.intents {
		if err := m.AddIntent(in); err != nil {
			return nil, err
		}
	}
	for _, l := range sc.manual {
		if _, err := m.AddManualLink(l[0], l[1]); err != nil {
			return nil, err
		}
	}
	for _, t := range sc.txns {
		if err := m.AddTxn(t); err != nil {
			return nil, err
		}
	}
	return m.Result()
}

// fastMatchRows runs the matcher on a matching case through the row path
// (AddIntentRow, AddProviderRef, AddTxnRow), as a reconcile feeds it from
// the store's scans.
func fastMatchRows(sc matchCase) (*matcher.Result, error) {
	opt := sc.opt
	opt.KeepLinks = true
	m, err := matcher.New(opt)
	if err != nil {
		return nil, err
	}
	for _, in := range sc.intents {
		r := &ledger.IntentRow{Key: []byte(in.Key), Reference: []byte(in.Reference), Customer: []byte(in.Customer),
			Currency: in.Amount.Currency, State: in.State, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt,
			LeaseExpiresAt: in.LeaseExpiresAt, RefundOf: []byte(in.RefundOf), Expected: in.Kind == ledger.IntentExpected, DueAt: in.DueAt}
		r.Minor, r.Bad = in.Amount.Minor()
		if !in.Tolerance.IsZero() && r.Bad == nil {
			r.Tolerance, r.Bad = in.Tolerance.Minor()
		}
		if err := m.AddIntentRow(r); err != nil {
			return nil, err
		}
	}
	for _, in := range sc.intents {
		for _, p := range in.ProviderRefs {
			if err := m.AddProviderRef([]byte(in.Key), []byte(p)); err != nil {
				return nil, err
			}
		}
	}
	for _, l := range sc.manual {
		if _, err := m.AddManualLink(l[0], l[1]); err != nil {
			return nil, err
		}
	}
	for _, t := range sc.txns {
		r := &ledger.TxnRow{ID: []byte(t.ID), Reference: []byte(t.Reference), ProviderRef: []byte(t.ProviderRef),
			Counterparty: []byte(t.Counterparty), LinkedID: []byte(t.LinkedID), Type: t.Type, Status: t.Status,
			Currency: t.Amount.Currency, OccurredAt: t.OccurredAt}
		r.Minor, r.Bad = t.Amount.Minor()
		if err := m.AddTxnRow(r); err != nil {
			return nil, err
		}
	}
	return m.Result()
}

func showAmount(a money.Amount) string { return a.Currency + " " + a.Value.String() }

// findingLine renders what the two matchers must agree on about a finding:
// its id, kind, severity, subjects, amounts, counterparty, time, how its
// evidence was linked (by hand, fuzzy) and its suggestion, with the
// suggestion's reason reduced to its grounds. The reference keeps the link
// mark in Detail; the matcher says it in words.
func findingLine(f ledger.Finding, fast bool) string {
	mark := f.Detail
	if fast {
		mark = ""
		switch {
		case strings.Contains(f.Detail, "(linked by hand)"):
			mark = "linked by hand"
		case strings.Contains(f.Detail, ": fuzzy)"):
			mark = "fuzzy"
		}
	}
	sug := ""
	if !f.Suggestion.IsZero() {
		var why []string
		for _, w := range []string{"look-alike", "typo", "same customer"} {
			if strings.Contains(f.Suggestion.Reason, w) {
				why = append(why, w)
			}
		}
		sug = fmt.Sprintf(" suggest(%s %s %s: %s)", f.Suggestion.FindingID, f.Suggestion.IntentKey, f.Suggestion.TxnID, strings.Join(why, "+"))
	}
	return fmt.Sprintf("%s %s %s intent=%q/%s txns=%q expected=%s actual=%s at_risk=%s cp=%q at=%s mark=%q%s", f.ID, f.Kind, f.Severity,
		f.IntentKey, f.IntentKind, f.ProviderTxnIDs, showAmount(f.Expected), showAmount(f.Actual), showAmount(f.AtRisk),
		f.Counterparty, f.OccurredAt.Format(time.RFC3339), mark, sug)
}

// compareWithReference runs both matchers on sc and describes every way
// they disagree; "" when they agree.
func compareWithReference(sc matchCase) string {
	got, err := fastMatch(sc)
	if err != nil {
		return fmt.Sprintf("matcher: %v\n%s", err, sc.describe())
	}
	want := refMatch(sc)
	var b strings.Builder
	// Both of the matcher's input paths decide the same.
	rows, err := fastMatchRows(sc)
	if err != nil {
		return fmt.Sprintf("matcher, rows: %v\n%s", err, sc.describe())
	}
	var fl, rl []string
	for k, res := range []*matcher.Result{got, rows} {
		for _, f := range res.Findings {
			l := findingLine(f, true)
			if k == 0 {
				fl = append(fl, l)
			} else {
				rl = append(rl, l)
			}
		}
	}
	if !slices.Equal(fl, rl) || !slices.Equal(got.Links, rows.Links) || !slices.Equal(got.Settlements, rows.Settlements) ||
		got.Summary != rows.Summary {
		fmt.Fprintf(&b, "  the row path decides otherwise:\n    values %q\n    rows   %q\n", fl, rl)
	}
	var gl, wl []string
	for _, f := range got.Findings {
		gl = append(gl, findingLine(f, true))
	}
	for _, f := range want.findings {
		wl = append(wl, findingLine(f, false))
	}
	slices.Sort(gl)
	slices.Sort(wl)
	for _, l := range gl {
		if !slices.Contains(wl, l) {
			fmt.Fprintf(&b, "  matcher only:   %s\n", l)
		}
	}
	for _, l := range wl {
		if !slices.Contains(gl, l) {
			fmt.Fprintf(&b, "  reference only: %s\n", l)
		}
	}
	if len(gl) != len(wl) {
		fmt.Fprintf(&b, "  %d findings, reference %d\n", len(gl), len(wl))
	}
	linkLines := func(ls []matcher.Link) []string {
		var out []string
		for _, l := range ls {
			out = append(out, fmt.Sprintf("%s->%s(%s)", l.TxnID, l.IntentKey, l.Method))
		}
		return out
	}
	for _, d := range []struct {
		what      string
		got, want any
	}{
		{"links", linkLines(got.Links), linkLines(want.links)},
		{"unlinked", got.UnlinkedIDs, want.unlinked},
		{"settlements", got.Settlements, want.settlements},
		{"disputes won", got.DisputesWon, want.disputesWon},
		{"summary", got.Summary, want.summary},
		{"fuzzy links", got.Fuzzy, want.fuzzy},
		{"linked+unlinked", got.Linked + got.Unlinked, len(want.links) + len(want.unlinked)},
	} {
		if g, w := fmt.Sprint(d.got), fmt.Sprint(d.want); g != w {
			fmt.Fprintf(&b, "  %s:\n    matcher   %s\n    reference %s\n", d.what, g, w)
		}
	}
	sorted := slices.Clone(got.Findings)
	matcher.SortFindings(sorted)
	if !slices.EqualFunc(sorted, got.Findings, func(a, b ledger.Finding) bool { return a.ID == b.ID }) {
		b.WriteString("  findings are not in report order\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return b.String() + "case:\n" + sc.describe()
}

// TestMatcherAgainstReference compares the matcher with the reference on a
// few thousand random matchings (a few hundred with -short;
// MATCH_REFERENCE_N for a longer run), in four parallel parts.
func TestMatcherAgainstReference(t *testing.T) {
	t.Parallel()
	n := uint64(3000)
	if testing.Short() {
		n = 400
	}
	if s := os.Getenv("MATCH_REFERENCE_N"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MATCH_REFERENCE_N: %v", err)
		}
		n = v
	}
	const parts = 4
	for p := range uint64(parts) {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			t.Parallel()
			failures := 0
			for seed := p; seed < n; seed += parts {
				sc := genCase(rand.New(rand.NewPCG(seed, 0x5eed)))
				if d := compareWithReference(sc); d != "" {
					t.Errorf("seed %d: the matcher and the reference disagree:\n%s", seed, d)
					if failures++; failures == 3 {
						t.Fatal("stopping after 3 disagreements")
					}
				}
			}
		})
	}
}

// FuzzMatcherAgainstReference drives the generator with the fuzzer's bytes
// and compares the two matchers.
func FuzzMatcherAgainstReference(f *testing.F) {
	for seed := range uint64(8) {
		var b []byte
		r := rand.New(rand.NewPCG(seed, 1))
		for range 64 {
			b = append(b, byte(r.Uint32()))
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := genCase(rand.New(newByteSource(data)))
		if d := compareWithReference(sc); d != "" {
			t.Fatalf("the matcher and the reference disagree:\n%s", d)
		}
	})
}
