package matcher

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// Three-way matching: the payouts providers make to a bank account (Stripe
// payouts, M-Pesa settlements), the account's statement, and what each
// payout carries in the books. A bank run judges one window of the
// account's days: the payouts expected to arrive in it, the credits booked
// in it and the charges due to be paid out in it.
//
// A payout links to the account's credits:
//
//  1. by reference: the credit's text carries the payout's id or its trace
//     (Stripe's payout id and trace_id, the M-Pesa settlement's receipt).
//     A credit naming several payouts carries them all; a payout named by
//     several credits arrived in parts, or more than once;
//  2. by amount, currency and day: a credit of the payout's amount, of the
//     payout's provider by its text or of none, that arrived between the
//     payout's expected day and its deadline (ArrivalDays business days
//     later); the provider's credits first, then the nearest day, then the
//     smaller id;
//  3. by sums: one credit of the amount of several payouts of one provider
//     expected in its reach (a day's payouts together, or two of them), or
//     two credits of one provider in the payout's reach that add up to it.
//
// A reversal (a debit marked as one) takes back the credit it names (its
// text names the credit's bank reference) or, failing that, a credit of its
// amount and payer reference: a credit posted twice and reversed is one
// credit. Pending and information entries are not matched: they are
// matched once booked.
//
// Findings (docs/design.md, "Payouts and the bank"):
//
//	payout_missing_at_bank       high    no credit by the payout's deadline
//	payout_amount_mismatch       high    the credits naming it add up to less (medium when more)
//	payout_duplicated_at_bank    medium  credits beyond the payout's amount name it or repeat it
//	payout_composition_mismatch  high    its items in the books do not add up to its amount
//	unexplained_bank_credit      medium  a credit matching no payout (low when no source's text)
//	not_paid_out                 medium  a charge in no payout after the schedule and the arrival days
//
// The bank run gathers the rows; this file decides, with no I/O.

// Day is a calendar day, counted from 1970-01-01.
type Day int32

// DayOf is the day of t in loc (UTC when nil).
func DayOf(t time.Time, loc *time.Location) Day {
	if loc == nil {
		loc = time.UTC
	}
	y, m, d := t.In(loc).Date()
	return Day(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// Midnight is the instant d begins in loc, in UTC.
func (d Day) Midnight(loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	t := time.Unix(int64(d)*86400, 0).UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc).UTC()
}

// String is d as YYYY-MM-DD.
func (d Day) String() string { return time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02") }

// Weekday is the day of the week of d.
func (d Day) Weekday() time.Weekday { return time.Weekday((int64(d) + 4) % 7) }

// Business reports whether d is a business day (Monday to Friday).
func (d Day) Business() bool { w := d.Weekday(); return w != time.Saturday && w != time.Sunday }

// AddBusiness is the n-th business day after d (n >= 0; d itself when n is
// 0). A payout expected on a Saturday is due the next business day.
func (d Day) AddBusiness(n int) Day {
	for !d.Business() {
		d++
	}
	for n > 0 {
		d++
		if d.Business() {
			n--
		}
	}
	return d
}

// BankOptions say which account and window a bank run judges.
type BankOptions struct {
	// Provider is the account's provider name, bank:<name>; Currency its
	// currency; Zone its zone.
	Provider string
	Currency string
	Zone     *time.Location
	// From and To are the window's days, [From, To).
	From, To Day
	// Now is when the run started: a payout whose deadline has not passed
	// is not missing yet.
	Now time.Time
	// ArrivalDays is how many business days after its expected day a
	// payout may arrive.
	ArrivalDays int
	// PayoutDays is, by provider, how many business days after a charge it
	// is paid out (Stripe); providers not listed have no not_paid_out.
	PayoutDays map[string]int
	// CoveredUntil is, by provider, the last day the books know payouts
	// with their items for: a charge due after it is not judged.
	CoveredUntil map[string]Day
	// Names are the names people know the providers by ("Stripe").
	Names map[string]string
}

// PayoutRow is a payout of a provider that pays into the account.
type PayoutRow struct {
	Provider, ID string
	// Amount is the payout's, positive; its transaction is in the books
	// when InBooks, else it is what its items add up to.
	Amount  Money
	InBooks bool
	Status  ledger.TxnStatus
	// Expected is the day it should arrive.
	Expected Day
	TraceID  string
	// Items are what it carries, when HasItems.
	Items    []ItemRow
	HasItems bool
	// Carried and Left, for a sweep of a running balance (an M-Pesa
	// settlement), are the balance before its first item and after it.
	Carried, Left *int64
}

// Ref is the payout's name in findings: provider/id.
func (p *PayoutRow) Ref() string { return ledger.PayoutRef(p.Provider, p.ID) }

// ItemRow is one transaction a payout carries.
type ItemRow struct {
	TxnID string
	// Value is what it adds to the payout in the payout's currency,
	// signed (a fee or a refund takes away), when InBooks.
	Value   int64
	InBooks bool
	// Extra says why it cannot be in the payout ("failed", "in EUR", "a
	// payout"), "" when it may.
	Extra string
	// Also names another payout that carries it too: it is counted, and
	// named only when the payout does not add up.
	Also string
}

// CreditRow is an entry of the account's statement: a credit, or a debit
// (of which only reversals matter).
type CreditRow struct {
	ID     string
	Amount Money
	Debit  bool
	// Reversal marks an entry that undoes an earlier one; Pending one the
	// bank has not booked.
	Reversal bool
	Pending  bool
	// Booked is the booking day, which owns it; Arrived the value day, by
	// which it is matched (the booking day when the bank gives none).
	Booked, Arrived Day
	// Source is the provider its text names, "" when none.
	Source string
	// Refs are the normal forms of what it carries that may name a payout:
	// the references its source's pattern finds, the payer's end-to-end
	// reference.
	Refs []string
	// BankRef is the bank's reference; Text the remittance text.
	BankRef, Text string
	Counterparty  string
}

// ChargeRow is a successful charge of a provider whose charges are paid
// out one by one (Stripe), with whether any payout carries it.
type ChargeRow struct {
	Provider, ID string
	// Amount is what it adds to the balance, in its settlement currency.
	Amount Money
	Day    Day
	// PaidOut says a payout carries it.
	PaidOut      bool
	Counterparty string
}

// BankInput is what a bank run gathered.
type BankInput struct {
	Payouts []PayoutRow
	Credits []CreditRow
	Charges []ChargeRow
}

// PayoutMatch is what became of one payout.
type PayoutMatch struct {
	Payout  *PayoutRow
	Credits []*CreditRow
	// Arrived is true when the credits are the payout, whole.
	Arrived bool
}

// BankResult is a bank window judged.
type BankResult struct {
	// Findings are the window's, sorted, and those of payouts of other
	// windows the run matched (they keep their own window).
	Findings []ledger.Finding
	// Matches are the payouts linked to credits, by payout ref.
	Matches map[string]*PayoutMatch
	// Explained are notes on payouts of any window that arrived whole, by
	// payout ref ("arrived 2026-03-12 in FT26070ABC02"), and on credits
	// matched, by credit id: why a finding about them is gone.
	Explained map[string]string
	// JudgedPayouts are the payouts judged in full: the window's and those
	// of other windows a credit linked; JudgedCredits the credits of other
	// windows linked to a payout.
	JudgedPayouts []string
	JudgedCredits []string
	// Summary counts what the window holds.
	Summary BankSummary
}

// BankSummary counts a bank window.
type BankSummary struct {
	Payouts, Credits, Arrived, Findings int
}

type bankMatcher struct {
	opt     BankOptions
	in      *BankInput
	payouts []*PayoutRow
	credits []*CreditRow
	// used marks credits linked to a payout or reversed.
	used     map[*CreditRow]bool
	reversed map[*CreditRow]*CreditRow
	matches  map[string]*PayoutMatch
	// dup are credits beyond a payout's amount, by payout ref.
	dup map[string][]*CreditRow
	// short are payouts whose credits do not add up to them.
	short map[string]bool
	// payoutsOf are the payouts each credit is linked to.
	payoutsOf map[*CreditRow][]*PayoutRow
}

// MatchBank links the payouts of in to its credits and judges the window.
func MatchBank(opt BankOptions, in BankInput) *BankResult {
	m := &bankMatcher{opt: opt, in: &in, used: map[*CreditRow]bool{}, reversed: map[*CreditRow]*CreditRow{},
		matches: map[string]*PayoutMatch{}, dup: map[string][]*CreditRow{}, short: map[string]bool{},
		payoutsOf: map[*CreditRow][]*PayoutRow{}}
	for i := range in.Payouts {
		p := &in.Payouts[i]
		if p.Status == ledger.TxnFailed || p.Amount.Currency != opt.Currency || p.Amount.Minor <= 0 {
			continue
		}
		m.payouts = append(m.payouts, p)
	}
	slices.SortFunc(m.payouts, func(a, b *PayoutRow) int {
		return cmp.Or(cmp.Compare(a.Expected, b.Expected), cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.ID, b.ID))
	})
	var debits []*CreditRow
	for i := range in.Credits {
		c := &in.Credits[i]
		if c.Pending || c.Amount.Currency != opt.Currency {
			continue
		}
		if c.Debit {
			if c.Reversal {
				debits = append(debits, c)
			}
			continue
		}
		m.credits = append(m.credits, c)
	}
	slices.SortFunc(m.credits, func(a, b *CreditRow) int {
		return cmp.Or(cmp.Compare(a.Arrived, b.Arrived), cmp.Compare(a.ID, b.ID))
	})
	m.reverse(debits)
	m.byReference()
	m.byAmount()
	m.bySums()
	m.repeats()
	return m.judge()
}

// reverse lets each reversal take back the credit it undoes.
func (m *bankMatcher) reverse(debits []*CreditRow) {
	slices.SortFunc(debits, func(a, b *CreditRow) int { return cmp.Or(cmp.Compare(a.Booked, b.Booked), cmp.Compare(a.ID, b.ID)) })
	for _, d := range debits {
		var best *CreditRow
		for _, c := range m.credits {
			if m.used[c] || c.Amount != d.Amount || c.Booked > d.Booked {
				continue
			}
			named := c.BankRef != "" && strings.Contains(d.Text, c.BankRef)
			if named {
				best = c
				break
			}
			if best == nil && sharesRef(c, d) {
				best = c
			}
		}
		if best != nil {
			m.used[best] = true
			m.reversed[best] = d
		}
	}
}

func sharesRef(a, b *CreditRow) bool {
	for _, r := range a.Refs {
		if slices.Contains(b.Refs, r) {
			return true
		}
	}
	return false
}

// deadline is the last day a payout may arrive on.
func (m *bankMatcher) deadline(p *PayoutRow) Day { return p.Expected.AddBusiness(m.opt.ArrivalDays) }

// reaches says whether credit c arrived within payout p's reach.
func (m *bankMatcher) reaches(p *PayoutRow, c *CreditRow) bool {
	return c.Arrived >= p.Expected && c.Arrived <= m.deadline(p)
}

// byReference links the credits that name payouts.
func (m *bankMatcher) byReference() {
	byRef := map[string]*PayoutRow{}
	m.indexPayouts(byRef)
	naming := map[*PayoutRow][]*CreditRow{}
	m.gatherNaming(byRef, naming)
	m.settleNamed(naming)
}

// indexPayouts indexes the payouts in byRef by their normalised id and,
// where no payout's id or earlier trace id took it, their trace id.
func (m *bankMatcher) indexPayouts(byRef map[string]*PayoutRow) {
	for _, p := range m.payouts {
		byRef[ledger.NormalReference(p.ID)] = p
		if p.TraceID != "" {
			if _, taken := byRef[ledger.NormalReference(p.TraceID)]; !taken {
				byRef[ledger.NormalReference(p.TraceID)] = p
			}
		}
	}
}

// gatherNaming gathers in naming, per payout, the free credits that name
// it and no other payout. A credit naming several payouts carries them
// all: it is linked to each at once, and they are short when their sum is
// not its amount.
func (m *bankMatcher) gatherNaming(byRef map[string]*PayoutRow, naming map[*PayoutRow][]*CreditRow) {
	for _, c := range m.credits {
		if m.used[c] {
			continue
		}
		var named []*PayoutRow
		for _, r := range c.Refs {
			if p := byRef[r]; p != nil && !slices.Contains(named, p) {
				named = append(named, p)
			}
		}
		switch len(named) {
		case 0:
		case 1:
			naming[named[0]] = append(naming[named[0]], c)
		default:
			// One credit carries several payouts.
			var sum int64
			for _, p := range named {
				sum += p.Amount.Minor
			}
			m.used[c] = true
			for _, p := range named {
				m.link(p, c)
				if sum != c.Amount.Minor {
					m.short[p.Ref()] = true
				}
			}
		}
	}
}

// settleNamed links each payout, in order, to the credits that name it:
// all of them when they add up to its amount; else the first of its amount,
// or the first ones adding up to it, with the rest as repeats; else all of
// them, marked short.
func (m *bankMatcher) settleNamed(naming map[*PayoutRow][]*CreditRow) {
	for _, p := range m.payouts {
		cs := naming[p]
		if len(cs) == 0 {
			continue
		}
		for _, c := range cs {
			m.used[c] = true
		}
		var sum int64
		for _, c := range cs {
			sum += c.Amount.Minor
		}
		switch {
		case sum == p.Amount.Minor:
			m.link(p, cs...)
		default:
			// The first credit of the payout's amount, else the first
			// credits adding up to it, are the payout; the others repeat it.
			take := -1
			for i, c := range cs {
				if c.Amount.Minor == p.Amount.Minor {
					take = i
					break
				}
			}
			if take >= 0 {
				m.link(p, cs[take])
				m.dup[p.Ref()] = append(append(m.dup[p.Ref()], cs[:take]...), cs[take+1:]...)
				continue
			}
			var run int64
			for i, c := range cs {
				run += c.Amount.Minor
				if run == p.Amount.Minor {
					m.link(p, cs[:i+1]...)
					m.dup[p.Ref()] = append(m.dup[p.Ref()], cs[i+1:]...)
					take = i
					break
				}
			}
			if take < 0 {
				m.link(p, cs...)
				m.short[p.Ref()] = true
			}
		}
	}
}

func (m *bankMatcher) link(p *PayoutRow, cs ...*CreditRow) {
	pm := m.matches[p.Ref()]
	if pm == nil {
		pm = &PayoutMatch{Payout: p}
		m.matches[p.Ref()] = pm
	}
	pm.Credits = append(pm.Credits, cs...)
	for _, c := range cs {
		m.payoutsOf[c] = append(m.payoutsOf[c], p)
	}
}

func (m *bankMatcher) open(p *PayoutRow) bool { return m.matches[p.Ref()] == nil }

// sourceRank ranks a credit for a payout: its provider's first, then one
// of no source; another source's never.
func sourceRank(p *PayoutRow, c *CreditRow) int {
	switch c.Source {
	case p.Provider:
		return 0
	case "":
		return 1
	}
	return -1
}

// byAmount links the payouts no credit named to a credit of their amount
// in their reach.
func (m *bankMatcher) byAmount() {
	// The credits left, by amount, in the order of m.credits.
	byMinor := map[int64][]*CreditRow{}
	for _, c := range m.credits {
		if !m.used[c] {
			byMinor[c.Amount.Minor] = append(byMinor[c.Amount.Minor], c)
		}
	}
	for _, p := range m.payouts {
		if !m.open(p) {
			continue
		}
		var best *CreditRow
		bestRank := 0
		for _, c := range byMinor[p.Amount.Minor] {
			r := sourceRank(p, c)
			if m.used[c] || r < 0 || !m.reaches(p, c) {
				continue
			}
			if best == nil || r < bestRank {
				best, bestRank = c, r
			}
		}
		if best != nil {
			m.used[best] = true
			m.link(p, best)
		}
	}
}

// maxPairs bounds the payouts and credits left open for which pairs are
// tried: past it, only whole days of payouts are.
const maxPairs = 256

// bySums links a credit to the payouts of one provider it adds up, and a
// payout to two credits that add up to it.
func (m *bankMatcher) bySums() {
	var open []*PayoutRow
	for _, p := range m.payouts {
		if m.open(p) {
			open = append(open, p)
		}
	}
	if len(open) == 0 {
		return
	}
	m.creditsCarryingPayouts(open)
	m.payoutsSplitInTwo(open)
}

// creditsCarryingPayouts links each free credit to a day's payouts of one
// provider in its reach that add up to it or, while few enough are open, to
// two payouts of one provider that do.
func (m *bankMatcher) creditsCarryingPayouts(open []*PayoutRow) {
	for _, c := range m.credits {
		if m.used[c] {
			continue
		}
		// A day's payouts of one provider in the credit's reach, together.
		groups := map[string][]*PayoutRow{}
		var keys []string
		for _, p := range open {
			if !m.open(p) || sourceRank(p, c) < 0 || !m.reaches(p, c) {
				continue
			}
			k := fmt.Sprintf("%s %d", p.Provider, p.Expected)
			if groups[k] == nil {
				keys = append(keys, k)
			}
			groups[k] = append(groups[k], p)
		}
		linked := false
		for _, k := range keys {
			g := groups[k]
			if len(g) < 2 || sum(g) != c.Amount.Minor {
				continue
			}
			m.used[c] = true
			for _, p := range g {
				m.link(p, c)
			}
			linked = true
			break
		}
		if linked || len(open) > maxPairs {
			continue
		}
		for i, a := range open {
			for _, b := range open[i+1:] {
				if !m.open(a) || !m.open(b) || a.Provider != b.Provider || sourceRank(a, c) < 0 || !m.reaches(a, c) ||
					!m.reaches(b, c) || a.Amount.Minor+b.Amount.Minor != c.Amount.Minor {
					continue
				}
				m.used[c] = true
				m.link(a, c)
				m.link(b, c)
				linked = true
				break
			}
			if linked {
				break
			}
		}
	}
}

// payoutsSplitInTwo links each payout still open to two free credits of its
// provider in its reach that add up to it, while few enough credits are free.
func (m *bankMatcher) payoutsSplitInTwo(open []*PayoutRow) {
	var free []*CreditRow
	for _, c := range m.credits {
		if !m.used[c] {
			free = append(free, c)
		}
	}
	if len(free) > maxPairs {
		return
	}
	for _, p := range open {
		if !m.open(p) {
			continue
		}
	pairs:
		for i, a := range free {
			for _, b := range free[i+1:] {
				if m.used[a] || m.used[b] || sourceRank(p, a) < 0 || sourceRank(p, b) < 0 || !m.reaches(p, a) || !m.reaches(p, b) ||
					a.Amount.Minor+b.Amount.Minor != p.Amount.Minor {
					continue
				}
				m.used[a], m.used[b] = true, true
				m.link(p, a, b)
				break pairs
			}
		}
	}
}

func sum(ps []*PayoutRow) int64 {
	var s int64
	for _, p := range ps {
		s += p.Amount.Minor
	}
	return s
}

// repeats finds the credits left that repeat a payout that arrived: of its
// provider, its amount, in its reach, the same payment posted again.
func (m *bankMatcher) repeats() {
	for _, c := range m.credits {
		if m.used[c] || c.Source == "" {
			continue
		}
		for _, p := range m.payouts {
			pm := m.matches[p.Ref()]
			if pm == nil || p.Provider != c.Source || c.Amount.Minor != p.Amount.Minor || !m.reaches(p, c) ||
				m.short[p.Ref()] || len(pm.Credits) != 1 || pm.Credits[0].Amount != c.Amount {
				continue
			}
			m.used[c] = true
			m.dup[p.Ref()] = append(m.dup[p.Ref()], c)
			break
		}
	}
}

// owns says whether day d lies in the window.
func (m *bankMatcher) owns(d Day) bool { return d >= m.opt.From && d < m.opt.To }

func (m *bankMatcher) money(minor int64) money.Amount {
	a, err := money.FromMinor(minor, m.opt.Currency)
	if err != nil {
		panic(err) // the currency was read as the payouts' and credits'
	}
	return a
}

// show renders minor units of the account's currency for people: "KES
// 25,694.50".
func (m *bankMatcher) show(minor int64) string {
	a := m.money(minor)
	return a.Currency + " " + a.Format()
}

func (m *bankMatcher) name(provider string) string {
	if n := m.opt.Names[provider]; n != "" {
		return n
	}
	return provider
}

// judge turns the links into the result: each payout judged (missing,
// short, arrived, repeated, composition), then each credit of the window,
// then the payouts not paid out, with suggestions, in finding order.
func (m *bankMatcher) judge() *BankResult {
	res := &BankResult{Matches: m.matches, Explained: map[string]string{}}
	m.judgePayouts(res)
	m.judgeCredits(res)
	res.Findings = append(res.Findings, m.notPaidOut()...)
	m.suggest(res.Findings)
	SortFindings(res.Findings)
	res.Summary.Findings = len(res.Findings)
	return res
}

// judgePayouts judges each payout of the window, and each of another window
// that a credit links: missing at the bank past its deadline, arrived short
// or more, arrived, arrived more than once, and its composition.
func (m *bankMatcher) judgePayouts(res *BankResult) {
	zone := m.opt.Zone
	for _, p := range m.payouts {
		pm := m.matches[p.Ref()]
		if pm != nil {
			pm.Arrived = !m.short[p.Ref()]
			slices.SortFunc(pm.Credits, func(a, b *CreditRow) int { return cmp.Or(cmp.Compare(a.Arrived, b.Arrived), cmp.Compare(a.ID, b.ID)) })
		}
		own := m.owns(p.Expected)
		if !own && pm == nil {
			continue
		}
		// A payout of another window is judged when a credit links it:
		// its findings keep their own window.
		res.JudgedPayouts = append(res.JudgedPayouts, p.Ref())
		if own {
			res.Summary.Payouts++
		}
		at := p.Expected.Midnight(zone)
		what := fmt.Sprintf("%s payout %s of %s", m.name(p.Provider), p.ID, m.show(p.Amount.Minor))
		switch {
		case pm == nil:
			if !m.opt.Now.Before(m.deadline(p).Midnight(zone).AddDate(0, 0, 1)) {
				amt := m.money(p.Amount.Minor)
				res.Findings = append(res.Findings, m.finding(ledger.KindPayoutMissingAtBank, ledger.SeverityHigh, p.Ref(),
					[]string{p.Ref()}, amt, m.money(0), amt, at, "", fmt.Sprintf("%s, expected %s, has not reached %s by %s (%d business days later)",
						what, p.Expected, m.opt.Provider, m.deadline(p), m.opt.ArrivalDays)))
			}
		case m.short[p.Ref()]:
			var got int64
			for _, c := range pm.Credits {
				got += c.Amount.Minor
			}
			// A credit naming several payouts is compared with their sum.
			want := p.Amount.Minor
			if len(pm.Credits) == 1 {
				want = sum(m.payoutsOf[pm.Credits[0]])
			}
			diff := got - want
			sev, word := ledger.SeverityHigh, "short"
			if diff > 0 {
				sev, word = ledger.SeverityMedium, "more"
			}
			res.Findings = append(res.Findings, m.finding(ledger.KindPayoutAmountMismatch, sev, p.Ref(), m.ids(p, pm.Credits),
				m.money(want), m.money(got), m.money(abs64(diff)), at, counterparty(pm.Credits),
				fmt.Sprintf("%s arrived as %s (%s): %s %s", what, m.show(got), creditList(pm.Credits), m.show(abs64(diff)), word)))
		default:
			res.Summary.Arrived++
			res.Explained[p.Ref()] = "arrived " + creditList(pm.Credits)
		}
		if d := m.dup[p.Ref()]; len(d) > 0 {
			var extra int64
			for _, c := range d {
				extra += c.Amount.Minor
			}
			all := append(slices.Clone(pm.Credits), d...)
			slices.SortFunc(all, func(a, b *CreditRow) int { return cmp.Or(cmp.Compare(a.Arrived, b.Arrived), cmp.Compare(a.ID, b.ID)) })
			res.Findings = append(res.Findings, m.finding(ledger.KindPayoutDuplicatedAtBank, ledger.SeverityMedium, p.Ref(), m.ids(p, all),
				m.money(p.Amount.Minor), m.money(p.Amount.Minor+extra), m.money(extra), at, counterparty(all),
				fmt.Sprintf("%s arrived %d times (%s): %s more than paid out", what, len(all), creditList(all), m.show(extra))))
		}
		if f, ok := m.composition(p, at, what); ok {
			res.Findings = append(res.Findings, f)
		}
	}
}

// judgeCredits counts the window's credits, explains those linked and
// raises a finding for each that matches nothing; it lists the linked
// credits of other windows as judged.
func (m *bankMatcher) judgeCredits(res *BankResult) {
	zone := m.opt.Zone
	for _, c := range m.credits {
		if !m.owns(c.Booked) {
			if m.used[c] {
				res.JudgedCredits = append(res.JudgedCredits, c.ID)
			}
			continue
		}
		res.Summary.Credits++
		if m.used[c] {
			if d := m.reversed[c]; d != nil {
				res.Explained[c.ID] = "reversed by " + d.ID
			} else if ps := m.payoutsOf[c]; len(ps) > 0 {
				p := ps[len(ps)-1]
				res.Explained[c.ID] = "the " + m.name(p.Provider) + " payout " + p.ID
			}
			continue
		}
		sev, from := ledger.SeverityLow, ""
		if c.Source != "" {
			sev, from = ledger.SeverityMedium, " although its text names "+m.name(c.Source)
		}
		res.Findings = append(res.Findings, m.finding(ledger.KindUnexplainedBankCredit, sev, c.ID, []string{c.ID}, m.money(0), c.amountIn(m),
			c.amountIn(m), c.Booked.Midnight(zone), c.Counterparty, fmt.Sprintf("credit of %s on %s (%s%s) matches no payout%s",
				c.Amount.amountText(), c.Booked, c.bankRefOrID(), quoted(c.Text), from)))
	}
}

func (c *CreditRow) amountIn(m *bankMatcher) money.Amount { return m.money(c.Amount.Minor) }

func (c *CreditRow) bankRefOrID() string {
	if c.BankRef != "" {
		return c.BankRef
	}
	return c.ID
}

func (a Money) amountText() string {
	v, err := money.FromMinor(a.Minor, a.Currency)
	if err != nil {
		return fmt.Sprintf("%s %d minor units", a.Currency, a.Minor)
	}
	return v.Currency + " " + v.Format()
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return fmt.Sprintf(", %q", s)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// creditList names credits for people: bank reference and day each.
func creditList(cs []*CreditRow) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s on %s", c.bankRefOrID(), c.Arrived)
	}
	return strings.Join(parts, ", ")
}

func counterparty(cs []*CreditRow) string {
	for _, c := range cs {
		if c.Counterparty != "" {
			return c.Counterparty
		}
	}
	return ""
}

// ids are a payout finding's transactions: the payout's ref, then the
// credits.
func (m *bankMatcher) ids(p *PayoutRow, cs []*CreditRow) []string {
	out := []string{p.Ref()}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// finding builds a finding of the account keyed by kind and key, whatever
// transactions it names.
func (m *bankMatcher) finding(kind ledger.Kind, sev ledger.Severity, key string, ids []string, expected, actual, atRisk money.Amount,
	at time.Time, cp, detail string) ledger.Finding {
	return ledger.Finding{ID: ledger.FindingID(kind, "", []string{key}), Kind: kind, Severity: sev, Provider: m.opt.Provider,
		ProviderTxnIDs: ledger.SortedIDs(ids), Expected: expected, Actual: actual, AtRisk: atRisk, Counterparty: cp,
		Detail: detail, OccurredAt: at}
}

// composition checks that a payout's items in the books add up to it:
// those it carries (for a sweep, with what it carried in and left behind).
// It names the items the books do not hold and those that should not be in
// it.
func (m *bankMatcher) composition(p *PayoutRow, at time.Time, what string) (ledger.Finding, bool) {
	if !p.HasItems || !p.InBooks {
		return ledger.Finding{}, false
	}
	var got int64
	var missing, extra, also []string
	for _, it := range p.Items {
		switch {
		case !it.InBooks:
			missing = append(missing, it.TxnID)
		case it.Extra != "":
			extra = append(extra, it.TxnID+" ("+it.Extra+")")
		default:
			got += it.Value
			if it.Also != "" {
				also = append(also, it.TxnID+" (in "+it.Also+" too)")
			}
		}
	}
	sweep := ""
	if p.Carried != nil && p.Left != nil {
		got += *p.Carried - *p.Left
		sweep = fmt.Sprintf(" (with %s carried in and %s left behind)", m.show(*p.Carried), m.show(*p.Left))
	}
	if got == p.Amount.Minor && len(missing)+len(extra) == 0 {
		// An item another payout carries too is that payout's mistake
		// when this one adds up.
		return ledger.Finding{}, false
	}
	diff := p.Amount.Minor - got
	detail := fmt.Sprintf("%s carries items adding up to %s in the books%s", what, m.show(got), sweep)
	if diff != 0 {
		word := "unaccounted for"
		if diff < 0 {
			word = "more than paid out"
		}
		detail += fmt.Sprintf(": %s %s", m.show(abs64(diff)), word)
	}
	if len(missing) > 0 {
		detail += "; not in the books: " + list(missing)
	}
	if len(extra) > 0 {
		detail += "; cannot be in it: " + list(extra)
	}
	if len(also) > 0 {
		detail += "; paid out in another payout too: " + list(also)
	}
	ids := []string{p.Ref()}
	for _, it := range p.Items {
		if !it.InBooks || it.Extra != "" || it.Also != "" {
			ids = append(ids, ledger.PayoutRef(p.Provider, it.TxnID))
		}
	}
	return m.finding(ledger.KindPayoutCompositionMismatch, ledger.SeverityHigh, p.Ref(), ids, m.money(p.Amount.Minor), m.money(got),
		m.money(abs64(diff)), at, "", detail), true
}

// maxListed bounds the items a finding's detail names.
const maxListed = 10

func list(s []string) string {
	if len(s) > maxListed {
		return strings.Join(s[:maxListed], ", ") + fmt.Sprintf(" and %d more", len(s)-maxListed)
	}
	return strings.Join(s, ", ")
}

// notPaidOut finds the charges due to be paid out in the window that no
// payout carries, once their deadline has passed.
func (m *bankMatcher) notPaidOut() []ledger.Finding {
	var out []ledger.Finding
	for _, c := range m.in.Charges {
		days, ok := m.opt.PayoutDays[c.Provider]
		if !ok || c.PaidOut || c.Amount.Currency != m.opt.Currency {
			continue
		}
		due := c.Day.AddBusiness(days)
		if !m.owns(due) || due > m.opt.CoveredUntil[c.Provider] {
			continue
		}
		deadline := due.AddBusiness(m.opt.ArrivalDays)
		if m.opt.Now.Before(deadline.Midnight(m.opt.Zone).AddDate(0, 0, 1)) {
			continue
		}
		amt := m.money(c.Amount.Minor)
		out = append(out, m.finding(ledger.KindNotPaidOut, ledger.SeverityMedium, ledger.PayoutRef(c.Provider, c.ID),
			[]string{ledger.PayoutRef(c.Provider, c.ID)}, amt, m.money(0), amt, due.Midnight(m.opt.Zone), c.Counterparty,
			fmt.Sprintf("%s charge %s of %s on %s is in no payout: due to be paid out on %s (%d business days later), no later than %s",
				m.name(c.Provider), c.ID, m.show(c.Amount.Minor), c.Day, due, days, deadline)))
	}
	return out
}

// nearDays is how many days beyond a payout's reach a credit of its amount
// is suggested (a bank holiday, a weekend the schedule did not know).
const nearDays = 3

// suggest pairs each missing payout with the unexplained credit most
// likely to be it: the same amount of its provider (or of none) a few days
// outside its reach, or a credit whose reference is one typo from the
// payout's id or trace; and tells the credit.
func (m *bankMatcher) suggest(fs []ledger.Finding) {
	byID := map[string]int{}
	for i, f := range fs {
		byID[f.ID] = i
	}
	type pair struct {
		payout *PayoutRow
		credit *CreditRow
		why    string
		rank   int
		gap    int32
	}
	var pairs []pair
	for _, p := range m.payouts {
		if _, ok := byID[ledger.FindingID(ledger.KindPayoutMissingAtBank, "", []string{p.Ref()})]; !ok {
			continue
		}
		refs := []string{ledger.NormalReference(p.ID)}
		if p.TraceID != "" {
			refs = append(refs, ledger.NormalReference(p.TraceID))
		}
		for _, c := range m.credits {
			if m.used[c] || sourceRank(p, c) < 0 {
				continue
			}
			if _, ok := byID[ledger.FindingID(ledger.KindUnexplainedBankCredit, "", []string{c.ID})]; !ok {
				continue
			}
			why, rank := "", 0
			for _, r := range c.Refs {
				for _, pr := range refs {
					if closeness(r, pr) != closeNone {
						why, rank = fmt.Sprintf("its reference %s is one typo from %s", r, pr), 2
					}
				}
			}
			gap := int32(c.Arrived - p.Expected)
			if c.Amount.Minor == p.Amount.Minor && c.Arrived >= p.Expected-nearDays && c.Arrived <= m.deadline(p)+nearDays && rank == 0 {
				when := "before"
				if c.Arrived > p.Expected {
					when = "after"
				}
				why, rank = fmt.Sprintf("the same amount, %d day(s) %s the payout's reach (%s to %s): a bank holiday?", dayGap(m, p, c),
					when, p.Expected, m.deadline(p)), 1
			} else if rank == 2 && c.Amount.Minor == p.Amount.Minor {
				why += ", the same amount"
				rank = 3
			}
			if rank > 0 {
				pairs = append(pairs, pair{p, c, why, rank, abs32(gap)})
			}
		}
	}
	slices.SortFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(b.rank, a.rank), cmp.Compare(a.gap, b.gap), cmp.Compare(a.payout.Ref(), b.payout.Ref()),
			cmp.Compare(a.credit.ID, b.credit.ID))
	})
	for _, pr := range pairs {
		pi := byID[ledger.FindingID(ledger.KindPayoutMissingAtBank, "", []string{pr.payout.Ref()})]
		ci := byID[ledger.FindingID(ledger.KindUnexplainedBankCredit, "", []string{pr.credit.ID})]
		if !fs[pi].Suggestion.IsZero() || !fs[ci].Suggestion.IsZero() {
			continue
		}
		fs[pi].Suggestion = ledger.Suggestion{FindingID: fs[ci].ID, IntentKey: pr.payout.Ref(), TxnID: pr.credit.ID,
			Reason: "credit " + pr.credit.bankRefOrID() + ": " + pr.why}
		fs[ci].Suggestion = ledger.Suggestion{FindingID: fs[pi].ID, IntentKey: pr.payout.Ref(), TxnID: pr.credit.ID,
			Reason: "payout " + pr.payout.ID + ": " + pr.why}
	}
}

// dayGap is how many days credit c lies outside payout p's reach.
func dayGap(m *bankMatcher, p *PayoutRow, c *CreditRow) int {
	if c.Arrived < p.Expected {
		return int(p.Expected - c.Arrived)
	}
	return int(c.Arrived - m.deadline(p))
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}
