package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// lateDisputes judges the disputes of the span whose charges are older than
// the span: a chargeback comes weeks after the charge, when neither the
// charge nor its intent is in the window any more. It fetches those
// charges and their intents (by the intent key the charge or dispute
// carries) and matches them again with the disputes only, adding the
// findings to res. The findings belong to the window of the dispute.
func (r *Reconciler) lateDisputes(ctx context.Context, p Params, opt matcher.Options, lo, hi time.Time,
	disputes []ledger.ProviderTxn, res *matcher.Result, sn *seen) error {
	if len(disputes) == 0 {
		return nil
	}
	var ids []string
	for _, d := range disputes {
		if d.LinkedID != "" && !slices.Contains(ids, d.LinkedID) {
			ids = append(ids, d.LinkedID)
		}
	}
	charges, err := r.store.GetProviderTxns(ctx, p.Provider, ids)
	if err != nil {
		return err
	}
	byID := make(map[string]ledger.ProviderTxn, len(charges))
	for _, c := range charges {
		byID[c.ID] = c
		sn.late[c.ID] = true
	}
	var (
		late, older []ledger.ProviderTxn
		keys        []string
	)
	addKey := func(k string) {
		if k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, d := range disputes {
		c, ok := byID[d.LinkedID]
		if ok && !c.OccurredAt.Before(lo) && c.OccurredAt.Before(hi) {
			continue // the first pass had its charge
		}
		late = append(late, d)
		if ok && !slices.ContainsFunc(older, func(x ledger.ProviderTxn) bool { return x.ID == c.ID }) {
			older = append(older, c)
			addKey(c.Reference)
		}
		addKey(d.Reference)
	}
	if len(late) == 0 {
		return nil
	}
	intents, err := r.store.GetIntents(ctx, keys)
	if err != nil {
		return err
	}
	opt.OnlyDisputes, opt.KeepLinks = true, false
	m, err := matcher.New(opt)
	if err != nil {
		return err
	}
	if err := r.addIntents(ctx, m, p.Provider, intents); err != nil {
		return err
	}
	for _, t := range append(older, late...) {
		t.Sources = nil
		if err := m.AddTxn(t); err != nil {
			return err
		}
	}
	more, err := m.Result()
	if err != nil {
		return fmt.Errorf("late disputes: %w", err)
	}
	for _, f := range more.Findings {
		if !slices.ContainsFunc(res.Findings, func(x ledger.Finding) bool { return x.ID == f.ID }) {
			res.Findings = append(res.Findings, f)
		}
	}
	res.DisputesWon = append(res.DisputesWon, more.DisputesWon...)
	slices.Sort(res.DisputesWon)
	res.DisputesWon = slices.Compact(res.DisputesWon)
	matcher.SortFindings(res.Findings)
	res.Summary.Findings = len(res.Findings)
	return nil
}

// resolveWon resolves the disputed_charge findings of earlier windows whose
// disputes this run saw won. A finding of this run's window is left to
// ResolveUnseen.
func resolveWon(ctx context.Context, tx ledger.Tx, run ledger.Run, ids []string, now time.Time) ([]ledger.Finding, error) {
	var keep []ledger.Kind
	for _, k := range ledger.Kinds {
		if k != ledger.KindDisputedCharge {
			keep = append(keep, k)
		}
	}
	var out []ledger.Finding
	for _, id := range ids {
		f, err := tx.GetFinding(ctx, id)
		if errors.Is(err, ledger.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if f.Status == ledger.FindingResolved || f.Kind != ledger.KindDisputedCharge ||
			!f.OccurredAt.Before(run.From) && f.OccurredAt.Before(run.To) {
			continue
		}
		rs, err := tx.ResolveUnseen(ctx, ledger.ResolveUnseenParams{Provider: run.Provider, Account: run.Account, From: f.OccurredAt,
			To: f.OccurredAt.Add(time.Microsecond), SeenSince: run.StartedAt, Keep: keep,
			Note: fmt.Sprintf("%sthe funds were reinstated (seen by run %d)", wonNote, run.ID), Now: now})
		if err != nil {
			return nil, err
		}
		for _, x := range rs {
			if x.ID == id {
				out = append(out, x)
			}
		}
	}
	return out, nil
}

// wonNote begins the note of a disputed_charge finding resolved because its
// dispute was won.
const wonNote = "dispute won: "

// dropWon removes from fs the disputed_charge findings already resolved as
// won: a run of the dispute's window, which does not hold the later
// reinstatement, must not reopen them (unless they grew worse).
func dropWon(ctx context.Context, tx ledger.Tx, fs []ledger.Finding) ([]ledger.Finding, error) {
	out := fs[:0:0]
	for _, f := range fs {
		if f.Kind == ledger.KindDisputedCharge {
			prev, err := tx.GetFinding(ctx, f.ID)
			if err != nil && !errors.Is(err, ledger.ErrNotFound) {
				return nil, err
			}
			if err == nil && prev.Status == ledger.FindingResolved && strings.HasPrefix(prev.Note, wonNote) && !ledger.Escalates(prev, f) {
				continue
			}
		}
		out = append(out, f)
	}
	return out, nil
}
