package reconciler_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/reconciler"
)

// Linking is not bounded by the window; judging is. So reconciling a week
// one day at a time must find what reconciling it as one window finds: the
// findings of the daily windows, together, are those of the week. This
// holds the cross-window machinery (leftovers, look-ups by index, late
// intents and transactions, judging the intents of other days in full) to
// the plain matching of one span that holds everything, on random weeks of
// payments paid late, in instalments, twice, refunded and disputed days
// later.

// weekGen builds a random week of one provider.
type weekGen struct {
	r       *rand.Rand
	start   time.Time
	days    int
	intents []ledger.ImportIntent
	txns    []ledger.ProviderTxn
	n       int
}

func (g *weekGen) pick(n int) int    { return g.r.IntN(n) }
func (g *weekGen) chance(n int) bool { return g.r.IntN(n) == 0 }
func (g *weekGen) at(day int) time.Time {
	return g.start.Add(time.Duration(day)*24*time.Hour + time.Duration(g.pick(24*4))*15*time.Minute)
}

func (g *weekGen) kes(minor int64) money.Amount {
	a, err := money.FromMinor(minor, "KES")
	if err != nil {
		panic(err)
	}
	return a
}

func (g *weekGen) txn(typ ledger.TxnType, st ledger.TxnStatus, minor int64, at time.Time, ref, pref, linked string) string {
	id := fmt.Sprintf("T%03d", g.n)
	g.n++
	g.txns = append(g.txns, ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: typ, Status: st, Amount: g.kes(minor), OccurredAt: at,
		Reference: ref, ProviderRef: pref, LinkedID: linked, Counterparty: "2547****0845"})
	return id
}

func genWeek(seed uint64) *weekGen {
	g := &weekGen{r: rand.New(rand.NewPCG(seed, 7)), start: time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC), days: 5}
	for i := range 4 + g.pick(12) {
		key := fmt.Sprintf("k%02d", i)
		ref := fmt.Sprintf("INV%03d", 100+i)
		day := g.pick(g.days)
		created := g.at(day)
		minor := int64(100+g.pick(50)) * 100
		p := ledger.IntentParams{Key: key, Provider: "mpesa", Amount: g.kes(minor), Reference: ref, Customer: "254712340845"}
		state := []ledger.State{ledger.StateSucceeded, ledger.StateSucceeded, ledger.StatePending, ledger.StateFailed, ledger.StateUnknown}[g.pick(5)]
		var refs []string
		later := func() time.Time { // the same day or up to three days later
			d := min(day+g.pick(4), g.days-1)
			at := g.at(d)
			if at.Before(created) {
				at = created.Add(time.Duration(1+g.pick(8)) * 15 * time.Minute)
			}
			return at
		}
		switch g.pick(3) {
		case 0: // an expected payment, paid in parts on several days
			p.Kind = ledger.IntentExpected
			if g.chance(2) {
				p.DueAt = g.at(g.pick(g.days + 2))
			}
			state = []ledger.State{ledger.StatePending, ledger.StateSucceeded, ledger.StateFailed}[g.pick(3)]
			left := minor
			for k := range 1 + g.pick(3) {
				part := left
				if k < 2 && g.chance(2) {
					part = left / 2
				}
				if g.chance(6) {
					part += int64(g.pick(3)-1) * 100
				}
				if part > 0 && !g.chance(5) {
					g.txn(ledger.TxnCharge, ledger.TxnSucceeded, part, later(), []string{ref, strings.ToLower(ref), "inv " + ref[3:]}[g.pick(3)], "", "")
				}
				left -= part
				if left <= 0 {
					break
				}
			}
		default: // a charge we take, with its request's reference
			pref := fmt.Sprintf("ws_CO_%02d", i)
			refs = []string{pref}
			if g.chance(5) {
				break // never reached the provider
			}
			first := g.txn(ledger.TxnCharge, []ledger.TxnStatus{ledger.TxnSucceeded, ledger.TxnSucceeded, ledger.TxnSucceeded, ledger.TxnFailed}[g.pick(4)],
				minor, later(), "", pref, "")
			if g.chance(3) { // paid again, later, by reference
				second := g.txn(ledger.TxnCharge, ledger.TxnSucceeded, minor, later(), ref, "", "")
				if g.chance(2) {
					g.txn(ledger.TxnReversal, ledger.TxnSucceeded, minor, g.at(g.days-1), "", "", second)
				}
			}
			if g.chance(4) {
				g.txn(ledger.TxnReversal, ledger.TxnSucceeded, minor/2, g.at(g.days-1), "", "", first)
			}
			if g.chance(6) {
				g.txn(ledger.TxnDispute, ledger.TxnSucceeded, minor, g.at(g.days-1), "", "", first)
			}
		}
		g.intents = append(g.intents, ledger.ImportIntent{NewIntent: ledger.NewIntent{IntentParams: p, State: state, CreatedAt: created,
			UpdatedAt: created.Add(time.Minute)}, Line: i + 2, ProviderRefs: refs})
	}
	for range g.pick(4) { // money nobody asked for
		g.txn(ledger.TxnCharge, ledger.TxnSucceeded, int64(100+g.pick(50))*100, g.at(g.pick(g.days)), fmt.Sprintf("X%02d", g.pick(99)), "", "")
	}
	return g
}

// findingLine is what must agree: kind, intent, evidence, severity and
// amounts (not the prose, nor suggestions, which other windows refine).
func findingLine(f ledger.Finding) string {
	return fmt.Sprintf("%s %s %s [%s] %s exp=%s act=%s risk=%s at=%s", f.ID, f.Kind, f.IntentKey, strings.Join(f.ProviderTxnIDs, ","),
		f.Severity, f.Expected.Text(), f.Actual.Text(), f.AtRisk.Text(), f.OccurredAt.Format(time.RFC3339))
}

// weekSeeds is how many random weeks TestDaysAgreeWithTheWeek checks on
// SQLite (a quarter of them on PostgreSQL); more with -weeks=N.
var weekSeeds = flag.Int("weeks", 20, "random weeks checked by TestDaysAgreeWithTheWeek on SQLite (a quarter on PostgreSQL)")

func TestDaysAgreeWithTheWeek(t *testing.T) {
	t.Parallel()
	seeds := *weekSeeds
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			n := seeds
			if e.Name == "postgres" {
				n = seeds / 4
			}
			for seed := range uint64(n) {
				if msg := checkWeek(t, e.New, seed); msg != "" {
					t.Fatalf("seed %d: %s", seed, msg)
				}
			}
		})
	}
}

func checkWeek(t *testing.T, newStore func(testing.TB) ledger.Store, seed uint64) string {
	ctx := context.Background()
	g := genWeek(seed)
	s := newStore(t)
	err := s.InTx(ctx, func(tx ledger.Tx) error {
		res, err := tx.ImportIntents(ctx, ledger.ImportIntentsParams{Rows: slices.Values(g.intents)})
		if err == nil && len(res.Refused) > 0 {
			err = res.Refused[0].Err
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range g.txns {
		if _, err := s.UpsertProviderTxn(ctx, x, ledger.Source{Channel: "statement", Ref: x.ID, ReceivedAt: x.OccurredAt}); err != nil {
			t.Fatal(err)
		}
	}
	end := g.start.Add(time.Duration(g.days) * 24 * time.Hour)
	c := &clock{t: end.Add(6 * time.Hour)}
	rec := reconciler.New(s, reconciler.Config{Clock: c.Now, Owner: "test", Grace: map[string]time.Duration{"mpesa": 30 * time.Minute}})
	run := func(from, to time.Time) []ledger.Finding {
		out, err := rec.Run(ctx, reconciler.Params{Provider: "mpesa", From: from, To: to, NoPull: true, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		return out.Findings
	}
	var week []string
	for _, f := range run(g.start, end) {
		week = append(week, findingLine(f))
	}
	seen := map[string]string{}
	for d := range g.days {
		from := g.start.Add(time.Duration(d) * 24 * time.Hour)
		for _, f := range run(from, from.Add(24*time.Hour)) {
			line := findingLine(f)
			if prev, ok := seen[f.ID]; ok && prev != line {
				return fmt.Sprintf("two days disagree on a finding:\n  %s\n  %s%s", prev, line, describeWeek(g))
			}
			seen[f.ID] = line
		}
	}
	var days []string
	for _, l := range seen {
		days = append(days, l)
	}
	slices.Sort(days)
	slices.Sort(week)
	if !slices.Equal(days, week) {
		return fmt.Sprintf("the days found\n  %s\nthe week found\n  %s%s", strings.Join(days, "\n  "), strings.Join(week, "\n  "), describeWeek(g))
	}
	return ""
}

func describeWeek(g *weekGen) string {
	var b strings.Builder
	b.WriteString("\nintents:")
	for _, in := range g.intents {
		fmt.Fprintf(&b, "\n  %s %s %s %s ref=%s due=%s created=%s refs=%v", in.Key, in.Kind, in.State, in.Amount.Text(), in.Reference,
			in.DueAt.Format(time.RFC3339), in.CreatedAt.Format(time.RFC3339), in.ProviderRefs)
	}
	b.WriteString("\ntransactions:")
	for _, x := range g.txns {
		fmt.Fprintf(&b, "\n  %s %s %s %s at=%s ref=%q pref=%q linked=%q", x.ID, x.Type, x.Status, x.Amount.Text(),
			x.OccurredAt.Format(time.RFC3339), x.Reference, x.ProviderRef, x.LinkedID)
	}
	return b.String()
}
