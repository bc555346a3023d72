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
	hlo, hhi := p.From.Add(-h), p.To.Add(h)
	var txns []ledger.ProviderTxn // found outside the span, by id once
	have := map[string]bool{}
	keep := func(ts []ledger.ProviderTxn) {
		for _, t := range ts {
			if !have[t.ID] && (t.OccurredAt.Before(lo) || !t.OccurredAt.Before(hi)) {
				have[t.ID] = true
				txns = append(txns, t)
			}
		}
	}

	// Round 1: the charges leftover children name, then the intents that
	// leftover evidence (and those charges) may name.
	var named []string
	for _, t := range left.Txns {
		if t.LinkedID != "" {
			named = append(named, t.LinkedID)
		}
	}
	charges, err := r.store.FindTxns(ctx, ledger.TxnLookup{Provider: p.Provider, From: hlo, To: hhi, IDs: uniq(named)})
	if err != nil {
		return nil, err
	}
	keep(charges)
	var byTxn ledger.IntentLookup
	var ids []string
	addEvidence := func(id, ref, pref string) {
		ids = append(ids, id)
		byTxn.ProviderRefs = append(byTxn.ProviderRefs, id)
		if pref != "" {
			byTxn.ProviderRefs = append(byTxn.ProviderRefs, pref)
		}
		if ref != "" {
			byTxn.Keys = append(byTxn.Keys, strings.TrimSpace(ref))
			if n := ledger.NormalReference(ref); n != "" {
				byTxn.RefNorms = append(byTxn.RefNorms, n)
			}
		}
	}
	for _, t := range left.Txns {
		if t.LinkedID == "" {
			addEvidence(t.ID, t.Reference, t.ProviderRef)
		}
	}
	for _, c := range charges {
		addEvidence(c.ID, c.Reference, c.ProviderRef)
	}
	links, err := r.store.FindManualLinks(ctx, p.Provider, uniq(ids), nil)
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		byTxn.Keys = append(byTxn.Keys, l.IntentKey)
	}
	byTxn.Provider, byTxn.From, byTxn.To = p.Provider, hlo, hhi
	byTxn.Keys, byTxn.RefNorms, byTxn.ProviderRefs = uniq(byTxn.Keys), uniq(byTxn.RefNorms), uniq(byTxn.ProviderRefs)
	found, err := r.store.FindIntents(ctx, byTxn)
	if err != nil {
		return nil, err
	}

	// Round 2: every intent to judge in full, with the refunds of its
	// charges and the charge of its refunds, and all their evidence.
	keys := slices.Clone(left.IntentKeys)
	for _, in := range found {
		keys = append(keys, in.Key)
		if in.RefundOf != "" {
			keys = append(keys, in.RefundOf)
		}
	}
	keys = uniq(keys)
	intents, err := r.store.FindIntents(ctx, ledger.IntentLookup{Provider: p.Provider, From: hlo, To: hhi, Keys: keys, RefundOf: keys})
	if err != nil {
		return nil, err
	}
	var byIntent ledger.TxnLookup
	var all []string
	for _, in := range intents {
		all = append(all, in.Key)
		if in.RefundOf != "" {
			all = append(all, in.RefundOf)
		}
		byIntent.IDs = append(byIntent.IDs, in.ProviderRefs...)
		byIntent.ProviderRefs = append(byIntent.ProviderRefs, in.ProviderRefs...)
		for _, s := range []string{in.Reference, in.Key} {
			if n := ledger.NormalReference(s); n != "" {
				byIntent.RefNorms = append(byIntent.RefNorms, n)
			}
		}
	}
	more, err := r.store.FindManualLinks(ctx, p.Provider, nil, uniq(all))
	if err != nil {
		return nil, err
	}
	links = append(links, more...)
	for _, l := range more {
		byIntent.IDs = append(byIntent.IDs, l.TxnID)
	}
	byIntent.Provider, byIntent.From, byIntent.To = p.Provider, hlo, hhi
	byIntent.IDs, byIntent.ProviderRefs, byIntent.RefNorms = uniq(byIntent.IDs), uniq(byIntent.ProviderRefs), uniq(byIntent.RefNorms)
	evidence, err := r.store.FindTxns(ctx, byIntent)
	if err != nil {
		return nil, err
	}
	keep(evidence)
	// What names the charges found, and the window's charges that linked
	// to nothing: their refunds, reversals, fees and disputes.
	var parents []string
	for _, t := range append(evidence, charges...) {
		if t.Type == ledger.TxnCharge {
			parents = append(parents, t.ID)
		}
	}
	for _, t := range left.Txns {
		if t.Type == ledger.TxnCharge {
			parents = append(parents, t.ID)
		}
	}
	children, err := r.store.FindTxns(ctx, ledger.TxnLookup{Provider: p.Provider, From: hlo, To: hhi, Linked: uniq(parents)})
	if err != nil {
		return nil, err
	}
	keep(children)

	stats.Intents, stats.Txns = len(intents), len(txns)
	for _, in := range append(found, intents...) {
		if in.Provider == p.Provider {
			if err := m.AddLateIntent(in); err != nil {
				return nil, err
			}
		}
	}
	for _, l := range links {
		if _, err := m.AddLateManualLink(l.TxnID, l.IntentKey); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(txns, func(a, b ledger.ProviderTxn) int {
		if c := a.OccurredAt.Compare(b.OccurredAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for _, t := range txns {
		t.Provider, t.Sources = p.Provider, nil
		if err := m.AddLateTxn(t); err != nil {
			return nil, err
		}
		sn.late[t.ID] = true
	}
	return sn, nil
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
	h := r.HorizonFor(p.Provider)
	fs, err := r.store.ListFindings(ctx, ledger.FindingFilter{Provider: p.Provider,
		Statuses: []ledger.FindingStatus{ledger.FindingOpen, ledger.FindingAcknowledged},
		Kinds:    []ledger.Kind{ledger.KindMissingAtProvider, ledger.KindUnknownCharge},
		From:     p.From.Add(-h), To: p.To.Add(h), Limit: 100000})
	if err != nil {
		return nil, err
	}
	var keys, ids []string
	foreign := map[string]ledger.Finding{}
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
	if len(foreign) == 0 {
		return nil, nil
	}
	ins, err := r.store.GetIntents(ctx, uniq(keys))
	if err != nil {
		return nil, err
	}
	txns, err := r.store.GetProviderTxns(ctx, p.Provider, uniq(ids))
	if err != nil {
		return nil, err
	}
	intentOf := map[string]ledger.Intent{}
	for _, in := range ins {
		intentOf[in.Key] = in
	}
	txnOf := map[string]ledger.ProviderTxn{}
	for _, t := range txns {
		txnOf[t.ID] = t
	}
	halfIntents, halfTxns := slices.Clone(res.Unpaired.Intents), slices.Clone(res.Unpaired.Txns)
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
