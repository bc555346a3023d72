package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/providers"
)

// progressEvery is how many rows pass between progress reports.
const progressEvery = 10000

// Run reconciles one provider and window. A window that another process is
// running fails with an error wrapping ErrBusy. Findings are results, not
// errors: a run that completes returns a nil error whatever it found.
func (r *Reconciler) Run(ctx context.Context, p Params) (*Outcome, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.From, p.To = p.From.UTC(), p.To.UTC()
	start := r.cfg.Clock().UTC()
	out := &Outcome{DryRun: p.DryRun, Run: ledger.Run{Key: ledger.AccountRunKey(p.Provider, p.Account, p.From, p.To),
		Provider: p.Provider, Account: p.Account, From: p.From, To: p.To, StartedAt: start}}
	if p.DryRun {
		return r.finished(ctx, p, out, start, r.run(ctx, p, out))
	}
	run, err := r.store.ClaimRun(ctx, ledger.RunClaim{Provider: p.Provider, Account: p.Account, From: p.From, To: p.To,
		Owner: r.cfg.Owner, Lease: r.cfg.Lease, Now: start})
	if err != nil {
		return nil, fmt.Errorf("reconcile %s: %w", out.Run.Key, err)
	}
	out.Run = run
	runCtx, stop := r.keepLease(ctx, run)
	err = r.run(runCtx, p, out)
	// A run that completed proved it still held the window when it wrote;
	// only a failed one may have failed for the lost lease.
	if lost := stop(); lost != nil && err != nil {
		err = lost
	}
	if out, err = r.finished(ctx, p, out, start, err); err != nil || p.confirming {
		return out, err
	}
	if out.Confirmed, err = r.rerunForRefunds(ctx, p); err != nil {
		return out, err
	}
	return out, nil
}

// keepLease renews the run's lease every third of it while the run works,
// so that a run longer than its lease is not taken over. If another process
// has taken the window over, the returned context is cancelled with
// ErrLeaseLost. stop ends the renewals and returns that cause, if any.
func (r *Reconciler) keepLease(ctx context.Context, run ledger.Run) (context.Context, func() error) {
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			_, err := r.store.RenewRun(ctx, ledger.RunRenew{ID: run.ID, Owner: run.Owner, Lease: r.cfg.Lease, Now: r.cfg.Clock().UTC()})
			switch {
			case errors.Is(err, ledger.ErrConflict):
				cancel(fmt.Errorf("%w: %w", ErrLeaseLost, err))
				return
			case err != nil && ctx.Err() == nil:
				// The lease still holds for a while: try again next tick.
				r.cfg.Logger.LogAttrs(ctx, slogWarn, "reconcile run: renew lease", slog.String("run", run.Key), slog.String("error", err.Error()))
			}
		}
	}()
	return ctx, func() error {
		close(quit)
		<-done
		if cause := context.Cause(ctx); errors.Is(cause, ErrLeaseLost) {
			return cause
		}
		cancel(nil)
		return nil
	}
}

func (r *Reconciler) finished(ctx context.Context, p Params, out *Outcome, start time.Time, err error) (*Outcome, error) {
	if err != nil && !p.DryRun {
		r.fail(ctx, out, err)
	}
	if err != nil {
		return nil, fmt.Errorf("reconcile %s: %w", out.Run.Key, err)
	}
	r.cfg.Logger.LogAttrs(ctx, logLevel(out), "reconcile run",
		logAttrs(out, r.cfg.Clock().Sub(start))...)
	return out, nil
}

// reversalsRefund names the providers whose reversals give a customer's
// money back (M-Pesa's Reversal API), judged as refunds; elsewhere
// (Stripe) a reversal releases an uncaptured or failed charge.
var reversalsRefund = map[string]bool{"mpesa": true}

func (r *Reconciler) run(ctx context.Context, p Params, out *Outcome) error {
	if a := r.cfg.Banks[p.Provider]; a != nil {
		return r.runBank(ctx, p, a, out)
	}
	opt := matcher.Options{Provider: p.Provider, Account: p.Account, From: p.From, To: p.To, Now: out.Run.StartedAt,
		Tolerance: r.cfg.Tolerance, Grace: r.GraceFor(p.Provider), Fuzzy: r.cfg.Fuzzy,
		ExactReferences:     slices.Contains(r.cfg.ExactReferences, p.Provider),
		ReversalsAreRefunds: reversalsRefund[p.Provider], Zone: r.cfg.Zones[p.Provider]}
	lo, hi := opt.Span()
	if puller := r.cfg.Pullers[ledger.Scope(p.Provider, p.Account)]; puller != nil && !p.NoPull && !p.DryRun {
		if err := r.pull(ctx, p, puller, lo, minTime(hi, out.Run.StartedAt)); err != nil {
			if ctx.Err() != nil {
				return err
			}
			out.PullError, out.PullCause = err.Error(), err
			opt.NoMissing = true
		}
	}
	rr, reads := r.readsFor(ctx)
	out.Reads = reads
	mt, err := rr.match(ctx, p, opt, lo, hi, &out.Late)
	if err != nil && rr != r && ctx.Err() == nil {
		// A read on the replica failed (a query the standby cancelled
		// to replay, a lost connection): the primary has it all.
		r.cfg.Logger.LogAttrs(ctx, slogWarn, "reconcile run: reading the replica failed; reading the primary",
			slog.String("run", out.Run.Key), slog.String("error", err.Error()))
		out.Late, out.Reads = LateStats{}, "primary: reading the replica failed: "+err.Error()
		mt, err = r.match(ctx, p, opt, lo, hi, &out.Late)
	}
	if err != nil {
		return err
	}
	m, res, sn, others := mt.m, mt.res, mt.sn, mt.others
	out.Summary, out.Fuzzy = res.Summary, res.Fuzzy
	out.Findings = res.Findings
	out.Run.Counts = ledger.RunCounts{Intents: res.Summary.Intents, Transactions: res.Summary.Transactions,
		Matched: res.Summary.Matched, Findings: res.Summary.Findings}
	if p.DryRun {
		out.Settled = res.Settlements
		out.Run.Counts.Settled = len(res.Settlements)
		for i := range out.Findings {
			out.Findings[i].FirstSeenAt, out.Findings[i].LastSeenAt = out.Run.StartedAt, out.Run.StartedAt
		}
		return nil
	}
	return r.write(ctx, out, res, m, sn, others)
}

// matched is what a run's matching found, before anything is written.
type matched struct {
	m      *matcher.Matcher
	res    *matcher.Result
	sn     *seen
	others map[string]ledger.Suggestion
}

// match reads the span and the leftovers' look-ups into a matcher and
// returns its result, with what it read beyond the span and the
// suggestions for other windows' findings. It only reads.
func (r *Reconciler) match(ctx context.Context, p Params, opt matcher.Options, lo, hi time.Time, late *LateStats) (matched, error) {
	m, err := matcher.New(opt)
	if err != nil {
		return matched{}, err
	}
	disputes, err := r.load(ctx, p, m, lo, hi)
	if err != nil {
		return matched{}, err
	}
	sn, err := r.lookLate(ctx, p, m, lo, hi, late)
	if err != nil {
		return matched{}, err
	}
	res, err := m.Result()
	if err != nil {
		return matched{}, err
	}
	if err := r.lateDisputes(ctx, p, opt, lo, hi, disputes, res, sn); err != nil {
		return matched{}, err
	}
	if err := r.dropVoided(ctx, res); err != nil {
		return matched{}, err
	}
	others, err := r.suggestAcross(ctx, p, res)
	if err != nil {
		return matched{}, err
	}
	return matched{m: m, res: res, sn: sn, others: others}, nil
}

// pullBatch is how many pulled sightings are recorded at once.
const pullBatch = 1000

// pull fetches the provider's evidence for [from, to) and records the
// sightings in batches; recording is idempotent, so a repeated pull changes
// nothing. What was pulled before a failure is recorded before the error is
// returned.
func (r *Reconciler) pull(ctx context.Context, p Params, puller providers.Puller, from, to time.Time) error {
	rc := r.recorder(p)
	err := puller.Pull(ctx, from, to, func(s providers.Sighting) error {
		if s.Txn.Provider == "" {
			s.Txn.Provider = p.Provider
		}
		s.Txn.Account = p.Account
		if err := ledger.ValidateTxn(s.Txn); err != nil {
			// One record the books refuse (beyond the limits at the
			// edge) is quarantined, once however often the window is
			// pulled; the rest of the pull goes on.
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				return err
			}
			_, _, err = r.store.AddQuarantineOnce(ctx, ledger.QuarantineItem{Source: p.Provider + "_pull",
				Origin: s.Source.Channel + " " + s.Source.Ref, Field: fe.Field,
				Reason: fmt.Sprintf("transaction %s: %v", ledger.Clip(s.Txn.ID), fe.Err), Raw: s.Source.Raw,
				At: r.cfg.Clock().UTC()})
			return err
		}
		return rc.add(ctx, s)
	})
	if ferr := rc.flush(ctx); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("pull %s %s..%s after %d sightings: %w", ledger.Scope(p.Provider, p.Account),
			from.Format(time.RFC3339), to.Format(time.RFC3339), rc.n, err)
	}
	return nil
}

// pullRecorder records the sightings of a pull in batches of pullBatch,
// each with what its sightings say beyond their transactions, and reports
// the progress.
type pullRecorder struct {
	r      *Reconciler
	p      Params
	n      int
	batch  []ledger.Sighting
	extras providers.Extras
}

func (r *Reconciler) recorder(p Params) *pullRecorder {
	return &pullRecorder{r: r, p: p, batch: make([]ledger.Sighting, 0, pullBatch)}
}

// add takes a checked sighting and records the batch when it is full.
func (rc *pullRecorder) add(ctx context.Context, s providers.Sighting) error {
	rc.batch = append(rc.batch, ledger.Sighting{Txn: s.Txn, Source: s.Source})
	rc.extras.Add(s)
	if len(rc.batch) == pullBatch {
		return rc.flush(ctx)
	}
	return nil
}

// flush records what the batch holds.
func (rc *pullRecorder) flush(ctx context.Context) error {
	if len(rc.batch) == 0 {
		return nil
	}
	if err := rc.r.record(ctx, rc.batch, &rc.extras); err != nil {
		return err
	}
	rc.n += len(rc.batch)
	clear(rc.batch)
	rc.batch = rc.batch[:0]
	if rc.p.Progress != nil {
		rc.p.Progress("pull", rc.n)
	}
	return nil
}

// record stores a batch of pulled sightings and what they say beyond
// their transactions (payouts, their items) in one transaction, and
// empties extras.
func (r *Reconciler) record(ctx context.Context, batch []ledger.Sighting, extras *providers.Extras) error {
	if extras.Empty() {
		_, err := r.store.UpsertProviderTxns(ctx, batch)
		return err
	}
	defer extras.Reset()
	return r.store.InTx(ctx, func(tx ledger.Tx) error {
		if _, err := tx.UpsertProviderTxns(ctx, batch); err != nil {
			return err
		}
		_, err := extras.Record(ctx, tx, r.cfg.Clock().UTC())
		return err
	})
}

// load streams the window plus the tolerance into m with the store's bulk
// scans: intents first (those created in the span, with their provider
// references, and those manual links of the span name), then provider
// transactions. Intents and evidence of other windows come after
// (lookLate).
//
// It returns the span's disputes and dispute reversals, for lateDisputes.
func (r *Reconciler) load(ctx context.Context, p Params, m *matcher.Matcher, lo, hi time.Time) ([]ledger.ProviderTxn, error) {
	n := 0
	tick := func(stage string) {
		n++
		if p.Progress != nil && n%progressEvery == 0 {
			p.Progress(stage, n)
		}
	}
	span := ledger.IntentFilter{Provider: p.Provider, Account: p.Account, From: lo, To: hi}
	txns := ledger.TxnFilter{Provider: p.Provider, Account: p.Account, From: lo, To: hi}
	// The transactions are read from the start when the store takes a
	// second scan at once, else once the intents are in.
	var pt *prefetch[ledger.TxnRow]
	if cs, ok := r.store.(concurrentScanner); ok && cs.ConcurrentScans() {
		pt = prefetchTxns(ctx, r.store, txns, prefetchRows, prefetchBatches)
		defer pt.stop()
	}
	err := prefetchIntents(ctx, r.store, span, prefetchRows, prefetchBatches).each(func(row *ledger.IntentRow) error {
		tick("intents")
		return m.AddIntentRow(row)
	})
	if err != nil {
		return nil, err
	}
	err = prefetchRefs(ctx, r.store, span, prefetchRows, prefetchBatches).each(func(ref *refRow) error {
		return m.AddProviderRef(ref.key, ref.ref)
	})
	if err != nil {
		return nil, err
	}
	if err := r.loadManualLinks(ctx, p, m, lo, hi); err != nil {
		return nil, err
	}
	var disputes []ledger.ProviderTxn
	if pt == nil {
		pt = prefetchTxns(ctx, r.store, txns, prefetchRows, prefetchBatches)
		defer pt.stop()
	}
	err = pt.each(func(row *ledger.TxnRow) error {
		tick("transactions")
		if row.Type == ledger.TxnDispute || row.Type == ledger.TxnDisputeReversal {
			t, err := row.Txn()
			if err != nil {
				return fmt.Errorf("provider txn %q: %w", row.ID, err)
			}
			t.Provider = p.Provider
			disputes = append(disputes, t)
		}
		return m.AddTxnRow(row)
	})
	if err != nil {
		return nil, err
	}
	if p.Progress != nil {
		p.Progress("matching", n)
	}
	return disputes, nil
}

// write records everything the run learned in one transaction.
func (r *Reconciler) write(ctx context.Context, out *Outcome, res *matcher.Result, m *matcher.Matcher, sn *seen,
	others map[string]ledger.Suggestion) error {
	run := out.Run
	err := r.store.InTx(ctx, func(tx ledger.Tx) error {
		now := r.cfg.Clock().UTC()
		fs, err := dropWon(ctx, tx, res.Findings)
		if err != nil {
			return err
		}
		changes, err := tx.UpsertFindings(ctx, fs, run.ID, now)
		if err != nil {
			return err
		}
		findings := make([]ledger.Finding, len(changes))
		for i, ch := range changes {
			findings[i] = ch.Finding
		}
		resolved, err := r.resolveUnseen(ctx, tx, out, m, sn)
		if err != nil {
			return err
		}
		if _, err := tx.SuggestFor(ctx, others); err != nil {
			return err
		}
		won, err := resolveWon(ctx, tx, run, res.DisputesWon, now)
		if err != nil {
			return err
		}
		resolved = append(resolved, won...)
		settled, err := r.settleAll(ctx, tx, run.Provider, res.Settlements, now)
		if err != nil {
			return err
		}
		counts := out.Run.Counts
		counts.Resolved, counts.Settled, counts.Findings = len(resolved), len(settled), len(changes)
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
			Counts: counts, Error: pullNote(out.PullError), Now: now})
		if err != nil {
			return err
		}
		matcher.SortFindings(findings)
		out.Run, out.Findings, out.Changes, out.Resolved, out.Settled = fin, findings, changes, resolved, settled
		return nil
	})
	return err
}

// settleAll settles the unknown intents that evidence proves paid, reading
// the intents and their proofs in one go. An intent that is no longer
// unknown is left alone.
func (r *Reconciler) settleAll(ctx context.Context, tx ledger.Tx, provider string, ss []matcher.Settlement, now time.Time) ([]matcher.Settlement, error) {
	if len(ss) == 0 {
		return nil, nil
	}
	keys, ids := make([]string, len(ss)), make([]string, len(ss))
	for i, s := range ss {
		keys[i], ids[i] = s.IntentKey, s.TxnID
	}
	ins, err := tx.GetIntents(ctx, keys)
	if err != nil {
		return nil, err
	}
	proofs, err := tx.GetProviderTxns(ctx, provider, ids)
	if err != nil {
		return nil, err
	}
	intent := make(map[string]ledger.Intent, len(ins))
	for _, in := range ins {
		intent[in.Key] = in
	}
	proof := make(map[string]ledger.ProviderTxn, len(proofs))
	for _, p := range proofs {
		proof[p.ID] = p
	}
	var settled []matcher.Settlement
	for _, s := range ss {
		in, ok := intent[s.IntentKey]
		if !ok {
			return nil, ledger.Wrap("get intent", s.IntentKey, ledger.ErrNotFound)
		}
		if in.State != ledger.StateUnknown {
			continue
		}
		p, ok := proof[s.TxnID]
		if !ok {
			return nil, ledger.Wrap("get provider txn", provider+"/"+s.TxnID, ledger.ErrNotFound)
		}
		err := r.cfg.Settler.Settle(ctx, tx, in, p, now)
		if errors.Is(err, ledger.ErrConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		settled = append(settled, s)
	}
	return settled, nil
}

// fail records a run that could not complete, so that its lease does not
// hold the window until it expires.
func (r *Reconciler) fail(ctx context.Context, out *Outcome, cause error) {
	if out.Run.ID == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	_, err := r.store.FinishRun(ctx, ledger.RunFinish{ID: out.Run.ID, Owner: out.Run.Owner, State: ledger.RunFailed,
		Counts: out.Run.Counts, Error: cause.Error(), Now: r.cfg.Clock().UTC()})
	if err != nil {
		attrs := append(logAttrs(out, 0), slog.String("error", err.Error()), slog.String("cause", cause.Error()))
		r.cfg.Logger.LogAttrs(ctx, slogError, "reconcile run: record failure", attrs...)
	}
}

func pullNote(pullErr string) string {
	if pullErr == "" {
		return ""
	}
	return "pull failed, missing_at_provider not judged: " + pullErr
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
