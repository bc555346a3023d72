package matcher_test

// How the reference matcher judges intents, charges and refunds
// (reference_test.go).

import (
	"cmp"
	"math/big"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/money"
)

// earliest is the earliest transaction, the smallest id among equals.
func earliest(ts ...*rTxn) *rTxn {
	best := ts[0]
	for _, t := range ts[1:] {
		if t.at.Before(best.at) || t.at.Equal(best.at) && t.id < best.id {
			best = t
		}
	}
	return best
}

// paying is, of the successful charges of an intent, the one that pays it:
// same amount and currency, then the earliest, then the smallest id.
func (r *ref) paying(in *rIntent, succ []*rTxn) *rTxn {
	var agree []*rTxn
	for _, t := range succ {
		if t.cur == in.cur && r.net(t) == in.minor {
			agree = append(agree, t)
		}
	}
	if len(agree) > 0 {
		return earliest(agree...)
	}
	return earliest(succ...)
}

func ids(ts []*rTxn) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.id
	}
	slices.Sort(out)
	return out
}

// add records a finding about intent in; shown names the transaction whose
// counterparty is shown (nil: the intent's customer, masked).
func (r *ref) add(kind ledger.Kind, sev ledger.Severity, in *rIntent, evidence []string, expected, actual, atRisk money.Amount,
	shown *rTxn, at time.Time) *ledger.Finding {
	cp := ""
	if shown != nil {
		cp = shown.cp
	}
	if cp == "" {
		cp = ledger.MaskCustomer(in.customer)
	}
	kindOf := ledger.IntentCharge
	switch {
	case in.refundOf != "":
		kindOf = ledger.IntentRefund
	case in.expected:
		kindOf = ledger.IntentExpected
	}
	slices.Sort(evidence)
	var hand []*rTxn
	for _, id := range evidence {
		if t, ok := r.txns[id]; ok {
			hand = append(hand, t)
		}
	}
	r.findings = append(r.findings, ledger.Finding{ID: ledger.FindingID(kind, in.key, evidence), Kind: kind, Severity: sev,
		Provider: r.opt.Provider, IntentKey: in.key, IntentKind: kindOf, ProviderTxnIDs: evidence, Expected: expected,
		Actual: actual, AtRisk: atRisk, Counterparty: cp, Detail: linkMark(hand), OccurredAt: at.UTC(), Status: ledger.FindingOpen})
	return &r.findings[len(r.findings)-1]
}

// linkMark is what a finding's detail says of how its evidence was linked:
// by hand, by the fuzzy rule, or neither.
func linkMark(ts []*rTxn) string {
	for _, t := range ts {
		switch t.method {
		case matcher.Manual:
			return "linked by hand"
		case matcher.Fuzzy:
			return "fuzzy"
		}
	}
	return ""
}

func (r *ref) unreadableIntent(in *rIntent) {
	if in.owned {
		r.bad = append(r.bad, rUnreadable{key: in.key, cur: in.cur, at: in.created})
	}
}

// sumNet adds the net amounts of ts in currency cur, false beyond the range.
func (r *ref) sumNet(ts []*rTxn, cur string, gross bool) (int64, bool) {
	s := new(big.Int)
	for _, t := range ts {
		if t.cur == cur {
			v := t.minor
			if !gross {
				v = r.net(t)
			}
			s.Add(s, big.NewInt(v))
		}
	}
	if s.Cmp(bigMaxSum) > 0 {
		return 0, false
	}
	return s.Int64(), true
}

// judgeCharge judges a charge intent; it reports whether it raised a
// missing_at_provider that may carry a suggestion (no charge pending).
func (r *ref) judgeCharge(in *rIntent) bool {
	if in.expected {
		return r.judgeExpected(in)
	}
	linked := r.chain(in.key)
	var succ, pend, failed, reversed, refunded []*rTxn
	charges := 0
	for _, t := range linked {
		if r.overflow[t.id] {
			r.unreadableIntent(in)
			return false
		}
		if t.typ != ledger.TxnCharge {
			continue
		}
		charges++
		switch {
		case t.status == ledger.TxnPending:
			pend = append(pend, t)
		case t.status == ledger.TxnFailed:
			failed = append(failed, t)
		case r.successful(t):
			succ = append(succ, t)
		case bigOf(r.reversedIn, t.id).Cmp(big.NewInt(t.minor)) < 0:
			refunded = append(refunded, t) // paid, then refunded in full
		default:
			reversed = append(reversed, t)
		}
	}
	// Every charge but the one paying the intent duplicates it.
	if paid := append(slices.Clone(succ), refunded...); len(paid) >= 2 {
		var p *rTxn
		if len(succ) > 0 {
			p = r.paying(in, succ)
		} else {
			p = earliest(refunded...)
		}
		for _, t := range paid {
			if t != p {
				r.dupCharge[t.id] = true
			}
		}
	}
	state := in.state
	if state == ledger.StateUnknown && len(succ) > 0 {
		if in.owned || in.created.Before(r.lo) {
			r.res.settlements = append(r.res.settlements, matcher.Settlement{IntentKey: in.key, TxnID: r.paying(in, succ).id})
		}
		state = ledger.StateSucceeded
	}
	r.disputes(in, linked)
	if !in.owned || r.opt.OnlyDisputes {
		return false
	}
	late := !r.opt.Now.Before(in.due)
	expected := refAmount(in.minor, in.cur)
	zero := refAmount(0, in.cur)
	switch {
	case len(succ) >= 2 && state != ledger.StatePending && state != ledger.StateFailed:
		p := r.paying(in, succ)
		total, ok := r.sumNet(succ, p.cur, false)
		if !ok {
			r.unreadableIntent(in)
			return false
		}
		r.add(ledger.KindDuplicateCharge, ledger.SeverityHigh, in, ids(succ), expected, refAmount(total, p.cur),
			refAmount(total-r.net(p), p.cur), p, in.created)
	case state == ledger.StateSucceeded && (len(succ) == 1 || len(refunded) > 0):
		var t *rTxn
		if len(succ) == 1 {
			t = succ[0]
		} else {
			t = earliest(refunded...)
		}
		charged := t.minor - bigOf(r.reversedIn, t.id).Int64()
		switch {
		case t.cur != in.cur:
			r.add(ledger.KindCurrencyMismatch, ledger.SeverityHigh, in, []string{t.id}, expected, refAmount(r.net(t), t.cur),
				expected, t, in.created)
		case charged > in.minor:
			r.add(ledger.KindAmountMismatch, ledger.SeverityHigh, in, []string{t.id}, expected, refAmount(charged, t.cur),
				refAmount(charged-in.minor, in.cur), t, in.created)
		case charged < in.minor:
			r.add(ledger.KindAmountMismatch, ledger.SeverityMedium, in, []string{t.id}, expected, refAmount(charged, t.cur),
				refAmount(in.minor-charged, in.cur), t, in.created)
		}
	case state == ledger.StateSucceeded && !late:
	case state == ledger.StateSucceeded && len(failed)+len(reversed) > 0:
		no := append(slices.Clone(failed), reversed...)
		r.add(ledger.KindStatusMismatch, ledger.SeverityMedium, in, ids(no), expected, zero, expected, earliest(no...), in.created)
	case state == ledger.StateSucceeded && !r.opt.NoMissing:
		var shown *rTxn
		if len(pend) > 0 {
			shown = earliest(pend...)
		}
		r.add(ledger.KindMissingAtProvider, ledger.SeverityMedium, in, ids(pend), expected, zero, expected, shown, in.created)
		return len(pend) == 0
	case (state == ledger.StatePending || state == ledger.StateFailed) && len(succ) > 0:
		p := r.paying(in, succ)
		total, ok := r.sumNet(succ, p.cur, false)
		if !ok {
			r.unreadableIntent(in)
			return false
		}
		r.add(ledger.KindStatusMismatch, ledger.SeverityHigh, in, ids(succ), expected, refAmount(total, p.cur),
			refAmount(total, p.cur), p, in.created)
	case (state == ledger.StateProcessing || state == ledger.StateUnknown || state == ledger.StatePending) && charges == 0 && late:
		r.add(ledger.KindStuckIntent, ledger.SeverityLow, in, nil, expected, zero, expected, nil, in.created)
	}
	return false
}

// disputes raises a disputed_charge per disputed charge of intent in whose
// first dispute lies in the window: medium while the funds are in the
// balance, high once withdrawn, nothing once reinstated in full.
func (r *ref) disputes(in *rIntent, linked []*rTxn) {
	byCharge := map[string][]*rTxn{}
	for _, t := range linked {
		if (t.typ == ledger.TxnDispute || t.typ == ledger.TxnDisputeReversal) && t.linkedID != "" {
			byCharge[t.linkedID] = append(byCharge[t.linkedID], t)
		}
	}
	for _, charge := range slices.Sorted(func(yield func(string) bool) {
		for k := range byCharge {
			if !yield(k) {
				return
			}
		}
	}) {
		var live, reversals []*rTxn
		for _, t := range byCharge[charge] {
			switch {
			case t.typ == ledger.TxnDisputeReversal:
				reversals = append(reversals, t)
			case t.status != ledger.TxnFailed: // a failed one is an inquiry closed without a chargeback
				live = append(live, t)
			}
		}
		id := ledger.FindingID(ledger.KindDisputedCharge, in.key, []string{charge})
		if len(live) == 0 {
			if slices.ContainsFunc(reversals, func(t *rTxn) bool { return t.status == ledger.TxnSucceeded && t.owned }) {
				r.res.disputesWon = append(r.res.disputesWon, id)
			}
			continue
		}
		first := earliest(live...)
		if !first.owned {
			continue
		}
		var disputed, withdrawn, returned big.Int
		for _, t := range live {
			if t.cur == first.cur {
				disputed.Add(&disputed, big.NewInt(t.minor))
				if t.status == ledger.TxnSucceeded {
					withdrawn.Add(&withdrawn, big.NewInt(t.minor))
				}
			}
		}
		for _, t := range reversals {
			if t.status == ledger.TxnSucceeded && t.cur == first.cur {
				returned.Add(&returned, big.NewInt(t.minor))
			}
		}
		if disputed.Cmp(bigMaxSum) > 0 || returned.Cmp(bigMaxSum) > 0 {
			r.bad = append(r.bad, rUnreadable{id: first.id, cur: first.cur, at: first.at})
			continue
		}
		if withdrawn.Sign() > 0 && returned.Cmp(&withdrawn) >= 0 {
			continue // won
		}
		sev := ledger.SeverityHigh
		if withdrawn.Sign() == 0 {
			sev = ledger.SeverityMedium
		}
		evidence := append([]string{charge}, ids(append(slices.Clone(live), reversals...))...)
		f := r.add(ledger.KindDisputedCharge, sev, in, evidence, refAmount(in.minor, in.cur), refAmount(disputed.Int64(), first.cur),
			refAmount(max(disputed.Int64()-returned.Int64(), 0), first.cur), first, first.at)
		f.ID, f.Detail = id, linkMark(append(slices.Clone(live), reversals...))
	}
}

// judgeRefundIntent judges a refund intent against the refunds linked to
// it, as a charge intent is judged against its charges.
func (r *ref) judgeRefundIntent(in *rIntent) {
	var succ, pend []*rTxn
	seen := 0
	for _, t := range r.chain(in.key) {
		if !r.refundLike(t) {
			continue
		}
		seen++
		switch t.status {
		case ledger.TxnSucceeded:
			succ = append(succ, t)
		case ledger.TxnPending:
			pend = append(pend, t)
		}
	}
	state := in.state
	if state == ledger.StateUnknown && len(succ) > 0 {
		if in.owned || in.created.Before(r.lo) {
			r.res.settlements = append(r.res.settlements, matcher.Settlement{IntentKey: in.key, TxnID: earliest(succ...).id})
		}
		state = ledger.StateSucceeded
	}
	if !in.owned || r.opt.OnlyDisputes {
		return
	}
	late := !r.opt.Now.Before(in.due)
	expected, zero := refAmount(in.minor, in.cur), refAmount(0, in.cur)
	switch {
	case len(succ) >= 2 && state != ledger.StateFailed:
		p := earliest(succ...)
		total, ok := r.sumNet(succ, p.cur, true)
		if !ok {
			r.unreadableIntent(in)
			return
		}
		r.add(ledger.KindDuplicateRefund, ledger.SeverityHigh, in, ids(succ), expected, refAmount(total, p.cur),
			refAmount(total-p.minor, p.cur), p, in.created)
	case state == ledger.StateSucceeded && len(succ) == 1:
		t := succ[0]
		switch {
		case t.cur != in.cur:
			r.add(ledger.KindCurrencyMismatch, ledger.SeverityHigh, in, []string{t.id}, expected, refAmount(t.minor, t.cur), expected, t, in.created)
		case t.minor > in.minor:
			r.add(ledger.KindAmountMismatch, ledger.SeverityHigh, in, []string{t.id}, expected, refAmount(t.minor, t.cur),
				refAmount(t.minor-in.minor, in.cur), t, in.created)
		case t.minor < in.minor:
			r.add(ledger.KindAmountMismatch, ledger.SeverityMedium, in, []string{t.id}, expected, refAmount(t.minor, t.cur),
				refAmount(in.minor-t.minor, in.cur), t, in.created)
		}
	case state == ledger.StateSucceeded:
		if late && !r.opt.NoMissing {
			var shown *rTxn
			if len(pend) > 0 {
				shown = earliest(pend...)
			}
			r.add(ledger.KindMissingAtProvider, ledger.SeverityMedium, in, ids(pend), expected, zero, expected, shown, in.created)
		}
	case (state == ledger.StatePending || state == ledger.StateFailed) && len(succ) > 0:
		p := earliest(succ...)
		total, ok := r.sumNet(succ, p.cur, true)
		if !ok {
			r.unreadableIntent(in)
			return
		}
		r.add(ledger.KindStatusMismatch, ledger.SeverityHigh, in, ids(succ), expected, refAmount(total, p.cur),
			refAmount(total, p.cur), p, in.created)
	case state != ledger.StateFailed && seen == 0 && late:
		r.add(ledger.KindStuckIntent, ledger.SeverityLow, in, nil, expected, zero, expected, nil, in.created)
	}
}

// unknownCharges raises unknown_charge for each successful charge of the
// window that links to no intent, net of its refunds; it returns the
// indexes of those findings.
func (r *ref) unknownCharges() []int {
	var out []int
	for _, id := range r.tids {
		t := r.txns[id]
		if t.intent != "" || !t.owned || t.typ != ledger.TxnCharge || t.status != ledger.TxnSucceeded {
			continue
		}
		if r.overflow[id] {
			r.bad = append(r.bad, rUnreadable{id: id, cur: t.cur, at: t.at})
			continue
		}
		if !r.successful(t) {
			continue
		}
		a := refAmount(r.net(t), t.cur)
		r.findings = append(r.findings, ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{id}),
			Kind: ledger.KindUnknownCharge, Severity: ledger.SeverityMedium, Provider: r.opt.Provider, ProviderTxnIDs: []string{id},
			Expected: refAmount(0, t.cur), Actual: a, AtRisk: a, Counterparty: t.cp, OccurredAt: t.at.UTC(), Status: ledger.FindingOpen})
		out = append(out, len(r.findings)-1)
	}
	return out
}

// unrecordedRefunds raises unrecorded_refund for each successful refund of
// the window that reaches no refund intent, unless it refunds a duplicate
// charge, refunds a charge that links to no intent, or was given back by a
// refund failure of its charge.
func (r *ref) unrecordedRefunds() {
	var refunds []*rTxn
	for _, id := range r.tids {
		if t := r.txns[id]; r.refundLike(t) {
			refunds = append(refunds, t)
		}
	}
	slices.SortFunc(refunds, func(a, b *rTxn) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for _, t := range refunds {
		if !t.owned || t.status != ledger.TxnSucceeded || t.intent != "" && r.intents[t.intent].refundOf != "" {
			continue
		}
		if t.charge != "" && (r.dupCharge[t.charge] || t.intent == "" || r.overflow[t.charge]) {
			continue
		}
		if t.charge != "" && r.failedLeft[t.charge] >= t.minor {
			r.failedLeft[t.charge] -= t.minor
			continue
		}
		a := refAmount(t.minor, t.cur)
		var kind ledger.IntentKind
		if t.intent != "" {
			kind = ledger.IntentCharge
		}
		r.findings = append(r.findings, ledger.Finding{ID: ledger.FindingID(ledger.KindUnrecordedRefund, t.intent, []string{t.id}),
			Kind: ledger.KindUnrecordedRefund, Severity: ledger.SeverityMedium, Provider: r.opt.Provider, IntentKey: t.intent,
			IntentKind: kind, ProviderTxnIDs: []string{t.id}, Expected: refAmount(0, t.cur), Actual: a, AtRisk: a,
			Counterparty: t.cp, OccurredAt: t.at.UTC(), Status: ledger.FindingOpen})
	}
}

// judgeExpected judges an expected payment by the sum of what was paid
// (findings.md): the successful payments in its currency, net, in time
// order; paid in full within the tolerance: nothing; a later payment of the
// full amount once paid in full: duplicate_charge; more: overpaid; less:
// partially_paid (not due) or underpaid (due); nothing, due:
// missing_at_provider, medium when the books count it paid. Payments in
// another currency: currency_mismatch. It reports whether it raised a
// missing_at_provider that may carry a suggestion.
func (r *ref) judgeExpected(in *rIntent) bool {
	linked := r.chain(in.key)
	var pays, others, pend []*rTxn
	for _, t := range linked {
		if r.overflow[t.id] {
			r.unreadableIntent(in)
			return false
		}
		if t.typ != ledger.TxnCharge {
			continue
		}
		switch {
		case t.status == ledger.TxnPending:
			pend = append(pend, t)
		case !r.successful(t):
		case t.cur == in.cur:
			pays = append(pays, t)
		default:
			others = append(others, t)
		}
	}
	slices.SortFunc(pays, func(a, b *rTxn) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	sum := new(big.Int)
	full := -1
	for k, t := range pays {
		sum.Add(sum, big.NewInt(r.net(t)))
		if full < 0 && sum.Cmp(big.NewInt(in.minor-in.tol)) >= 0 {
			full = k
		}
	}
	if sum.Cmp(bigMaxSum) > 0 {
		r.unreadableIntent(in)
		return false
	}
	var dups []*rTxn
	if full >= 0 {
		for _, t := range pays[full+1:] {
			if d := r.net(t) - in.minor; d <= in.tol && d >= -in.tol {
				dups = append(dups, t)
				r.dupCharge[t.id] = true
			}
		}
	}
	r.disputes(in, linked)
	if !in.owned || r.opt.OnlyDisputes {
		return false
	}
	late := !r.opt.Now.Before(in.due)
	expected := refAmount(in.minor, in.cur)
	s := sum.Int64()
	last := func() *rTxn {
		if len(pays) == 0 {
			return nil
		}
		return pays[len(pays)-1]
	}
	bySum := func(kind ledger.Kind, sev ledger.Severity, atRisk int64) {
		f := r.add(kind, sev, in, ids(pays), expected, refAmount(s, in.cur), refAmount(atRisk, in.cur), last(), in.created)
		f.ID = ledger.FindingID(kind, in.key, nil)
	}
	switch {
	case len(others) > 0:
		t := earliest(others...)
		r.add(ledger.KindCurrencyMismatch, ledger.SeverityHigh, in, ids(others), expected, refAmount(r.net(t), t.cur), expected, t, in.created)
	case s > in.minor+in.tol && len(dups) > 0:
		r.add(ledger.KindDuplicateCharge, ledger.SeverityHigh, in, ids(pays), expected, refAmount(s, in.cur),
			refAmount(s-in.minor, in.cur), earliest(dups...), in.created)
	case s > in.minor+in.tol:
		bySum(ledger.KindOverpaid, ledger.SeverityMedium, s-in.minor)
	case s >= in.minor-in.tol:
	case s > 0 && !late:
		bySum(ledger.KindPartiallyPaid, ledger.SeverityLow, 0)
	case s > 0:
		bySum(ledger.KindUnderpaid, ledger.SeverityMedium, in.minor-s)
	case late && !r.opt.NoMissing:
		sev := ledger.SeverityLow
		if in.state == ledger.StateSucceeded {
			sev = ledger.SeverityMedium
		}
		var shown *rTxn
		if len(pend) > 0 {
			shown = earliest(pend...)
		}
		r.add(ledger.KindMissingAtProvider, sev, in, ids(pend), expected, refAmount(0, in.cur), expected, shown, in.created)
		return len(pend) == 0
	}
	return false
}
