package reconciler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/bankaccount"
)

// A run of a bank account (provider bank:<name>, Config.Banks) matches the
// payouts of the providers that pay into it to its statement's credits
// (matcher.MatchBank). It is claimed, leased, written and announced like any
// other run; what it reads differs:
//
//   - the payouts of each source expected within the window widened by the
//     account's arrival days (and a few days more, for near misses), with
//     their transactions and what each carries in the books; first pulled
//     (Stripe's /v1/payouts by arrival date, through the payout puller of
//     the source's account) unless --no-pull or a dry run;
//   - the account's entries booked in the window widened the same way,
//     with their details;
//   - the charges of sources paid out one by one (Stripe) due to be paid
//     out in the window, and whether a payout carries them;
//   - then, by index only and across the account's horizon, the credits
//     that name a payout of the window that found none, and the payouts
//     that a credit of the window names: a payout that arrives after its
//     window, a credit of a payout of weeks ago.
//
// The window's findings are those of its payouts (by expected day), its
// credits (by booking day) and its charges (by due day). A payout of
// another window that a credit links is judged in full, its findings in
// its own window; the findings of the window no longer seen are resolved,
// and so are those of the other windows' payouts and credits it judged.

// bankSlack is how many days beyond a payout's reach a run reads, for
// credits that arrived early and near misses (a bank holiday).
const bankSlack = 4

// providerNames are the names people know the payers of a bank account by.
var providerNames = map[string]string{"stripe": "Stripe", "mpesa": "M-Pesa"}

// BankStats are what a bank run counted: the window's payouts and credits,
// the payouts that arrived, and what it looked up beyond its span.
type BankStats struct {
	Payouts, Credits, Arrived int
	// LateCredits and LatePayouts were found by look-ups beyond the span.
	LateCredits, LatePayouts int
}

// bankLoad is what a bank run read.
type bankLoad struct {
	in        matcher.BankInput
	payoutIdx map[string]int // by ref, into in.Payouts
	creditIdx map[string]int // by id, into in.Credits
	txns      map[string]ledger.ProviderTxn
	covered   map[string]matcher.Day
	// paid are the transactions (provider/id) the payouts read carry.
	paid map[string]bool
}

func (r *Reconciler) runBank(ctx context.Context, p Params, a *bankaccount.Account, out *Outcome) error {
	zone := a.Location()
	from, to := matcher.DayOf(p.From, zone), matcher.DayOf(p.To.Add(-time.Nanosecond), zone)+1
	arrival := a.Arrival()
	// The payouts whose reach covers the window's credits, and the credits
	// in the reach of the window's payouts.
	pFrom, pTo := from-matcher.Day(arrival+2+bankSlack), to+bankSlack
	cFrom, cTo := from-bankSlack, to+matcher.Day(arrival+2+bankSlack)
	opt := matcher.BankOptions{Provider: a.Provider(), Currency: a.Currency, Zone: zone, From: from, To: to,
		Now: out.Run.StartedAt, ArrivalDays: arrival, PayoutDays: map[string]int{}, CoveredUntil: map[string]matcher.Day{},
		Names: providerNames}
	for _, s := range a.Sources {
		if s.PayoutDays > 0 {
			opt.PayoutDays[s.Provider] = s.PayoutDays
		}
	}
	if !p.DryRun && !p.NoPull {
		if err := r.pullPayouts(ctx, p, a, pFrom.Midnight(time.UTC), pTo.Midnight(time.UTC)); err != nil {
			if ctx.Err() != nil {
				return err
			}
			out.PullError = err.Error()
		}
	}
	ld := &bankLoad{payoutIdx: map[string]int{}, creditIdx: map[string]int{}, txns: map[string]ledger.ProviderTxn{},
		covered: map[string]matcher.Day{}, paid: map[string]bool{}}
	for _, s := range a.Sources {
		ps, err := r.store.FindPayouts(ctx, ledger.PayoutLookup{Provider: s.Provider, Accounts: []string{s.Account}, From: pFrom.Midnight(zone),
			To: pTo.Midnight(zone)})
		if err != nil {
			return err
		}
		if err := r.addPayouts(ctx, a, ld, ps); err != nil {
			return err
		}
	}
	err := r.store.ListProviderTxns(ctx, ledger.TxnFilter{Provider: a.Provider(), From: cFrom.Midnight(zone), To: cTo.Midnight(zone)},
		func(t ledger.ProviderTxn) error { ld.addCredit(t); return nil })
	if err != nil {
		return err
	}
	if err := r.creditDetails(ctx, a, ld, 0); err != nil {
		return err
	}
	for prov, days := range opt.PayoutDays {
		if err := r.loadCharges(ctx, a, ld, prov, sourceAccount(a, prov), from, to, days); err != nil {
			return err
		}
	}
	for prov, d := range ld.covered {
		opt.CoveredUntil[prov] = d
	}
	res := matcher.MatchBank(opt, ld.in)
	stats := &BankStats{}
	if err := r.lookBankLate(ctx, a, opt, ld, res, stats); err != nil {
		return err
	}
	if stats.LateCredits+stats.LatePayouts > 0 {
		res = matcher.MatchBank(opt, ld.in)
	}
	if out.PullError != "" {
		// Without every payout, a credit cannot be called unexplained.
		res.Findings = slices.DeleteFunc(res.Findings, func(f ledger.Finding) bool { return f.Kind == ledger.KindUnexplainedBankCredit })
	}
	stats.Payouts, stats.Credits, stats.Arrived = res.Summary.Payouts, res.Summary.Credits, res.Summary.Arrived
	out.Bank = stats
	out.Findings = res.Findings
	out.Summary = matcher.Summary{Intents: res.Summary.Payouts, Transactions: res.Summary.Credits, Matched: res.Summary.Arrived,
		Findings: len(res.Findings)}
	out.Run.Counts = ledger.RunCounts{Intents: res.Summary.Payouts, Transactions: res.Summary.Credits, Matched: res.Summary.Arrived,
		Findings: len(res.Findings)}
	if p.DryRun {
		for i := range out.Findings {
			out.Findings[i].FirstSeenAt, out.Findings[i].LastSeenAt = out.Run.StartedAt, out.Run.StartedAt
		}
		return nil
	}
	return r.writeBank(ctx, out, res)
}

// pullPayouts pulls the payouts of the sources that can be pulled (each
// through the payout puller of its account), expected in [from, to), with
// what each carries, and records them in the source's account.
func (r *Reconciler) pullPayouts(ctx context.Context, p Params, a *bankaccount.Account, from, to time.Time) error {
	var errs []error
	pulled := map[string]bool{}
	for _, s := range a.Sources {
		scope := ledger.Scope(s.Provider, s.Account)
		pp := r.cfg.PayoutPullers[scope]
		if pp == nil || pulled[scope] {
			continue
		}
		pulled[scope] = true
		rc := r.recorder(p)
		err := pp.PullPayouts(ctx, from, to, func(sg providers.Sighting) error {
			sg.Txn.Account = s.Account
			if err := ledger.ValidateTxn(sg.Txn); err != nil {
				return fmt.Errorf("%s payout pull: %w", scope, err)
			}
			return rc.add(ctx, sg)
		})
		if ferr := rc.flush(ctx); err == nil {
			err = ferr
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("pull %s payouts %s..%s after %d sightings: %w", scope,
				from.Format(time.RFC3339), to.Format(time.RFC3339), rc.n, err))
		}
	}
	return errors.Join(errs...)
}

// sourceAccount is the account of provider whose payouts reach a (the
// default one unless its source says).
func sourceAccount(a *bankaccount.Account, provider string) string {
	for _, s := range a.Sources {
		if s.Provider == provider {
			return s.Account
		}
	}
	return ""
}

// idChunk bounds the ids of one look-up.
const idChunk = 10000

// findTxns reads the transactions of provider among ids, without their
// sources, in chunks.
func (r *Reconciler) findTxns(ctx context.Context, provider, account string, ids []string, into map[string]ledger.ProviderTxn) error {
	for start := 0; start < len(ids); start += idChunk {
		chunk := ids[start:min(start+idChunk, len(ids))]
		ts, err := r.store.FindTxns(ctx, ledger.TxnLookup{Provider: provider, Account: account, IDs: chunk})
		if err != nil {
			return err
		}
		for _, t := range ts {
			into[provider+"/"+t.ID] = t
		}
	}
	return nil
}

// addPayouts adds payouts not read yet, with their transactions and items.
func (r *Reconciler) addPayouts(ctx context.Context, a *bankaccount.Account, ld *bankLoad, ps []ledger.Payout) (err error) {
	ps = slices.DeleteFunc(ps, func(p ledger.Payout) bool {
		_, ok := ld.payoutIdx[ledger.PayoutRef(p.Provider, p.ID)]
		return ok
	})
	// A payout's transaction and items are of its account.
	accounts := map[string][]ledger.Payout{}
	for _, p := range ps {
		accounts[p.Account] = append(accounts[p.Account], p)
	}
	for _, account := range slices.Sorted(maps.Keys(accounts)) {
		if err := r.addAccountPayouts(ctx, a, ld, accounts[account]); err != nil {
			return err
		}
	}
	return nil
}

// addAccountPayouts adds payouts of one account with their transactions
// and items.
func (r *Reconciler) addAccountPayouts(ctx context.Context, a *bankaccount.Account, ld *bankLoad, ps []ledger.Payout) error {
	provider, account := ps[0].Provider, ps[0].Account
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	if err := r.findTxns(ctx, provider, account, ids, ld.txns); err != nil {
		return err
	}
	byPayout := map[string][]string{}
	itemIDs, err := r.payoutItems(ctx, ld, provider, ids, byPayout)
	if err != nil {
		return err
	}
	if err := r.findTxns(ctx, provider, account, itemIDs, ld.txns); err != nil {
		return err
	}
	in := map[string][]string{}
	if err := r.payoutsOfItems(ctx, provider, itemIDs, in); err != nil {
		return err
	}
	ld.addPayoutRows(a, provider, ps, byPayout, in)
	return nil
}

// payoutItems reads, in chunks, the items of the payouts ids of provider:
// the transaction ids of each payout into byPayout, and every item's id
// once, which it returns. It marks each item paid out.
func (r *Reconciler) payoutItems(ctx context.Context, ld *bankLoad, provider string, ids []string, byPayout map[string][]string) ([]string, error) {
	var items []ledger.PayoutItem
	for start := 0; start < len(ids); start += idChunk {
		its, err := r.store.PayoutItems(ctx, provider, ids[start:min(start+idChunk, len(ids))])
		if err != nil {
			return nil, err
		}
		items = append(items, its...)
	}
	var itemIDs []string
	for _, it := range items {
		byPayout[it.PayoutID] = append(byPayout[it.PayoutID], it.TxnID)
		ld.paid[provider+"/"+it.TxnID] = true
		itemIDs = append(itemIDs, it.TxnID)
	}
	return uniq(itemIDs), nil
}

// payoutsOfItems reads, in chunks, the payouts each item is in, into in,
// to tell one paid out twice.
func (r *Reconciler) payoutsOfItems(ctx context.Context, provider string, itemIDs []string, in map[string][]string) error {
	for start := 0; start < len(itemIDs); start += idChunk {
		its, err := r.store.ItemsOfTxns(ctx, provider, itemIDs[start:min(start+idChunk, len(itemIDs))])
		if err != nil {
			return err
		}
		for _, it := range its {
			in[it.TxnID] = append(in[it.TxnID], it.PayoutID)
		}
	}
	return nil
}

// addPayoutRows adds a matcher row per payout of provider: its expected
// day, its items with their value and the other payout each is in, and its
// amount (its transaction's, else what its items add up to). A payout whose
// transaction is not a readable payout is left out.
func (ld *bankLoad) addPayoutRows(a *bankaccount.Account, provider string, ps []ledger.Payout, byPayout, in map[string][]string) {
	zone := a.Location()
	for _, p := range ps {
		t, inBooks := ld.txns[provider+"/"+p.ID]
		row := matcher.PayoutRow{Provider: provider, ID: p.ID, InBooks: inBooks, Status: ledger.TxnSucceeded, TraceID: p.TraceID}
		// A provider's arrival date is a day in UTC (Stripe's midnight);
		// a time it left is read in the bank's zone.
		if !p.ArrivalAt.IsZero() {
			row.Expected = matcher.DayOf(p.ArrivalAt, time.UTC)
		} else {
			row.Expected = matcher.DayOf(p.InitiatedAt, zone)
		}
		var value int64
		for _, id := range byPayout[p.ID] {
			it := matcher.ItemRow{TxnID: id}
			if x, ok := ld.txns[provider+"/"+id]; ok {
				it.InBooks = true
				it.Value, it.Extra = itemValue(x, a.Currency)
				if others := slices.DeleteFunc(slices.Clone(in[id]), func(s string) bool { return s == p.ID }); len(others) > 0 {
					slices.Sort(others)
					it.Also = others[0]
				}
			}
			value += it.Value
			row.Items = append(row.Items, it)
		}
		row.HasItems = len(row.Items) > 0
		if inBooks {
			minor, err := t.Amount.Minor()
			if err != nil || t.Type != ledger.TxnPayout {
				continue
			}
			row.Amount, row.Status = matcher.Money{Minor: minor, Currency: t.Amount.Currency}, t.Status
		} else {
			// Known from a report's rows only: it is what they add up to.
			row.Amount = matcher.Money{Minor: value, Currency: a.Currency}
		}
		if !p.Carried.IsZero() && !p.Left.IsZero() {
			c, err1 := p.Carried.Minor()
			l, err2 := p.Left.Minor()
			if err1 == nil && err2 == nil {
				row.Carried, row.Left = &c, &l
			}
		}
		if row.HasItems && row.Expected > ld.covered[provider] {
			ld.covered[provider] = row.Expected
		}
		ld.payoutIdx[ledger.PayoutRef(provider, p.ID)] = len(ld.in.Payouts)
		ld.in.Payouts = append(ld.in.Payouts, row)
	}
}

// itemValue is what a transaction adds to a payout in currency, and why it
// should not be in one ("" when it belongs).
func itemValue(t ledger.ProviderTxn, currency string) (int64, string) {
	amt := t.Amount
	if amt.Currency != currency && !t.Settlement.IsZero() {
		amt = t.Settlement
	}
	if amt.Currency != currency {
		return 0, "in " + amt.Currency
	}
	minor, err := amt.Minor()
	if err != nil {
		return 0, "amount " + amt.Text() + " unreadable"
	}
	switch t.Type {
	case ledger.TxnCharge, ledger.TxnDisputeReversal, ledger.TxnRefundFailure, ledger.TxnAdjustment, ledger.TxnOther:
	case ledger.TxnRefund, ledger.TxnReversal, ledger.TxnDispute, ledger.TxnFee:
		minor = -minor
	case ledger.TxnPayout:
		return 0, "a payout"
	default:
		return 0, "a " + string(t.Type)
	}
	if t.Status == ledger.TxnFailed {
		return 0, "failed"
	}
	return minor, ""
}

// addCredit takes an entry of the account, once.
func (ld *bankLoad) addCredit(t ledger.ProviderTxn) {
	if _, ok := ld.creditIdx[t.ID]; ok {
		return
	}
	minor, err := t.Amount.Minor()
	if err != nil {
		return
	}
	ld.creditIdx[t.ID] = len(ld.in.Credits)
	ld.in.Credits = append(ld.in.Credits, matcher.CreditRow{ID: t.ID, Amount: matcher.Money{Minor: minor, Currency: t.Amount.Currency},
		Debit: t.Type == ledger.TxnBankDebit, Pending: t.Status != ledger.TxnSucceeded, Counterparty: t.Counterparty})
	ld.txns[t.Provider+"/"+t.ID] = t
}

// creditDetails reads the entries of the credits from index start on: their
// days, texts and the references they carry.
func (r *Reconciler) creditDetails(ctx context.Context, a *bankaccount.Account, ld *bankLoad, start int) error {
	zone := a.Location()
	var ids []string
	for _, c := range ld.in.Credits[start:] {
		ids = append(ids, c.ID)
	}
	entries := map[string]ledger.BankEntry{}
	for s := 0; s < len(ids); s += idChunk {
		es, err := r.store.GetBankEntries(ctx, a.Provider(), ids[s:min(s+idChunk, len(ids))])
		if err != nil {
			return err
		}
		for _, e := range es {
			entries[e.TxnID] = e
		}
	}
	for i := start; i < len(ld.in.Credits); i++ {
		c := &ld.in.Credits[i]
		t := ld.txns[a.Provider()+"/"+c.ID]
		e, ok := entries[c.ID]
		if !ok {
			// No entry (a statement imported as evidence some other way):
			// its day is when it happened.
			e = ledger.BankEntry{BookingDate: matcher.DayOf(t.OccurredAt, zone).Midnight(time.UTC), Text: t.Reference}
		}
		c.Booked = matcher.DayOf(e.BookingDate, time.UTC)
		c.Arrived = c.Booked
		if !e.ValueDate.IsZero() {
			c.Arrived = matcher.DayOf(e.ValueDate, time.UTC)
		}
		c.Reversal, c.BankRef, c.Text = e.Reversal, e.BankRef, e.Text
		text := joinText(e.EndToEndID, t.Reference, e.Counterparty, e.Text, e.Info)
		src, refs := a.Recognise(text)
		c.Source = src
		for _, s := range append(refs, t.Reference, t.ProviderRef, e.EndToEndID) {
			if n := ledger.NormalReference(s); n != "" && !slices.Contains(c.Refs, n) {
				c.Refs = append(c.Refs, n)
			}
		}
	}
	return nil
}

func joinText(parts ...string) string {
	var out []byte
	for _, p := range parts {
		if p == "" {
			continue
		}
		if len(out) > 0 {
			out = append(out, ' ')
		}
		out = append(out, p...)
	}
	return string(out)
}

// loadCharges reads the successful charges of provider due to be paid out
// in [from, to) and whether a payout carries them.
func (r *Reconciler) loadCharges(ctx context.Context, a *bankaccount.Account, ld *bankLoad, provider, account string, from, to matcher.Day, days int) error {
	zone := a.Location()
	// A charge is due days business days later: at most days plus two
	// weekends of calendar days earlier.
	lo, hi := from-matcher.Day(days+4), to
	var charges []ledger.ProviderTxn
	err := r.store.ListProviderTxns(ctx, ledger.TxnFilter{Provider: provider, Account: account, From: lo.Midnight(zone), To: hi.Midnight(zone)},
		func(t ledger.ProviderTxn) error {
			if t.Type == ledger.TxnCharge && t.Status == ledger.TxnSucceeded {
				due := matcher.DayOf(t.OccurredAt, zone).AddBusiness(days)
				if due >= from && due < to {
					charges = append(charges, t)
				}
			}
			return nil
		})
	if err != nil || len(charges) == 0 {
		return err
	}
	// Only the charges no payout read carries are looked up.
	paid := map[string]bool{}
	var ids []string
	for _, c := range charges {
		if ld.paid[provider+"/"+c.ID] {
			paid[c.ID] = true
		} else {
			ids = append(ids, c.ID)
		}
	}
	for s := 0; s < len(ids); s += idChunk {
		its, err := r.store.ItemsOfTxns(ctx, provider, ids[s:min(s+idChunk, len(ids))])
		if err != nil {
			return err
		}
		for _, it := range its {
			paid[it.TxnID] = true
		}
	}
	for _, c := range charges {
		amt := c.Amount
		if amt.Currency != a.Currency && !c.Settlement.IsZero() {
			amt = c.Settlement
		}
		minor, err := amt.Minor()
		if err != nil {
			continue
		}
		ld.in.Charges = append(ld.in.Charges, matcher.ChargeRow{Provider: provider, ID: c.ID, Amount: matcher.Money{Minor: minor,
			Currency: amt.Currency}, Day: matcher.DayOf(c.OccurredAt, zone), PaidOut: paid[c.ID], Counterparty: c.Counterparty})
	}
	return nil
}

// lookBankLate looks up, across the account's horizon and by index only,
// the credits that name a payout of the window no credit linked, and the
// payouts that the window's unlinked credits name.
func (r *Reconciler) lookBankLate(ctx context.Context, a *bankaccount.Account, opt matcher.BankOptions, ld *bankLoad,
	res *matcher.BankResult, stats *BankStats) error {
	zone := a.Location()
	h := a.HorizonOrDefault()
	hlo, hhi := opt.From.Midnight(zone).Add(-h), opt.To.Midnight(zone).Add(h)
	var byRef ledger.TxnLookup
	for _, p := range ld.in.Payouts {
		if p.Expected < opt.From || p.Expected >= opt.To || res.Matches[ledger.PayoutRef(p.Provider, p.ID)] != nil {
			continue
		}
		for _, s := range []string{p.ID, p.TraceID} {
			if s != "" {
				byRef.ProviderRefs = append(byRef.ProviderRefs, s)
				byRef.RefNorms = append(byRef.RefNorms, ledger.NormalReference(s))
			}
		}
	}
	if !byRef.Empty() {
		byRef.Provider, byRef.From, byRef.To = a.Provider(), hlo, hhi
		byRef.ProviderRefs, byRef.RefNorms = uniq(byRef.ProviderRefs), uniq(byRef.RefNorms)
		ts, err := r.store.FindTxns(ctx, byRef)
		if err != nil {
			return err
		}
		start := len(ld.in.Credits)
		for _, t := range ts {
			if _, ok := ld.creditIdx[t.ID]; !ok && t.Type == ledger.TxnBankCredit {
				ld.addCredit(t)
				stats.LateCredits++
			}
		}
		if err := r.creditDetails(ctx, a, ld, start); err != nil {
			return err
		}
	}
	// The payouts the window's unlinked credits name, by id or trace.
	linked := map[string]bool{}
	for _, pm := range res.Matches {
		for _, c := range pm.Credits {
			linked[c.ID] = true
		}
	}
	var names []string
	for _, c := range ld.in.Credits {
		if c.Booked < opt.From || c.Booked >= opt.To || c.Debit || linked[c.ID] {
			continue
		}
		t := ld.txns[a.Provider()+"/"+c.ID]
		_, refs := a.Recognise(joinText(t.Reference, t.ProviderRef, c.Text))
		names = append(names, refs...)
		names = append(names, t.Reference, t.ProviderRef)
	}
	names = uniq(names)
	if len(names) == 0 {
		return nil
	}
	for _, s := range a.Sources {
		ps, err := r.store.FindPayouts(ctx, ledger.PayoutLookup{Provider: s.Provider, Accounts: []string{s.Account}, IDs: names, TraceIDs: names})
		if err != nil {
			return err
		}
		n := len(ld.in.Payouts)
		if err := r.addPayouts(ctx, a, ld, ps); err != nil {
			return err
		}
		stats.LatePayouts += len(ld.in.Payouts) - n
	}
	return nil
}

// bankResolvable are the kinds of finding about a payout that a run which
// judged the payout in full resolves when it no longer sees them.
var bankResolvable = []ledger.Kind{ledger.KindPayoutMissingAtBank, ledger.KindPayoutAmountMismatch,
	ledger.KindPayoutDuplicatedAtBank, ledger.KindPayoutCompositionMismatch}

// writeBank records a bank run in one transaction: its findings, the
// resolution of those it no longer sees (with the evidence that explains
// each), the alerts, and the run.
func (r *Reconciler) writeBank(ctx context.Context, out *Outcome, res *matcher.BankResult) error {
	run := out.Run
	return r.store.InTx(ctx, func(tx ledger.Tx) error {
		now := r.cfg.Clock().UTC()
		changes, err := tx.UpsertFindings(ctx, res.Findings, run.ID, now)
		if err != nil {
			return err
		}
		findings := make([]ledger.Finding, len(changes))
		for i, ch := range changes {
			findings[i] = ch.Finding
		}
		var ids []string
		for _, ref := range res.JudgedPayouts {
			for _, k := range bankResolvable {
				ids = append(ids, ledger.FindingID(k, "", []string{ref}))
			}
		}
		for _, id := range res.JudgedCredits {
			ids = append(ids, ledger.FindingID(ledger.KindUnexplainedBankCredit, "", []string{id}))
		}
		cands, err := tx.ListUnseen(ctx, ledger.UnseenFilter{Provider: run.Provider, From: run.From, To: run.To, IDs: ids,
			SeenSince: run.StartedAt})
		if err != nil {
			return err
		}
		dflt := fmt.Sprintf("no longer seen by run %d (attempt %d)", run.ID, run.Attempt)
		var resolutions []ledger.Resolution
		for _, f := range cands {
			if out.PullError != "" && f.Kind == ledger.KindUnexplainedBankCredit {
				continue
			}
			note := dflt
			for _, id := range f.ProviderTxnIDs {
				if s := res.Explained[id]; s != "" {
					note = s + fmt.Sprintf(" (seen by run %d)", run.ID)
					break
				}
			}
			resolutions = append(resolutions, ledger.Resolution{ID: f.ID, Note: note})
		}
		resolved, err := tx.ResolveFindings(ctx, ledger.ResolveFindingsParams{Resolutions: resolutions, SeenSince: run.StartedAt,
			Now: now, RunID: run.ID})
		if err != nil {
			return err
		}
		counts := out.Run.Counts
		counts.Resolved, counts.Findings = len(resolved), len(changes)
		for _, c := range changes {
			if c.New || c.Reopened {
				counts.New++
			}
		}
		counts.DurationMS = int(now.Sub(run.StartedAt).Milliseconds())
		if r.cfg.OnFindings != nil {
			if err := r.cfg.OnFindings(ctx, tx, run, changes, resolved); err != nil {
				return fmt.Errorf("findings hook: %w", err)
			}
		}
		fin, err := tx.FinishRun(ctx, ledger.RunFinish{ID: run.ID, Owner: run.Owner, State: ledger.RunFinished,
			Counts: counts, Error: bankPullNote(out.PullError), Now: now})
		if err != nil {
			return err
		}
		matcher.SortFindings(findings)
		out.Run, out.Findings, out.Changes, out.Resolved = fin, findings, changes, resolved
		return nil
	})
}

func bankPullNote(pullErr string) string {
	if pullErr == "" {
		return ""
	}
	return "payout pull failed, unexplained_bank_credit not judged: " + pullErr
}
