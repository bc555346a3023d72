package reconciler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// intentKinds are the kinds of finding judged on an intent as a whole: a
// run that judged an intent of another window in full resolves those of its
// findings it no longer sees. The others are judged by the window of their
// evidence (an unknown charge, an unrecorded refund, a dispute).
var intentKinds = []ledger.Kind{ledger.KindDuplicateCharge, ledger.KindDuplicateRefund, ledger.KindStatusMismatch,
	ledger.KindAmountMismatch, ledger.KindCurrencyMismatch, ledger.KindMissingAtProvider, ledger.KindStuckIntent,
	ledger.KindUnderpaid, ledger.KindOverpaid, ledger.KindPartiallyPaid}

// resolveUnseen resolves what the run no longer sees: the findings of its
// window, those of the intents of other windows it judged in full, and the
// unknown charges of other windows that it linked; each with a note that
// says why when the evidence explains it ("paid 2026-03-14 10:00 EAT
// (+03:00), SCG1AA0001, 2 days after the intent"). A finding that names a
// transaction the run did not read (beyond its span, not looked up) is
// left alone: the run cannot tell it is gone. So is a missing_at_provider
// when the pull failed.
func (r *Reconciler) resolveUnseen(ctx context.Context, tx ledger.Tx, out *Outcome, m *matcher.Matcher, sn *seen) ([]ledger.Finding, error) {
	run := out.Run
	judged := m.Judged()
	late := m.LateLinks()
	var ids []string
	for id := range late {
		ids = append(ids, ledger.FindingID(ledger.KindUnknownCharge, "", []string{id}))
	}
	slices.Sort(ids)
	cands, err := tx.ListUnseen(ctx, ledger.UnseenFilter{Provider: run.Provider, Account: run.Account, From: run.From, To: run.To,
		IntentKeys: judged, IDs: ids, SeenSince: run.StartedAt})
	if err != nil || len(cands) == 0 {
		return nil, err
	}
	inWindow := func(f ledger.Finding) bool { return !f.OccurredAt.Before(run.From) && f.OccurredAt.Before(run.To) }
	var keep []ledger.Finding
	var unknown []string // transactions named, to place in time
	for _, f := range cands {
		switch {
		case out.PullError != "" && f.Kind == ledger.KindMissingAtProvider:
			// Without the provider's evidence a run cannot tell that a
			// missing charge has turned up.
			continue
		case inWindow(f):
		case slices.Contains(judged, f.IntentKey) && slices.Contains(intentKinds, f.Kind):
		case f.Kind == ledger.KindUnknownCharge && slices.ContainsFunc(f.ProviderTxnIDs, func(id string) bool { return late[id] != "" }):
		default:
			continue
		}
		keep = append(keep, f)
		for _, id := range f.ProviderTxnIDs {
			if !sn.late[id] {
				unknown = append(unknown, id)
			}
		}
	}
	resolvable, err := onlyRead(ctx, tx, run.Provider, keep, unknown, sn)
	if err != nil {
		return nil, err
	}
	res := resolutionNotes(m, run, resolvable)
	refunds, err := r.refundsAsked(ctx, tx, res)
	if err != nil {
		return nil, err
	}
	now := r.cfg.Clock().UTC()
	done, err := tx.ResolveFindings(ctx, ledger.ResolveFindingsParams{Resolutions: res, SeenSince: run.StartedAt,
		Now: now, RunID: run.ID})
	if err != nil {
		return nil, err
	}
	return done, r.confirmRefunds(ctx, tx, run, done, refunds, now)
}

// onlyRead drops from keep (in place) the findings that name a transaction
// the run did not read: where the transactions named lie, in the span
// (read) or not, is looked up in the books.
func onlyRead(ctx context.Context, tx ledger.Tx, provider string, keep []ledger.Finding, unknown []string, sn *seen) ([]ledger.Finding, error) {
	txns, err := tx.GetProviderTxns(ctx, provider, uniq(unknown))
	if err != nil {
		return nil, err
	}
	read := map[string]bool{}
	for id := range sn.late {
		read[id] = true
	}
	for _, t := range txns {
		read[t.ID] = !t.OccurredAt.Before(sn.lo) && t.OccurredAt.Before(sn.hi)
	}
	resolvable := keep[:0]
	for _, f := range keep {
		if slices.ContainsFunc(f.ProviderTxnIDs, func(id string) bool { return !read[id] }) {
			continue
		}
		resolvable = append(resolvable, f)
	}
	return resolvable, nil
}

// resolutionNotes gives each resolvable finding its note: what the
// evidence says of its intent or of one of its transactions, else that the
// run no longer sees it.
func resolutionNotes(m *matcher.Matcher, run ledger.Run, resolvable []ledger.Finding) []ledger.Resolution {
	var keys, tids []string
	for _, f := range resolvable {
		if f.IntentKey != "" {
			keys = append(keys, f.IntentKey)
		}
		tids = append(tids, f.ProviderTxnIDs...)
	}
	byIntent, byTxn := m.Explain(uniq(keys), uniq(tids))
	dflt := fmt.Sprintf("no longer seen by run %d (attempt %d)", run.ID, run.Attempt)
	res := make([]ledger.Resolution, 0, len(resolvable))
	for _, f := range resolvable {
		note := dflt
		if s := byIntent[f.IntentKey]; s != "" && slices.Contains(intentKinds, f.Kind) {
			note = s + fmt.Sprintf(" (seen by run %d)", run.ID)
		} else if !slices.Contains(intentKinds, f.Kind) {
			for _, id := range f.ProviderTxnIDs {
				if s := byTxn[id]; s != "" {
					note = s + fmt.Sprintf(" (seen by run %d)", run.ID)
					break
				}
			}
		}
		res = append(res, ledger.Resolution{ID: f.ID, Note: note})
	}
	return res
}

// refundsAsked finds the refunds people asked for on the findings res
// resolves, and says in each resolution's note that the evidence confirms
// them.
func (r *Reconciler) refundsAsked(ctx context.Context, tx ledger.Tx, res []ledger.Resolution) (map[string][]ledger.Remedy, error) {
	if len(res) == 0 {
		return nil, nil
	}
	ids := make([]string, len(res))
	for i, x := range res {
		ids[i] = x.ID
	}
	rs, err := tx.ListRemedies(ctx, ledger.RemedyFilter{FindingIDs: ids, Kinds: []ledger.RemedyKind{ledger.RemedyRefund},
		Statuses: []ledger.RemedyStatus{ledger.RemedyApplied}})
	if err != nil || len(rs) == 0 {
		return nil, err
	}
	by := map[string][]ledger.Remedy{}
	for _, x := range rs {
		by[x.FindingID] = append(by[x.FindingID], x)
	}
	for i := range res {
		for _, x := range by[res[i].ID] {
			res[i].Note += "; " + refundConfirmed(x)
		}
	}
	return by, nil
}

// refundConfirmed says that the evidence confirms refund x.
func refundConfirmed(x ledger.Remedy) string {
	who := "asked by " + x.RequestedBy
	if x.DecidedBy != "" {
		who += ", approved by " + x.DecidedBy
	}
	return fmt.Sprintf("refund %s of %s (%s) confirmed by the evidence", x.RefundKey, ledger.ShowAmount(x.Amount), who)
}

// confirmRefunds marks the refunds asked on the findings the run resolved
// as confirmed, each with a refund_confirmed event in its finding's history.
func (r *Reconciler) confirmRefunds(ctx context.Context, tx ledger.Tx, run ledger.Run, done []ledger.Finding, refunds map[string][]ledger.Remedy, now time.Time) error {
	for _, f := range done {
		for _, x := range refunds[f.ID] {
			if _, err := tx.UpdateRemedy(ctx, ledger.RemedyUpdate{ID: x.ID, From: []ledger.RemedyStatus{ledger.RemedyApplied},
				To: ledger.RemedyConfirmed, Now: now}); err != nil {
				return err
			}
			if err := tx.AddFindingEvent(ctx, ledger.HistoryEvent{SubjectKind: ledger.SubjectFinding, SubjectID: f.ID,
				Action: ledger.ActionRefundConfirmed, Actor: ledger.ActorRun, Surface: ledger.SurfaceRun, RunID: run.ID,
				Note: refundConfirmed(x), At: now}); err != nil {
				return err
			}
		}
	}
	return nil
}
