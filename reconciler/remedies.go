package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
)

// RemedyStore is what confirming refunds and leaving voided intents alone
// read; a ledger.Store has it.
type RemedyStore interface {
	VoidedIntents(ctx context.Context, keys []string) ([]string, error)
	ListRemedies(ctx context.Context, f ledger.RemedyFilter) ([]ledger.Remedy, error)
	GetIntent(ctx context.Context, key string) (ledger.Intent, error)
	GetFinding(ctx context.Context, id string) (ledger.Finding, error)
	GetRun(ctx context.Context, id int64) (ledger.Run, error)
}

// A refund people asked for from a finding (a duplicate charge, an
// overpayment) is a refund intent of its own window, the day it was asked
// for, while the finding belongs to the window of the payment. The run
// that sees the refund given back settles the refund intent; the finding's
// own window is the one that judges the charge again, net of the refund.
// So after a run, the windows of the open findings whose refunds are now
// settled are run again, once each, and their runs resolve those findings
// (saying the refund is confirmed) and mark the refunds confirmed.

// rerunForRefunds runs again, after the run of p, the windows of the open
// findings of p's provider whose asked-for refunds have succeeded, and
// returns their outcomes. A window run already (p's own) is not run twice.
func (r *Reconciler) rerunForRefunds(ctx context.Context, p Params) ([]*Outcome, error) {
	rs, ok := r.store.(RemedyStore)
	if !ok {
		return nil, nil
	}
	asked, err := rs.ListRemedies(ctx, ledger.RemedyFilter{Kinds: []ledger.RemedyKind{ledger.RemedyRefund},
		Statuses: []ledger.RemedyStatus{ledger.RemedyApplied}})
	if err != nil {
		return nil, err
	}
	type window struct {
		from, to int64
	}
	seen := map[window]bool{{p.From.UnixNano(), p.To.UnixNano()}: true}
	var again []ledger.Run
	for _, x := range asked {
		if x.Provider != p.Provider || x.RefundKey == "" {
			continue
		}
		in, err := rs.GetIntent(ctx, x.RefundKey)
		if errors.Is(err, ledger.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if in.State != ledger.StateSucceeded {
			continue
		}
		f, err := rs.GetFinding(ctx, x.FindingID)
		if err == nil && f.Account != p.Account {
			continue // another account's: its own runs confirm it
		}
		if err != nil || f.Status == ledger.FindingResolved || f.LastRunID == 0 {
			if errors.Is(err, ledger.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		run, err := rs.GetRun(ctx, f.LastRunID)
		if err != nil {
			return nil, err
		}
		w := window{run.From.UnixNano(), run.To.UnixNano()}
		if !seen[w] {
			seen[w] = true
			again = append(again, run)
		}
	}
	slices.SortFunc(again, func(a, b ledger.Run) int { return a.From.Compare(b.From) })
	var out []*Outcome
	for _, run := range again {
		o, err := r.Run(ctx, Params{Provider: p.Provider, Account: p.Account, From: run.From, To: run.To, NoPull: true, confirming: true})
		if errors.Is(err, ErrBusy) {
			// Its window is being run now: that run sees the refund.
			r.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "reconcile run: window busy, refunds confirmed by its own run",
				slog.String("run", run.Key))
			continue
		}
		if err != nil {
			return out, fmt.Errorf("confirm refunds in %s: %w", run.Key, err)
		}
		out = append(out, o)
	}
	return out, nil
}

// voidedKinds are the findings a voided intent does not get: it was never
// to be paid, so it is neither missing nor stuck. Money that moved for it
// all the same is still reported (a status mismatch, a duplicate).
var voidedKinds = []ledger.Kind{ledger.KindMissingAtProvider, ledger.KindStuckIntent}

// dropVoided leaves out of res the missing and stuck findings of intents a
// person voided (ledger.IntentVoided): the run then resolves those it had
// raised, as no longer seen.
func (r *Reconciler) dropVoided(ctx context.Context, res *matcher.Result) error {
	rs, ok := r.store.(RemedyStore)
	if !ok {
		return nil
	}
	var keys []string
	for _, f := range res.Findings {
		if f.IntentKey != "" && slices.Contains(voidedKinds, f.Kind) {
			keys = append(keys, f.IntentKey)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	voided, err := rs.VoidedIntents(ctx, uniq(keys))
	if err != nil || len(voided) == 0 {
		return err
	}
	kept := res.Findings[:0]
	for _, f := range res.Findings {
		if slices.Contains(voidedKinds, f.Kind) && slices.Contains(voided, f.IntentKey) {
			res.Summary.Findings--
			continue
		}
		kept = append(kept, f)
	}
	res.Findings = kept
	return nil
}
