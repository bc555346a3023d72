package matcher

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// day is a day of the week of 9 March 2026 (a Monday): day(0) is Monday.
func day(n int) Day { return DayOf(time.Date(2026, 3, 9+n, 12, 0, 0, 0, time.UTC), time.UTC) }

func usd(minor int64) Money { return Money{Minor: minor, Currency: "USD"} }

func po(id string, minor int64, expected int) PayoutRow {
	return PayoutRow{Provider: "stripe", ID: id, Amount: usd(minor), InBooks: true, Status: ledger.TxnSucceeded, Expected: day(expected)}
}

func credit(id string, minor int64, arrived int, refs ...string) CreditRow {
	for i, r := range refs {
		refs[i] = ledger.NormalReference(r)
	}
	return CreditRow{ID: id, Amount: usd(minor), Booked: day(arrived), Arrived: day(arrived), Source: "stripe", Refs: refs,
		BankRef: id, Text: "STRIPE PAYOUT"}
}

func bankOpt(from, to int, now time.Time) BankOptions {
	return BankOptions{Provider: "bank:chase", Currency: "USD", Zone: time.UTC, From: day(from), To: day(to), Now: now,
		ArrivalDays: 3, PayoutDays: map[string]int{"stripe": 2}, CoveredUntil: map[string]Day{"stripe": day(30)},
		Names: map[string]string{"stripe": "Stripe"}}
}

// later is a time when every deadline of the week has passed.
var later = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

// render lists findings as "kind key severity at-risk" and what the
// payouts linked to.
func (r *BankResult) render() string {
	var out []string
	for _, f := range r.Findings {
		s := fmt.Sprintf("%s %s %s %s %s", f.Kind, strings.Join(f.ProviderTxnIDs, ","), f.Severity, f.AtRisk.Text(),
			f.OccurredAt.Format("01-02"))
		if !f.Suggestion.IsZero() {
			s += " suggests " + f.Suggestion.TxnID + "~" + f.Suggestion.IntentKey
		}
		out = append(out, s)
	}
	var ms []string
	for ref, pm := range r.Matches {
		var ids []string
		for _, c := range pm.Credits {
			ids = append(ids, c.ID)
		}
		ms = append(ms, ref+"="+strings.Join(ids, "+"))
	}
	slices.Sort(ms)
	return strings.Join(out, "\n") + "\nlinked " + strings.Join(ms, " ")
}

func TestMatchBank(t *testing.T) {
	t.Parallel()
	reversal := credit("RV1", 5000, 3)
	reversal.Debit, reversal.Reversal, reversal.Text = true, true, "REVERSAL DUPLICATE POSTING C2"
	cash := credit("CASH", 2500, 1)
	cash.Source, cash.Text = "", "CASH DEPOSIT"
	items := po("po_items", 900, 1)
	items.HasItems = true
	items.Items = []ItemRow{{TxnID: "ch_1", Value: 1000, InBooks: true}, {TxnID: "txn_1", Value: -30, InBooks: true},
		{TxnID: "ch_2", InBooks: false}, {TxnID: "ch_3", Value: 200, InBooks: true, Extra: "failed"}}
	for _, c := range []struct {
		name    string
		opt     BankOptions
		payouts []PayoutRow
		credits []CreditRow
		charges []ChargeRow
		want    string
	}{
		{name: "by reference, whatever the day", payouts: []PayoutRow{po("po_A", 10000, 0)},
			credits: []CreditRow{credit("C1", 10000, 20, "po_A")}, want: "\nlinked stripe/po_A=C1"},
		{name: "by amount on the third business day, over a weekend", payouts: []PayoutRow{po("po_A", 10000, 4)},
			credits: []CreditRow{credit("C1", 10000, 9)}, want: "\nlinked stripe/po_A=C1"},
		{name: "two payouts in one credit", payouts: []PayoutRow{po("po_A", 10000, 1), po("po_B", 2500, 1)},
			credits: []CreditRow{credit("C1", 12500, 2)}, want: "\nlinked stripe/po_A=C1 stripe/po_B=C1"},
		{name: "one credit naming two payouts", payouts: []PayoutRow{po("po_A", 10000, 1), po("po_B", 2500, 0)},
			credits: []CreditRow{credit("C1", 12500, 2, "po_A", "po_B")}, want: "\nlinked stripe/po_A=C1 stripe/po_B=C1"},
		{name: "a payout split in two credits", payouts: []PayoutRow{po("po_A", 10000, 1)},
			credits: []CreditRow{credit("C1", 6000, 1), credit("C2", 4000, 2)}, want: "\nlinked stripe/po_A=C1+C2"},
		{name: "a payout split in two credits naming it", payouts: []PayoutRow{po("po_A", 10000, 1)},
			credits: []CreditRow{credit("C1", 6000, 1, "po_A"), credit("C2", 4000, 8, "po_A")}, want: "\nlinked stripe/po_A=C1+C2"},
		{name: "short", payouts: []PayoutRow{po("po_A", 10000, 1)}, credits: []CreditRow{credit("C1", 9000, 1, "po_A")},
			want: "payout_amount_mismatch C1,stripe/po_A high 10.00 03-10\nlinked stripe/po_A=C1"},
		{name: "more", payouts: []PayoutRow{po("po_A", 10000, 1)}, credits: []CreditRow{credit("C1", 11000, 1, "po_A")},
			want: "payout_amount_mismatch C1,stripe/po_A medium 10.00 03-10\nlinked stripe/po_A=C1"},
		{name: "twice by reference", payouts: []PayoutRow{po("po_A", 10000, 1)},
			credits: []CreditRow{credit("C1", 10000, 1, "po_A"), credit("C2", 10000, 2, "po_A")},
			want:    "payout_duplicated_at_bank C1,C2,stripe/po_A medium 100.00 03-10\nlinked stripe/po_A=C1"},
		{name: "twice by amount", payouts: []PayoutRow{po("po_A", 10000, 1)},
			credits: []CreditRow{credit("C1", 10000, 1), credit("C2", 10000, 2)},
			want:    "payout_duplicated_at_bank C1,C2,stripe/po_A medium 100.00 03-10\nlinked stripe/po_A=C1"},
		{name: "a duplicate posting reversed", payouts: []PayoutRow{po("po_A", 5000, 1)},
			credits: []CreditRow{credit("C1", 5000, 2), credit("C2", 5000, 2), reversal}, want: "\nlinked stripe/po_A=C1"},
		{name: "missing after its deadline", payouts: []PayoutRow{po("po_A", 10000, 1)},
			want: "payout_missing_at_bank stripe/po_A high 100.00 03-10\nlinked "},
		{name: "not missing before its deadline", opt: bankOpt(0, 7, day(4).Midnight(time.UTC).Add(23*time.Hour)),
			payouts: []PayoutRow{po("po_A", 10000, 1)}, want: "\nlinked "},
		{name: "another window's payout is not judged", payouts: []PayoutRow{po("po_A", 10000, 9)}, want: "\nlinked "},
		{name: "a failed payout is not expected", payouts: []PayoutRow{func() PayoutRow { p := po("po_A", 100, 1); p.Status = ledger.TxnFailed; return p }()},
			want: "\nlinked "},
		{name: "unexplained credits", credits: []CreditRow{credit("C1", 7000, 1), cash},
			want: "unexplained_bank_credit CASH low 25.00 03-10\nunexplained_bank_credit C1 medium 70.00 03-10\nlinked "},
		{name: "a credit of another source is not a Stripe payout", payouts: []PayoutRow{po("po_A", 7000, 1)},
			credits: []CreditRow{func() CreditRow { c := credit("C1", 7000, 1); c.Source = "mpesa"; return c }()},
			want:    "payout_missing_at_bank stripe/po_A high 70.00 03-10\nunexplained_bank_credit C1 medium 70.00 03-10\nlinked "},
		{name: "composition", payouts: []PayoutRow{items}, credits: []CreditRow{credit("C1", 900, 1)},
			want: "payout_composition_mismatch stripe/ch_2,stripe/ch_3,stripe/po_items high 0.70 03-10\nlinked stripe/po_items=C1"},
		{name: "not paid out", charges: []ChargeRow{{Provider: "stripe", ID: "ch_9", Amount: usd(500), Day: day(-2)},
			{Provider: "stripe", ID: "ch_8", Amount: usd(500), Day: day(-2), PaidOut: true},
			{Provider: "stripe", ID: "ch_7", Amount: usd(500), Day: day(5)}},
			want: "not_paid_out stripe/ch_9 medium 5.00 03-11\nlinked "},
		{name: "not judged beyond the payouts known", opt: func() BankOptions {
			o := bankOpt(0, 7, later)
			o.CoveredUntil["stripe"] = day(0)
			return o
		}(), charges: []ChargeRow{{Provider: "stripe", ID: "ch_9", Amount: usd(500), Day: day(-2)}}, want: "\nlinked "},
		{name: "suggests a credit after a bank holiday", payouts: []PayoutRow{po("po_A", 10000, 1)},
			credits: []CreditRow{credit("C1", 10000, 6)},
			want:    "payout_missing_at_bank stripe/po_A high 100.00 03-10 suggests C1~stripe/po_A\nunexplained_bank_credit C1 medium 100.00 03-15 suggests C1~stripe/po_A\nlinked "},
		{name: "suggests a reference one typo apart", payouts: []PayoutRow{po("po_1QxA2b", 10000, 1)},
			credits: []CreditRow{credit("C1", 9999, 2, "po_1QxA2c")},
			want:    "payout_missing_at_bank stripe/po_1QxA2b high 100.00 03-10 suggests C1~stripe/po_1QxA2b\nunexplained_bank_credit C1 medium 99.99 03-11 suggests C1~stripe/po_1QxA2b\nlinked "},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opt := c.opt
			if opt.Provider == "" {
				opt = bankOpt(0, 7, later)
			}
			res := MatchBank(opt, BankInput{Payouts: slices.Clone(c.payouts), Credits: slices.Clone(c.credits), Charges: c.charges})
			if got := res.render(); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			for _, f := range res.Findings {
				if f.Provider != "bank:chase" || f.Detail == "" || f.AtRisk.Currency != "USD" || f.ID == "" {
					t.Errorf("finding %+v", f)
				}
			}
		})
	}
}

// TestMatchBankDetails: what people read of each kind.
func TestMatchBankDetails(t *testing.T) {
	t.Parallel()
	res := MatchBank(bankOpt(0, 7, later), BankInput{Payouts: []PayoutRow{po("po_A", 123456, 1), po("po_B", 5000, 2)},
		Credits: []CreditRow{credit("C1", 5000, 2, "po_B"), credit("C2", 4000, 3, "po_B")}})
	var got []string
	for _, f := range res.Findings {
		got = append(got, string(f.Kind)+": "+f.Detail)
	}
	want := []string{
		"payout_missing_at_bank: Stripe payout po_A of USD 1,234.56, expected 2026-03-10, has not reached bank:chase by 2026-03-13 (3 business days later)",
		"payout_duplicated_at_bank: Stripe payout po_B of USD 50.00 arrived 2 times (C1 on 2026-03-11, C2 on 2026-03-12): USD 40.00 more than paid out",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Explained["stripe/po_B"] != "arrived C1 on 2026-03-11" || res.Summary != (BankSummary{Payouts: 2, Credits: 2, Arrived: 1, Findings: 2}) {
		t.Errorf("explained %v, summary %+v", res.Explained, res.Summary)
	}
}

func TestBusinessDays(t *testing.T) {
	t.Parallel()
	fri := day(4)
	if fri.Weekday() != time.Friday || fri.AddBusiness(1) != day(7) || fri.AddBusiness(3) != day(9) || day(5).AddBusiness(0) != day(7) {
		t.Errorf("%s %s %s %s", fri.Weekday(), fri.AddBusiness(1), fri.AddBusiness(3), day(5).AddBusiness(0))
	}
	if day(0).String() != "2026-03-09" || !day(1).Midnight(time.UTC).Equal(time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)) {
		t.Error(day(0), day(1).Midnight(time.UTC))
	}
	nairobi := time.FixedZone("EAT", 3*3600)
	if DayOf(time.Date(2026, 3, 9, 22, 0, 0, 0, time.UTC), nairobi) != day(1) {
		t.Error("DayOf in a zone")
	}
}

// TestMatchBankInvariants: on random weeks, every credit of the window is
// either linked (or reversed) or an unexplained_bank_credit, never both;
// every payout of the window past its deadline either arrived, arrived
// wrong, or is missing, exactly one of them; a credit carries several
// payouts only when it is all of them; and the result does not depend on
// the order of the input.
func TestMatchBankInvariants(t *testing.T) {
	t.Parallel()
	for seed := range 300 {
		r := newRand(uint64(seed))
		var in BankInput
		for i := range r.n(8) {
			p := po(fmt.Sprintf("po_%d", i), int64(100*(1+r.n(5))), r.n(10)-2)
			in.Payouts = append(in.Payouts, p)
		}
		for i := range r.n(10) {
			var refs []string
			if r.n(3) == 0 && len(in.Payouts) > 0 {
				refs = append(refs, in.Payouts[r.n(len(in.Payouts))].ID)
			}
			c := credit(fmt.Sprintf("C%d", i), int64(100*(1+r.n(6))), r.n(12)-2, refs...)
			if r.n(4) == 0 {
				c.Source = ""
			}
			in.Credits = append(in.Credits, c)
		}
		opt := bankOpt(0, 7, later)
		res := MatchBank(opt, BankInput{Payouts: slices.Clone(in.Payouts), Credits: slices.Clone(in.Credits)})
		unexplained := map[string]bool{}
		perPayout := map[string]int{}
		for _, f := range res.Findings {
			switch f.Kind {
			case ledger.KindUnexplainedBankCredit:
				unexplained[f.ProviderTxnIDs[0]] = true
			case ledger.KindPayoutMissingAtBank, ledger.KindPayoutAmountMismatch:
				for _, id := range f.ProviderTxnIDs {
					if strings.HasPrefix(id, "stripe/") {
						perPayout[id]++
					}
				}
			}
		}
		linked := map[string][]string{}
		for ref, pm := range res.Matches {
			if pm.Arrived {
				perPayout[ref]++
			}
			for _, c := range pm.Credits {
				linked[c.ID] = append(linked[c.ID], ref)
			}
		}
		for _, c := range in.Credits {
			if c.Booked < opt.From || c.Booked >= opt.To {
				continue
			}
			if (len(linked[c.ID]) > 0) == unexplained[c.ID] && len(linked[c.ID]) > 0 {
				t.Fatalf("seed %d: credit %s linked to %v and unexplained", seed, c.ID, linked[c.ID])
			}
			if len(linked[c.ID]) == 0 && !unexplained[c.ID] {
				// Then it repeats a payout.
				found := false
				for _, f := range res.Findings {
					found = found || f.Kind == ledger.KindPayoutDuplicatedAtBank && slices.Contains(f.ProviderTxnIDs, c.ID)
				}
				if !found {
					t.Fatalf("seed %d: credit %s is neither linked, repeated nor unexplained\n%s", seed, c.ID, res.render())
				}
			}
			if ps := linked[c.ID]; len(ps) > 1 {
				var total int64
				for _, ref := range ps {
					total += res.Matches[ref].Payout.Amount.Minor
				}
				if total != c.Amount.Minor && !slices.ContainsFunc(res.Findings, func(f ledger.Finding) bool {
					return f.Kind == ledger.KindPayoutAmountMismatch && slices.Contains(f.ProviderTxnIDs, c.ID)
				}) {
					t.Fatalf("seed %d: credit %s carries %v, which are not it", seed, c.ID, ps)
				}
			}
		}
		for _, p := range in.Payouts {
			if p.Expected < opt.From || p.Expected >= opt.To {
				continue
			}
			if perPayout[ledger.PayoutRef(p.Provider, p.ID)] != 1 {
				t.Fatalf("seed %d: payout %s judged %d times\n%s", seed, p.ID, perPayout[ledger.PayoutRef(p.Provider, p.ID)], res.render())
			}
		}
		rev := BankInput{Payouts: slices.Clone(in.Payouts), Credits: slices.Clone(in.Credits)}
		slices.Reverse(rev.Payouts)
		slices.Reverse(rev.Credits)
		if a, b := res.render(), MatchBank(opt, rev).render(); a != b {
			t.Fatalf("seed %d: the order of the input matters:\n%s\n--\n%s", seed, a, b)
		}
	}
}

// rng is a small deterministic generator (splitmix64).
type rng struct{ s uint64 }

func newRand(seed uint64) *rng { return &rng{s: seed*0x9E3779B97F4A7C15 + 1} }

func (r *rng) n(max int) int {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	z ^= z >> 31
	return int(z % uint64(max))
}

// BenchmarkMatchBank judges a window of 10,000 payouts of 100 items each, every one arriving in a credit that names it
// but a tenth, which arrive by amount, with a charge per item to check for
// not_paid_out: the in-memory part of a bank run of that size.
func BenchmarkMatchBank(b *testing.B) {
	n := 10000
	const items = 100
	payouts := make([]PayoutRow, n)
	credits := make([]CreditRow, n)
	var charges []ChargeRow
	for i := range n {
		p := po(fmt.Sprintf("po_%08d", i), int64(items*1000+i), i%5)
		p.HasItems = true
		p.Items = make([]ItemRow, items)
		for j := range items {
			id := fmt.Sprintf("ch_%08d_%03d", i, j)
			p.Items[j] = ItemRow{TxnID: id, Value: 1000, InBooks: true}
			charges = append(charges, ChargeRow{Provider: "stripe", ID: id, Amount: usd(1000), Day: day(i%5 - 2), PaidOut: true})
		}
		p.Items[0].Value += int64(i)
		payouts[i] = p
		refs := []string{p.ID}
		if i%10 == 0 {
			refs = nil
		}
		credits[i] = credit(fmt.Sprintf("C%08d", i), p.Amount.Minor, i%5+1, refs...)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res := MatchBank(bankOpt(0, 5, later), BankInput{Payouts: payouts, Credits: credits, Charges: charges})
		if len(res.Findings) != 0 || res.Summary.Arrived != n {
			b.Fatalf("%d findings, %d arrived: %s", len(res.Findings), res.Summary.Arrived, res.Findings[0].Detail)
		}
	}
	b.ReportMetric(float64(n*items)/b.Elapsed().Seconds()*float64(b.N), "items/s")
}
