package reconciler

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// DefaultHorizon is how far, each way from its window, a run looks up the
// intents and evidence of other windows that its leftovers may belong to.
const DefaultHorizon = 35 * 24 * time.Hour

// HorizonFor returns the horizon of provider.
func (r *Reconciler) HorizonFor(provider string) time.Duration {
	if h, ok := r.cfg.Horizon[provider]; ok && h > 0 {
		return h
	}
	return DefaultHorizon
}

// seen is what a run read beyond its span: the transactions it added late,
// by id. A finding that names a transaction the run neither read in its
// span nor added late is one it cannot judge, and does not resolve.
type seen struct {
	lo, hi time.Time
	late   map[string]bool
}

// lookLate looks the window's leftovers up among the intents and the
// evidence of other windows within the horizon, by index, and adds what it
// finds to m (matcher.Leftovers). Rounds: the intents that leftover
// evidence may name (and the charges that leftover refunds and disputes
// name, with their intents); then, for those intents and the window's own
// leftover intents, with their refunds' and charges' intents, all their
// evidence and what names it.
func (r *Reconciler) lookLate(ctx context.Context, p Params, m *matcher.Matcher, lo, hi time.Time, stats *LateStats) (*seen, error) {
	start := time.Now()
	defer func() { stats.Took = time.Since(start) }()
	left, err := m.Leftovers()
	if err != nil {
		return nil, err
	}
	stats.LeftTxns, stats.LeftIntents = len(left.Txns), len(left.IntentKeys)
	sn := &seen{lo: lo, hi: hi, late: map[string]bool{}}
	if len(left.Txns) == 0 && len(left.IntentKeys) == 0 {
		return sn, nil
	}
	h := r.HorizonFor(p.Provider)
	l := &lookup{store: r.store, provider: p.Provider, account: p.Account, from: p.From.Add(-h), to: p.To.Add(h), lo: lo, hi: hi, have: map[string]bool{}}
	charges, err := l.namedCharges(ctx, left)
	if err != nil {
		return nil, err
	}
	found, links, err := l.intentsOfEvidence(ctx, left, charges)
	if err != nil {
		return nil, err
	}
	intents, more, err := l.evidenceOfIntents(ctx, left, found)
	if err != nil {
		return nil, err
	}
	if err := l.childrenOf(ctx, left, charges); err != nil {
		return nil, err
	}
	stats.Intents, stats.Txns = len(intents), len(l.txns)
	return sn, l.add(m, append(found, intents...), append(links, more...), sn)
}

// lookup is one run's look-up of its leftovers within [from, to): the
// transactions it found outside the span [lo, hi), once each.
type lookup struct {
	store    Store
	provider string
	account  string
	from, to time.Time
	lo, hi   time.Time
	txns     []ledger.ProviderTxn
	have     map[string]bool
	// evidence are the transactions found for the intents, the span's
	// included, whose children are looked up.
	evidence []ledger.ProviderTxn
}

// keep adds the transactions of ts that lie outside the span, once each.
func (l *lookup) keep(ts []ledger.ProviderTxn) {
	for _, t := range ts {
		if !l.have[t.ID] && (t.OccurredAt.Before(l.lo) || !t.OccurredAt.Before(l.hi)) {
			l.have[t.ID] = true
			l.txns = append(l.txns, t)
		}
	}
}

// namedCharges finds the charges that leftover refunds, reversals and
// disputes name, by id.
func (l *lookup) namedCharges(ctx context.Context, left *matcher.Leftovers) ([]ledger.ProviderTxn, error) {
	var named []string
	for _, t := range left.Txns {
		if t.LinkedID != "" {
			named = append(named, t.LinkedID)
		}
	}
	charges, err := l.store.FindTxns(ctx, ledger.TxnLookup{Provider: l.provider, Account: l.account, From: l.from, To: l.to, IDs: uniq(named)})
	l.keep(charges)
	return charges, err
}

// intentsOfEvidence finds the intents that leftover evidence (and the
// charges named) may link to: by provider reference or id, by echoed
// reference (key, normal form), and by manual link.
func (l *lookup) intentsOfEvidence(ctx context.Context, left *matcher.Leftovers, charges []ledger.ProviderTxn) ([]ledger.Intent, []ledger.ManualLink, error) {
	q := ledger.IntentLookup{Provider: l.provider, Account: l.account, From: l.from, To: l.to}
	var ids []string
	add := func(id, ref, pref string) {
		ids = append(ids, id)
		q.ProviderRefs = append(q.ProviderRefs, id, pref)
		if ref != "" {
			q.Keys = append(q.Keys, strings.TrimSpace(ref))
			q.RefNorms = append(q.RefNorms, ledger.NormalReference(ref))
		}
	}
	for _, t := range left.Txns {
		if t.LinkedID == "" {
			add(t.ID, t.Reference, t.ProviderRef)
		}
	}
	for _, c := range charges {
		add(c.ID, c.Reference, c.ProviderRef)
	}
	links, err := l.store.FindManualLinks(ctx, l.provider, uniq(ids), nil)
	if err != nil {
		return nil, nil, err
	}
	for _, ml := range links {
		q.Keys = append(q.Keys, ml.IntentKey)
	}
	q.Keys, q.RefNorms, q.ProviderRefs = uniq(q.Keys), uniq(q.RefNorms), uniq(q.ProviderRefs)
	found, err := l.store.FindIntents(ctx, q)
	return found, links, err
}

// evidenceOfIntents reads every intent to judge in full (the window's
// leftover intents and those found), with the refunds of its charges and
// the charge of its refunds, and finds all their evidence: by id and
// provider reference of their attempts, by normal reference and key, and
// by manual link.
func (l *lookup) evidenceOfIntents(ctx context.Context, left *matcher.Leftovers, found []ledger.Intent) ([]ledger.Intent, []ledger.ManualLink, error) {
	keys := slices.Clone(left.IntentKeys)
	for _, in := range found {
		keys = append(keys, in.Key, in.RefundOf)
	}
	keys = uniq(keys)
	intents, err := l.store.FindIntents(ctx, ledger.IntentLookup{Provider: l.provider, Account: l.account, From: l.from, To: l.to, Keys: keys, RefundOf: keys})
	if err != nil {
		return nil, nil, err
	}
	q := ledger.TxnLookup{Provider: l.provider, Account: l.account, From: l.from, To: l.to}
	var all []string
	for _, in := range intents {
		all = append(all, in.Key, in.RefundOf)
		q.IDs = append(q.IDs, in.ProviderRefs...)
		q.ProviderRefs = append(q.ProviderRefs, in.ProviderRefs...)
		q.RefNorms = append(q.RefNorms, ledger.NormalReference(in.Reference), ledger.NormalReference(in.Key))
	}
	links, err := l.store.FindManualLinks(ctx, l.provider, nil, uniq(all))
	if err != nil {
		return nil, nil, err
	}
	for _, ml := range links {
		q.IDs = append(q.IDs, ml.TxnID)
	}
	q.IDs, q.ProviderRefs, q.RefNorms = uniq(q.IDs), uniq(q.ProviderRefs), uniq(q.RefNorms)
	if l.evidence, err = l.store.FindTxns(ctx, q); err != nil {
		return nil, nil, err
	}
	l.keep(l.evidence)
	return intents, links, nil
}

// childrenOf finds what names the charges found and the window's charges
// that linked to nothing: their refunds, reversals, fees and disputes.
func (l *lookup) childrenOf(ctx context.Context, left *matcher.Leftovers, charges []ledger.ProviderTxn) error {
	var parents []string
	for _, t := range append(slices.Clone(l.evidence), charges...) {
		if t.Type == ledger.TxnCharge {
			parents = append(parents, t.ID)
		}
	}
	for _, t := range left.Txns {
		if t.Type == ledger.TxnCharge {
			parents = append(parents, t.ID)
		}
	}
	children, err := l.store.FindTxns(ctx, ledger.TxnLookup{Provider: l.provider, Account: l.account, From: l.from, To: l.to, Linked: uniq(parents)})
	l.keep(children)
	return err
}

// add gives m what was found: the intents, the manual links, then the
// transactions outside the span in time order (recorded in sn as read).
func (l *lookup) add(m *matcher.Matcher, intents []ledger.Intent, links []ledger.ManualLink, sn *seen) error {
	for _, in := range intents {
		if in.Provider == l.provider {
			if err := m.AddLateIntent(in); err != nil {
				return err
			}
		}
	}
	for _, ml := range links {
		if _, err := m.AddLateManualLink(ml.TxnID, ml.IntentKey); err != nil {
			return err
		}
	}
	slices.SortFunc(l.txns, func(a, b ledger.ProviderTxn) int {
		if c := a.OccurredAt.Compare(b.OccurredAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, t := range l.txns {
		t.Provider, t.Sources = l.provider, nil
		if err := m.AddLateTxn(t); err != nil {
			return err
		}
		sn.late[t.ID] = true
	}
	return nil
}

// uniq sorts s and drops repeats and empty strings.
func uniq(s []string) []string {
	s = slices.DeleteFunc(s, func(v string) bool { return v == "" })
	slices.Sort(s)
	return slices.Compact(s)
}

// suggestAcross pairs the window's unpaired halves (a missing_at_provider,
// an unknown_charge) with those of the other windows of the horizon that
// are still open, as a window's own are paired: the window's findings get
// the best suggestion whatever its window, and an open finding of another
// window with no suggestion yet gets the one that names this window's half
// (returned, to be written with the run).
func (r *Reconciler) suggestAcross(ctx context.Context, p Params, res *matcher.Result) (map[string]ledger.Suggestion, error) {
	if len(res.Unpaired.Intents)+len(res.Unpaired.Txns) == 0 {
		return nil, nil
	}
	foreign := map[string]ledger.Finding{}
	keys, ids, err := r.foreignHalves(ctx, p, foreign)
	if err != nil || len(foreign) == 0 {
		return nil, err
	}
	halfIntents, halfTxns, err := r.addForeignHalves(ctx, p.Provider, foreign, keys, ids, res.Unpaired.Intents, res.Unpaired.Txns)
	if err != nil {
		return nil, err
	}
	sugs := matcher.Suggest(halfIntents, halfTxns)
	for i := range res.Findings {
		if s, ok := sugs[res.Findings[i].ID]; ok {
			res.Findings[i].Suggestion = s
		}
	}
	others := map[string]ledger.Suggestion{}
	for id, s := range sugs {
		if f, ok := foreign[id]; ok && f.Suggestion.IsZero() {
			others[id] = s
		}
	}
	return others, nil
}

// foreignHalves lists in foreign the open unpaired halves of the other
// windows of the horizon, by finding id: the missing_at_provider findings
// that name no transaction (their intent keys in keys) and the
// unknown_charge findings that name one (its id in ids).
func (r *Reconciler) foreignHalves(ctx context.Context, p Params, foreign map[string]ledger.Finding) (keys, ids []string, err error) {
	h := r.HorizonFor(p.Provider)
	fs, err := r.store.ListFindings(ctx, ledger.FindingFilter{Provider: p.Provider, Accounts: []string{p.Account},
		Statuses: []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged},
		Kinds:    []ledger.Kind{ledger.KindMissingAtProvider, ledger.KindUnknownCharge},
		From:     p.From.Add(-h), To: p.To.Add(h), Limit: 100000})
	if err != nil {
		return nil, nil, err
	}
	for _, f := range fs {
		if !f.OccurredAt.Before(p.From) && f.OccurredAt.Before(p.To) {
			continue
		}
		switch {
		case f.Kind == ledger.KindMissingAtProvider && len(f.ProviderTxnIDs) == 0:
			keys = append(keys, f.IntentKey)
		case f.Kind == ledger.KindUnknownCharge && len(f.ProviderTxnIDs) == 1:
			ids = append(ids, f.ProviderTxnIDs[0])
		default:
			continue
		}
		foreign[f.ID] = f
	}
	return keys, ids, nil
}

// addForeignHalves reads the intents and transactions the foreign halves
// name and adds a half for each to copies of the window's own unpaired
// halves; a half whose intent or transaction is not in the books, or whose
// amount cannot be read, is left out.
func (r *Reconciler) addForeignHalves(ctx context.Context, provider string, foreign map[string]ledger.Finding, keys, ids []string,
	ownIntents, ownTxns []matcher.Half) (halfIntents, halfTxns []matcher.Half, err error) {
	ins, err := r.store.GetIntents(ctx, uniq(keys))
	if err != nil {
		return nil, nil, err
	}
	txns, err := r.store.GetProviderTxns(ctx, provider, uniq(ids))
	if err != nil {
		return nil, nil, err
	}
	intentOf := map[string]ledger.Intent{}
	for _, in := range ins {
		intentOf[in.Key] = in
	}
	txnOf := map[string]ledger.ProviderTxn{}
	for _, t := range txns {
		txnOf[t.ID] = t
	}
	halfIntents, halfTxns = slices.Clone(ownIntents), slices.Clone(ownTxns)
	for id, f := range foreign {
		switch f.Kind {
		case ledger.KindMissingAtProvider:
			in, ok := intentOf[f.IntentKey]
			minor, err := in.Amount.Minor()
			if !ok || err != nil {
				continue
			}
			ref := in.Reference
			if ref == "" {
				ref = in.Key
			}
			halfIntents = append(halfIntents, matcher.Half{FindingID: id, IntentKey: in.Key, Amount: matcher.Money{Minor: minor, Currency: in.Amount.Currency},
				Reference: ref, Customer: in.Customer, At: in.CreatedAt})
		case ledger.KindUnknownCharge:
			t, ok := txnOf[f.ProviderTxnIDs[0]]
			minor, err := f.Actual.Minor()
			if !ok || err != nil {
				continue
			}
			halfTxns = append(halfTxns, matcher.Half{FindingID: id, TxnID: t.ID, Amount: matcher.Money{Minor: minor, Currency: f.Actual.Currency},
				Reference: t.Reference, Customer: t.Counterparty, At: t.OccurredAt})
		}
	}
	return halfIntents, halfTxns, nil
}
