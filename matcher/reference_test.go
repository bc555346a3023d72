package matcher_test

// A reference matcher: the rules of docs/design.md, docs/findings.md and the
// matcher's package documentation written out plainly, with maps, slices and
// loops, to check the fast matcher against (reference_diff_test.go). It
// favours being obviously right over being fast: everything is looked up by
// key in maps, candidates are found by scanning every intent, sums are made
// in math/big and compared with the matcher's range afterwards.

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/money"
)

// refMaxMinor is the largest amount, in minor units, the matcher takes;
// refMaxSum the largest sum of amounts it evaluates.
const (
	refMaxMinor = ledger.CeilingMaxMinor
	refMaxSum   = 10 * ledger.CeilingMaxMinor
)

// A matchCase is one matching: its options, intents, manual links and
// provider transactions, given to both matchers in this order.
type matchCase struct {
	opt     matcher.Options
	intents []ledger.Intent
	manual  [][2]string // transaction id, intent key
	txns    []ledger.ProviderTxn
}

// refResult is what the reference decides, in the fast matcher's terms.
type refResult struct {
	findings    []ledger.Finding
	settlements []matcher.Settlement
	disputesWon []string
	links       []matcher.Link
	unlinked    []string
	summary     matcher.Summary
	fuzzy       int
}

type rIntent struct {
	key, cur, customer string
	ref                string // the reference in the form it is compared in
	rawRef             string
	minor              int64
	state              ledger.State
	created, due       time.Time
	owned              bool
	refundOf           string // charge intent key; "" for a charge intent
	prefs              []string
	// expected marks an expected payment, dueSet a due date of its own,
	// tol its tolerance in minor units.
	expected, dueSet bool
	tol              int64
}

type rTxn struct {
	id, cur, ref, pref, cp, linkedID string
	typ                              ledger.TxnType
	status                           ledger.TxnStatus
	minor                            int64 // absolute
	at                               time.Time
	owned                            bool
	intent                           string // "" when unlinked
	method                           matcher.Method
	charge                           string // for a refund: the charge it names, when given
}

type rUnreadable struct {
	key, id, cur string
	at           time.Time
}

type ref struct {
	sc       matchCase
	opt      matcher.Options
	lo, hi   time.Time
	intents  map[string]*rIntent
	ikeys    []string // sorted
	txns     map[string]*rTxn
	tids     []string // sorted
	manual   map[string]string
	bad      []rUnreadable
	findings []ledger.Finding
	res      refResult

	// Per charge id: what its children add up to.
	refundedIn map[string]*big.Int // successful refunds and reversals in its currency
	failedIn   map[string]*big.Int // successful refund failures in its currency
	reversedIn map[string]*big.Int // successful reversals that are not refunds
	overflow   map[string]bool     // a sum of its children is beyond the range
	failedLeft map[string]int64    // refund failures not yet matched to a refund
	dupCharge  map[string]bool     // charges that duplicate the one paying their intent
}

func refMatch(sc matchCase) refResult {
	r := &ref{sc: sc, opt: sc.opt, intents: map[string]*rIntent{}, txns: map[string]*rTxn{}, manual: map[string]string{},
		refundedIn: map[string]*big.Int{}, failedIn: map[string]*big.Int{}, reversedIn: map[string]*big.Int{},
		overflow: map[string]bool{}, failedLeft: map[string]int64{}, dupCharge: map[string]bool{}}
	if r.opt.Tolerance == 0 {
		r.opt.Tolerance = matcher.DefaultTolerance
	}
	r.lo, r.hi = r.opt.From.Add(-r.opt.Tolerance), r.opt.To.Add(r.opt.Tolerance)
	r.read()
	r.linkAll()
	r.sumChildren()
	if r.opt.Fuzzy {
		r.fuzzy()
	}
	r.attachChildren()
	r.distributeRefunds()
	suggestIntents := []int{}
	for _, k := range r.ikeys {
		in := r.intents[k]
		if in.refundOf != "" {
			r.judgeRefundIntent(in)
		} else if r.judgeCharge(in) {
			suggestIntents = append(suggestIntents, len(r.findings)-1)
		}
	}
	if !r.opt.OnlyDisputes {
		suggestTxns := r.unknownCharges()
		r.unrecordedRefunds()
		r.suggest(suggestIntents, suggestTxns)
	}
	for _, u := range r.bad {
		var ids []string
		if u.id != "" {
			ids = []string{u.id}
		}
		zero := refAmount(0, u.cur)
		r.findings = append(r.findings, ledger.Finding{ID: ledger.FindingID(ledger.KindUnreadableRecord, u.key, ids),
			Kind: ledger.KindUnreadableRecord, Severity: ledger.SeverityHigh, Provider: r.opt.Provider, IntentKey: u.key,
			ProviderTxnIDs: ids, Expected: zero, Actual: zero, AtRisk: zero, OccurredAt: u.at.UTC(), Status: ledger.FindingOpen})
	}
	for _, id := range r.tids {
		t := r.txns[id]
		if t.intent == "" {
			r.res.unlinked = append(r.res.unlinked, id)
			continue
		}
		r.res.links = append(r.res.links, matcher.Link{TxnID: id, IntentKey: t.intent, Method: t.method})
		if t.owned {
			r.res.summary.Matched++
		}
	}
	for _, in := range r.intents {
		if in.owned {
			r.res.summary.Intents++
		}
	}
	for _, t := range r.txns {
		if t.owned {
			r.res.summary.Transactions++
		}
	}
	r.res.findings = r.findings
	r.res.summary.Findings = len(r.findings)
	slices.SortFunc(r.res.settlements, func(a, b matcher.Settlement) int { return cmp.Compare(a.IntentKey, b.IntentKey) })
	slices.Sort(r.res.disputesWon)
	r.res.disputesWon = slices.Compact(r.res.disputesWon)
	return r.res
}

func (r *ref) inWindow(t time.Time) bool { return !t.Before(r.opt.From) && t.Before(r.opt.To) }

// minorOf is an amount in minor units, or false when the matcher does not
// take it (too precise, beyond int64 or beyond the matcher's range).
func minorOf(a money.Amount) (int64, bool) {
	m, err := a.Minor()
	if err != nil || m > refMaxMinor || m < -refMaxMinor {
		return 0, false
	}
	return m, true
}

func refAmount(minor int64, cur string) money.Amount {
	a, err := money.FromMinor(minor, cur)
	if err != nil {
		panic(err)
	}
	return a
}

// normal is the normal form of a reference, written from its description:
// letters and digits only, upper-cased, full-width forms read as ASCII.
func normal(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= '！' && c <= '～' {
			c -= '！' - '!'
		}
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			b.WriteRune(unicode.ToUpper(c))
		}
	}
	return b.String()
}

// comparable is an echoed reference as it is compared with intents'.
func (r *ref) comparable(s string) string {
	if r.opt.ExactReferences {
		return strings.ToUpper(strings.TrimSpace(s))
	}
	return normal(s)
}

func (r *ref) read() {
	for _, in := range r.sc.intents {
		minor, ok := minorOf(in.Amount)
		if !ok {
			if r.inWindow(in.CreatedAt) {
				r.bad = append(r.bad, rUnreadable{key: in.Key, cur: in.Amount.Currency, at: in.CreatedAt})
			}
			continue
		}
		x := &rIntent{key: in.Key, cur: in.Amount.Currency, customer: in.Customer, rawRef: in.Reference,
			minor: minor, state: in.State, created: in.CreatedAt, owned: r.inWindow(in.CreatedAt), refundOf: in.RefundOf,
			prefs: in.ProviderRefs}
		if r.opt.ExactReferences {
			x.ref = strings.ToUpper(in.Reference)
		} else {
			x.ref = normal(in.Reference)
		}
		// The evidence is due after the grace, from the last change (or,
		// for a processing intent, the end of its lease).
		base := in.UpdatedAt
		if in.State == ledger.StateProcessing && !in.LeaseExpiresAt.IsZero() {
			base = in.LeaseExpiresAt
		}
		x.due = base.Add(r.opt.Grace)
		if in.Kind == ledger.IntentExpected {
			x.expected = true
			switch {
			case !in.DueAt.IsZero():
				x.due, x.dueSet = in.DueAt, true
			case in.State != ledger.StateSucceeded:
				x.due = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC) // never: an open invoice
			}
			if !in.Tolerance.IsZero() {
				tol, ok := minorOf(in.Tolerance)
				if !ok {
					if r.inWindow(in.CreatedAt) {
						r.bad = append(r.bad, rUnreadable{key: in.Key, cur: in.Amount.Currency, at: in.CreatedAt})
					}
					continue
				}
				x.tol = tol
			}
		}
		r.intents[x.key] = x
		r.ikeys = append(r.ikeys, x.key)
	}
	slices.Sort(r.ikeys)
	for _, l := range r.sc.manual {
		if _, ok := r.intents[l[1]]; ok {
			r.manual[l[0]] = l[1]
		}
	}
	for _, t := range r.sc.txns {
		minor, ok := minorOf(t.Amount)
		if !ok {
			if r.inWindow(t.OccurredAt) {
				r.bad = append(r.bad, rUnreadable{id: t.ID, cur: t.Amount.Currency, at: t.OccurredAt})
			}
			continue
		}
		if minor < 0 {
			minor = -minor
		}
		r.txns[t.ID] = &rTxn{id: t.ID, cur: t.Amount.Currency, ref: t.Reference, pref: t.ProviderRef, cp: t.Counterparty,
			linkedID: t.LinkedID, typ: t.Type, status: t.Status, minor: minor, at: t.OccurredAt, owned: r.inWindow(t.OccurredAt)}
		r.tids = append(r.tids, t.ID)
	}
	slices.Sort(r.tids)
}

// refundLike: refunds, and reversals when the provider's reversals return
// money.
func (r *ref) refundLike(t *rTxn) bool {
	return t.typ == ledger.TxnRefund || t.typ == ledger.TxnReversal && r.opt.ReversalsAreRefunds
}

func linkableType(typ ledger.TxnType) bool {
	return typ != ledger.TxnPayout && typ != ledger.TxnAdjustment && typ != ledger.TxnOther
}

// isChild: a transaction that names the one it belongs to.
func isChild(t *rTxn) bool {
	switch t.typ {
	case ledger.TxnRefund, ledger.TxnReversal, ledger.TxnFee, ledger.TxnDispute, ledger.TxnDisputeReversal, ledger.TxnRefundFailure:
		return t.linkedID != ""
	}
	return false
}

// pick chooses among candidate intents: the one whose amount and currency
// agree with the transaction, then the one created nearest to it, then the
// smallest key.
func (r *ref) pick(cands []string, t *rTxn) string {
	best := ""
	for _, k := range cands {
		if best == "" {
			best = k
			continue
		}
		a, b := r.intents[best], r.intents[k]
		am, bm := a.minor == t.minor && a.cur == t.cur, b.minor == t.minor && b.cur == t.cur
		ad, bd := a.created.Sub(t.at).Abs(), b.created.Sub(t.at).Abs()
		switch {
		case am != bm:
			if bm {
				best = k
			}
		case ad != bd:
			if bd < ad {
				best = k
			}
		case k < best:
			best = k
		}
	}
	return best
}

// candidates lists the intents (refund intents or charge intents) that
// satisfy match.
func (r *ref) candidates(refund bool, match func(*rIntent) bool) []string {
	var out []string
	for _, k := range r.ikeys {
		in := r.intents[k]
		if (in.refundOf != "") == refund && match(in) {
			out = append(out, k)
		}
	}
	return out
}

func (r *ref) linkAll() {
	anyRefundIntent := slices.ContainsFunc(r.ikeys, func(k string) bool { return r.intents[k].refundOf != "" })
	for _, id := range r.tids {
		t := r.txns[id]
		if r.refundLike(t) && anyRefundIntent {
			t.intent, t.method = r.linkRefund(t)
		}
		if t.intent == "" && linkableType(t.typ) {
			t.intent, t.method = r.linkCharge(t)
		}
	}
}

// linkRefund: a provider refund reaches a refund intent by the refund id an
// attempt of it recorded, then by the refund intent's reference or key
// echoed in the refund.
func (r *ref) linkRefund(t *rTxn) (string, matcher.Method) {
	if c := r.candidates(true, func(in *rIntent) bool { return slices.Contains(in.prefs, t.id) }); len(c) > 0 {
		return r.pick(c, t), matcher.ByProviderRef
	}
	if t.ref == "" {
		return "", matcher.Unlinked
	}
	want := r.comparable(t.ref)
	if c := r.candidates(true, func(in *rIntent) bool { return want != "" && in.ref == want }); len(c) > 0 {
		return r.pick(c, t), matcher.ByReference
	}
	if c := r.candidates(true, func(in *rIntent) bool { return in.key == strings.TrimSpace(t.ref) }); len(c) > 0 {
		return c[0], matcher.ByReference
	}
	return "", matcher.Unlinked
}

// linkCharge applies the linking order among charge intents: a manual link,
// a provider reference (the transaction's, then its id), the echoed
// reference, the intent's key.
func (r *ref) linkCharge(t *rTxn) (string, matcher.Method) {
	if k, ok := r.manual[t.id]; ok {
		return k, matcher.Manual
	}
	for _, p := range []string{t.pref, t.id} {
		if p == "" {
			continue
		}
		if c := r.candidates(false, func(in *rIntent) bool { return slices.Contains(in.prefs, p) }); len(c) > 0 {
			return r.pick(c, t), matcher.ByProviderRef
		}
	}
	if t.ref == "" {
		return "", matcher.Unlinked
	}
	want := r.comparable(t.ref)
	if c := r.candidates(false, func(in *rIntent) bool { return want != "" && in.ref == want }); len(c) > 0 {
		return r.pick(c, t), matcher.ByReference
	}
	if c := r.candidates(false, func(in *rIntent) bool { return in.key == strings.TrimSpace(t.ref) }); len(c) > 0 {
		return c[0], matcher.ByReference
	}
	return "", matcher.Unlinked
}

func bigAdd(m map[string]*big.Int, k string, v int64) {
	if m[k] == nil {
		m[k] = new(big.Int)
	}
	m[k].Add(m[k], big.NewInt(v))
}

func bigOf(m map[string]*big.Int, k string) *big.Int {
	if m[k] == nil {
		return new(big.Int)
	}
	return m[k]
}

var bigMaxSum = big.NewInt(refMaxSum)

// sumChildren sums, for each charge, what its refunds, reversals and
// refund failures net against it.
func (r *ref) sumChildren() {
	for _, id := range r.tids {
		k := r.txns[id]
		if !isChild(k) {
			continue
		}
		c, ok := r.txns[k.linkedID]
		if !ok || c.typ != ledger.TxnCharge {
			continue
		}
		if r.refundLike(k) {
			k.charge = c.id
		}
		if k.status == ledger.TxnSucceeded && k.cur == c.cur {
			switch {
			case r.refundLike(k):
				bigAdd(r.refundedIn, c.id, k.minor)
			case k.typ == ledger.TxnReversal:
				bigAdd(r.refundedIn, c.id, k.minor)
				bigAdd(r.reversedIn, c.id, k.minor)
			case k.typ == ledger.TxnRefundFailure:
				bigAdd(r.failedIn, c.id, k.minor)
			}
		}
	}
	for id := range r.refundedIn {
		if bigOf(r.refundedIn, id).Cmp(bigMaxSum) > 0 || bigOf(r.failedIn, id).Cmp(bigMaxSum) > 0 {
			r.overflow[id] = true
		}
	}
	for id, f := range r.failedIn {
		if f.Cmp(bigMaxSum) > 0 {
			r.overflow[id] = true
			continue
		}
		r.failedLeft[id] = f.Int64()
	}
}

// attachChildren gives each refund, reversal, fee or dispute that names a
// charge the charge's intent, however the charge linked (a refund that
// reached a refund intent stays there).
func (r *ref) attachChildren() {
	for _, id := range r.tids {
		k := r.txns[id]
		if !isChild(k) {
			continue
		}
		c, ok := r.txns[k.linkedID]
		if !ok || c.typ != ledger.TxnCharge {
			continue
		}
		if c.intent != "" && !(r.refundLike(k) && k.intent != "" && r.intents[k.intent].refundOf != "") {
			k.intent, k.method = c.intent, matcher.ByCharge
		}
	}
}

// net is a charge's amount net of its refunds and reversals (a refund
// failure gives a refund back, never more than was refunded).
func (r *ref) net(t *rTxn) int64 {
	if r.overflow[t.id] {
		return 0 // never asked: such a charge is unreadable
	}
	back := new(big.Int).Sub(bigOf(r.refundedIn, t.id), bigOf(r.failedIn, t.id))
	if back.Sign() < 0 {
		back.SetInt64(0)
	}
	return t.minor - back.Int64()
}

func (r *ref) successful(t *rTxn) bool {
	return t.typ == ledger.TxnCharge && t.status == ledger.TxnSucceeded && !r.overflow[t.id] && r.net(t) > 0
}

// chain lists the transactions linked to intent key, by id.
func (r *ref) chain(key string) []*rTxn {
	var out []*rTxn
	for _, id := range r.tids {
		if t := r.txns[id]; t.intent == key {
			out = append(out, t)
		}
	}
	return out
}

// distributeRefunds gives each refund that reached a charge intent to one of
// that intent's refund intents no refund has reached, taking the refunds in
// time order: the one whose amount agrees, then the one created nearest.
func (r *ref) distributeRefunds() {
	var refunds []*rTxn
	claimed := map[string]bool{}
	for _, id := range r.tids {
		t := r.txns[id]
		if !r.refundLike(t) {
			continue
		}
		refunds = append(refunds, t)
		if t.intent != "" && r.intents[t.intent].refundOf != "" {
			claimed[t.intent] = true
		}
	}
	slices.SortFunc(refunds, func(a, b *rTxn) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for _, t := range refunds {
		if t.intent == "" || r.intents[t.intent].refundOf != "" {
			continue
		}
		charge := t.intent
		free := r.candidates(true, func(in *rIntent) bool { return in.refundOf == charge && !claimed[in.key] })
		if len(free) > 0 {
			t.intent, t.method = r.pick(free, t), matcher.ByCharge
			claimed[t.intent] = true
		}
	}
}

// fuzzy links each unlinked successful charge with a counterparty to the
// one charge intent without charges of the same amount, currency and masked
// customer within the tolerance, when that intent has no other such charge.
func (r *ref) fuzzy() {
	type pair struct{ txn, intent string }
	var orphans []*rTxn
	for _, id := range r.tids {
		if t := r.txns[id]; t.intent == "" && t.cp != "" && r.successful(t) {
			orphans = append(orphans, t)
		}
	}
	fits := func(in *rIntent, t *rTxn) bool {
		return in.refundOf == "" && in.customer != "" && in.minor == t.minor && in.cur == t.cur &&
			ledger.MaskCustomer(in.customer) == t.cp && in.created.Sub(t.at).Abs() <= r.opt.Tolerance &&
			!slices.ContainsFunc(r.chain(in.key), func(c *rTxn) bool { return c.typ == ledger.TxnCharge })
	}
	var pairs []pair
	claims := map[string]int{}
	for _, t := range orphans {
		var c []string
		for _, k := range r.ikeys {
			if fits(r.intents[k], t) {
				c = append(c, k)
			}
		}
		for _, k := range c {
			claims[k]++ // k is a candidate of this charge
		}
		if len(c) == 1 {
			pairs = append(pairs, pair{t.id, c[0]})
		}
	}
	for _, p := range pairs {
		if claims[p.intent] == 1 {
			r.txns[p.txn].intent, r.txns[p.txn].method = p.intent, matcher.Fuzzy
			r.res.fuzzy++
		}
	}
}

// describe renders a matchCase for a failure message.
func (sc matchCase) describe() string {
	var b strings.Builder
	o := sc.opt
	fmt.Fprintf(&b, "options: window [%s, %s) now %s tolerance %s grace %s fuzzy %v exact %v reversals-are-refunds %v no-missing %v only-disputes %v\n",
		o.From.Format(time.RFC3339), o.To.Format(time.RFC3339), o.Now.Format(time.RFC3339), o.Tolerance, o.Grace, o.Fuzzy,
		o.ExactReferences, o.ReversalsAreRefunds, o.NoMissing, o.OnlyDisputes)
	for _, in := range sc.intents {
		fmt.Fprintf(&b, "intent %s %s %s %s ref=%q cust=%q created=%s updated=%s lease=%s refund_of=%q prefs=%q\n", in.Key, in.State,
			in.Amount.Currency, in.Amount.Value, in.Reference, in.Customer, in.CreatedAt.Format(time.RFC3339),
			in.UpdatedAt.Format(time.RFC3339), in.LeaseExpiresAt.Format(time.RFC3339), in.RefundOf, in.ProviderRefs)
	}
	for _, l := range sc.manual {
		fmt.Fprintf(&b, "manual %s -> %s\n", l[0], l[1])
	}
	for _, t := range sc.txns {
		fmt.Fprintf(&b, "txn %s %s %s %s %s at=%s ref=%q pref=%q cp=%q linked=%q\n", t.ID, t.Type, t.Status, t.Amount.Currency,
			t.Amount.Value, t.OccurredAt.Format(time.RFC3339), t.Reference, t.ProviderRef, t.Counterparty, t.LinkedID)
	}
	return b.String()
}
