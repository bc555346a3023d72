package alerts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// PlanStore is what planning needs of the books; a ledger.Tx has it.
type PlanStore interface {
	RecordAlert(ctx context.Context, a ledger.Alert) (ledger.Alert, bool, error)
	ListAlerts(ctx context.Context, runID int64, limit int) ([]ledger.Alert, error)
	FirstDelivered(ctx context.Context, subject string) (ledger.Alert, error)
}

// listAll is the limit used to read every alert of one run.
const listAll = 1 << 20

// Planner decides what a reconcile run announces. It is safe for
// concurrent use.
type Planner struct {
	cfg Config
	now func() time.Time
}

// NewPlanner checks cfg (after WithDefaults) and returns a planner that
// stamps alerts with now().
func NewPlanner(cfg Config, now func() time.Time) (*Planner, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if now == nil {
		return nil, errors.New("alerts: NewPlanner needs a clock")
	}
	return &Planner{cfg: cfg, now: now}, nil
}

// Plan records, in the caller's transaction, the alerts a run's findings
// call for, and returns those that are new: the caller enqueues one
// delivery job per returned alert in the same transaction (the outbox).
// changes are the run's UpsertFinding results, one per finding it saw;
// resolved are the findings ResolveUnseen resolved for it.
//
// A finding that qualifies for messages of its own (Config.ImmediateSeverity
// and ImmediateMinAtRisk) is announced when first seen, again when it
// escalates (per severity and amount reached) or reopens (per resolution),
// and gets a follow-up when resolved. Every run also plans a summary of the
// window's open findings, keyed by their fingerprint: re-running a window
// that did not change records nothing, so nothing is sent.
//
// The returned alerts are in delivery order: findings worst first, then
// resolutions, then the summary.
func (p *Planner) Plan(ctx context.Context, tx PlanStore, run ledger.Run, changes []ledger.FindingChange, resolved []ledger.Finding) ([]ledger.Alert, error) {
	if run.ID == 0 || run.Key == "" {
		return nil, errors.New("alerts: plan: the run must be stored (id and key)")
	}
	now := p.now().UTC()
	var planned []ledger.Alert
	add := func(subject string, r reason, sev ledger.Severity) {
		planned = append(planned, ledger.Alert{Subject: subject, Reason: r.String(), Provider: run.Provider,
			RunID: run.ID, Severity: sev, Channel: p.cfg.channelFor(sev), CreatedAt: now})
	}

	open := p.planChanges(changes, add)
	if err := p.planResolutions(ctx, tx, run, resolved, now, add); err != nil {
		return nil, err
	}
	summary, err := p.summaryReason(ctx, tx, run, open, len(resolved) > 0)
	if err != nil {
		return nil, err
	}
	if summary != nil {
		planned = append(planned, ledger.Alert{Subject: run.Key, Reason: summary.String(), Provider: run.Provider,
			RunID: run.ID, Severity: worstSeverity(open), Channel: p.cfg.Channel, CreatedAt: now})
	}
	return recordAlerts(ctx, tx, run, planned)
}

// addFunc plans one alert about subject.
type addFunc func(subject string, r reason, sev ledger.Severity)

// planChanges plans an alert for each open finding that is immediate and
// new, escalated or reopened, worst first, and returns the open findings in
// that order.
func (p *Planner) planChanges(changes []ledger.FindingChange, add addFunc) []ledger.Finding {
	sorted := slices.Clone(changes)
	slices.SortFunc(sorted, func(a, b ledger.FindingChange) int { return compareFindings(a.Finding, b.Finding) })
	var open []ledger.Finding
	for _, ch := range sorted {
		f := ch.Finding
		if f.Status == ledger.FindingResolved {
			continue
		}
		open = append(open, f)
		if !p.cfg.immediate(f) {
			continue
		}
		switch {
		case ch.Reopened:
			at := ch.Previous.ResolvedAt
			if at.IsZero() {
				at = f.LastSeenAt
			}
			add(f.ID, reason{Kind: reasonReopened, At: at}, f.Severity)
		case ch.Escalated:
			add(f.ID, reason{Kind: reasonEscalated, Severity: f.Severity, AtRisk: f.AtRisk}, f.Severity)
		case ch.New:
			add(f.ID, reason{Kind: reasonOpened}, f.Severity)
		}
	}
	return open
}

// planResolutions plans a follow-up for each resolved finding that is
// immediate or was announced before, worst first.
func (p *Planner) planResolutions(ctx context.Context, tx PlanStore, run ledger.Run, resolved []ledger.Finding, now time.Time, add addFunc) error {
	gone := slices.Clone(resolved)
	slices.SortFunc(gone, compareFindings)
	for _, f := range gone {
		announce := p.cfg.immediate(f)
		if !announce {
			// It may have been announced at a level it has since dropped below.
			_, err := tx.FirstDelivered(ctx, f.ID)
			switch {
			case err == nil:
				announce = true
			case !errors.Is(err, ledger.ErrNotFound):
				return fmt.Errorf("alerts: plan run %d: %w", run.ID, err)
			}
		}
		if announce {
			at := f.ResolvedAt
			if at.IsZero() {
				at = now
			}
			add(f.ID, reason{Kind: reasonResolved, At: at}, f.Severity)
		}
	}
	return nil
}

// worstSeverity returns the highest severity among findings, or the empty
// severity when there are none.
func worstSeverity(findings []ledger.Finding) ledger.Severity {
	sev := ledger.Severity("")
	for _, f := range findings {
		if f.Severity.Rank() > sev.Rank() {
			sev = f.Severity
		}
	}
	return sev
}

// recordAlerts stores the planned alerts in order and returns those that
// were not recorded before.
func recordAlerts(ctx context.Context, tx PlanStore, run ledger.Run, planned []ledger.Alert) ([]ledger.Alert, error) {
	var created []ledger.Alert
	for _, a := range planned {
		stored, isNew, err := tx.RecordAlert(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("alerts: plan run %d: %w", run.ID, err)
		}
		if isNew {
			created = append(created, stored)
		}
	}
	return created, nil
}

// summaryReason returns the reason of a new run summary, or nil when the
// window's open findings are those the last summary showed (or there is
// nothing to say about a clean window).
func (p *Planner) summaryReason(ctx context.Context, tx PlanStore, run ledger.Run, open []ledger.Finding, anyResolved bool) (*reason, error) {
	fp := fingerprint(open)
	alerts, err := tx.ListAlerts(ctx, run.ID, listAll)
	if err != nil {
		return nil, fmt.Errorf("alerts: plan run %d: %w", run.ID, err)
	}
	var last *ledger.Alert
	for i := range alerts {
		if alerts[i].Subject == run.Key {
			if r, err := parseReason(alerts[i].Reason); err == nil && r.Kind == reasonSummary {
				last = &alerts[i]
			}
		}
	}
	if last != nil {
		r, _ := parseReason(last.Reason)
		if r.Fingerprint == fp {
			return nil, nil
		}
	} else if len(open) == 0 && !anyResolved && !p.cfg.SummaryWhenClean {
		return nil, nil
	}
	return &reason{Kind: reasonSummary, Fingerprint: fp, Attempt: run.Attempt}, nil
}

// PlanResolution records the follow-up of a finding a person resolved (the
// findings command), in the caller's transaction; it returns the alert when
// it is new and the finding had been announced on its own, else nothing.
func (p *Planner) PlanResolution(ctx context.Context, tx PlanStore, f ledger.Finding) ([]ledger.Alert, error) {
	if f.Status != ledger.FindingResolved {
		return nil, fmt.Errorf("alerts: plan resolution of %s: finding is %s", f.ID, f.Status)
	}
	announced := p.cfg.immediate(f)
	if !announced {
		_, err := tx.FirstDelivered(ctx, f.ID)
		if err != nil && !errors.Is(err, ledger.ErrNotFound) {
			return nil, fmt.Errorf("alerts: plan resolution of %s: %w", f.ID, err)
		}
		announced = err == nil
	}
	if !announced {
		return nil, nil
	}
	at := f.ResolvedAt
	if at.IsZero() {
		at = p.now()
	}
	a := ledger.Alert{Subject: f.ID, Reason: reason{Kind: reasonResolved, At: at}.String(), Provider: f.Provider,
		RunID: f.LastRunID, Severity: f.Severity, Channel: p.cfg.channelFor(f.Severity), CreatedAt: p.now().UTC()}
	stored, isNew, err := tx.RecordAlert(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("alerts: plan resolution of %s: %w", f.ID, err)
	}
	if !isNew {
		return nil, nil
	}
	return []ledger.Alert{stored}, nil
}

// Hook adapts Plan to the reconciler's OnFindings hook: it plans and hands
// the new alerts to enqueue, which inserts the delivery jobs in the same
// transaction.
func (p *Planner) Hook(enqueue func(ctx context.Context, tx ledger.Tx, alerts []ledger.Alert) error) func(ctx context.Context, tx ledger.Tx, run ledger.Run, changes []ledger.FindingChange, resolved []ledger.Finding) error {
	return func(ctx context.Context, tx ledger.Tx, run ledger.Run, changes []ledger.FindingChange, resolved []ledger.Finding) error {
		alerts, err := p.Plan(ctx, tx, run, changes, resolved)
		if err != nil || len(alerts) == 0 {
			return err
		}
		return enqueue(ctx, tx, alerts)
	}
}

// Config returns the planner's configuration, defaults applied.
func (p *Planner) Config() Config { return p.cfg }
