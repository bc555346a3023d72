package reconciler_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var date = time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type bundle struct {
	store ledger.Store
	day   *scenario.Day
	clock *clock
	rec   *reconciler.Reconciler
}

func setup(t *testing.T, newStore func(testing.TB) ledger.Store, day *scenario.Day, cfg reconciler.Config) *bundle {
	t.Helper()
	s := newStore(t)
	if err := day.Load(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: day.Now}
	cfg.Clock = c.Now
	cfg.Owner = "test"
	cfg.Grace = map[string]time.Duration{day.Provider: day.Grace}
	return &bundle{store: s, day: day, clock: c, rec: reconciler.New(s, cfg)}
}

func (b *bundle) run(t *testing.T, p reconciler.Params) *reconciler.Outcome {
	t.Helper()
	if p.Provider == "" {
		p.Provider, p.From, p.To = b.day.Provider, b.day.From, b.day.To
	}
	out, err := b.rec.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func days() []*scenario.Day {
	return []*scenario.Day{scenario.Mpesa(1, date, 120), scenario.Stripe(2, date, 120)}
}

func TestScenarioDays(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		for _, day := range days() {
			t.Run(e.Name+"/"+day.Name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				b := setup(t, e.New, day, reconciler.Config{})
				out := b.run(t, reconciler.Params{NoPull: true})
				if got := scenario.Of(out.Findings); !slices.EqualFunc(got, day.Expected, eqExpected) {
					t.Fatalf("findings:\n%s\nwant:\n%s", lines(got), lines(day.Expected))
				}
				var settled []string
				for _, s := range out.Settled {
					settled = append(settled, s.IntentKey)
				}
				if !slices.Equal(settled, day.Settled) || out.Run.Counts.Settled != len(day.Settled) {
					t.Fatalf("settled %v (count %d), want %v", settled, out.Run.Counts.Settled, day.Settled)
				}
				for _, k := range day.Settled {
					if in, err := b.store.GetIntent(ctx, k); err != nil || in.State != ledger.StateSucceeded {
						t.Fatalf("settled intent %s = %s, %v", k, in.State, err)
					}
				}
				c := out.Run.Counts
				if out.Run.State != ledger.RunFinished || c.Findings != len(day.Expected) || c.New != len(day.Expected) ||
					c.Intents == 0 || c.Transactions == 0 || c.Matched == 0 || c.Matched > c.Transactions {
					t.Fatalf("run = %+v", out.Run)
				}
				for _, f := range out.Findings {
					if f.Status != ledger.FindingOpen || f.FirstRunID != out.Run.ID || f.Detail == "" || f.Severity == "" {
						t.Fatalf("stored finding = %+v", f)
					}
					if strings.Contains(f.Counterparty, "2547") && strings.Count(f.Counterparty, "*") < 4 {
						t.Fatalf("counterparty not masked: %q", f.Counterparty)
					}
				}

				// Running the window again changes nothing.
				ids := findingIDs(out.Findings)
				for i := range 3 {
					b.clock.Add(time.Minute)
					again := b.run(t, reconciler.Params{NoPull: true})
					if again.Run.ID != out.Run.ID || again.Run.Attempt != i+2 || again.Run.Counts.New != 0 ||
						len(again.Resolved) != 0 || !slices.Equal(findingIDs(again.Findings), ids) {
						t.Fatalf("re-run %d = %+v, resolved %v", i+1, again.Run, again.Resolved)
					}
					for _, ch := range again.Changes {
						if ch.New || ch.Reopened || ch.Escalated {
							t.Fatalf("re-run %d changed %+v", i+1, ch)
						}
					}
				}
				all, err := b.store.ListFindings(ctx, ledger.FindingFilter{Provider: day.Provider})
				if err != nil || len(all) != len(day.Expected) {
					t.Fatalf("stored findings %d, %v", len(all), err)
				}

				// The late evidence remedies one finding: the next run
				// resolves it and only it.
				if err := scenario.Deliver(ctx, b.store, day.Late); err != nil {
					t.Fatal(err)
				}
				b.clock.Add(time.Minute)
				fixed := b.run(t, reconciler.Params{NoPull: true})
				if len(fixed.Resolved) != 1 || !eqExpected(scenario.Of(fixed.Resolved)[0], day.Remedied) ||
					fixed.Resolved[0].ResolvedBy != ledger.ResolvedByRun || fixed.Run.Counts.Resolved != 1 {
					t.Fatalf("resolved %v, want %v", scenario.Of(fixed.Resolved), day.Remedied)
				}
				if len(fixed.Findings) != len(day.Expected)-1 {
					t.Fatalf("findings after the fix: %v\nresolved %v", scenario.Of(fixed.Findings), scenario.Of(fixed.Resolved))
				}
			})
		}
	}
}

func eqExpected(a, b scenario.Expected) bool {
	return a.Kind == b.Kind && a.IntentKey == b.IntentKey && slices.Equal(a.TxnIDs, b.TxnIDs)
}

func lines(es []scenario.Expected) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

func findingIDs(fs []ledger.Finding) []string {
	ids := make([]string, len(fs))
	for i, f := range fs {
		ids[i] = f.ID
	}
	slices.Sort(ids)
	return ids
}

func TestDryRunWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := scenario.Mpesa(3, date, 40)
	b := setup(t, dbtest.SQLite, day, reconciler.Config{})
	out := b.run(t, reconciler.Params{DryRun: true})
	if !out.DryRun || out.Run.ID != 0 || !slices.EqualFunc(scenario.Of(out.Findings), day.Expected, eqExpected) ||
		len(out.Settled) != len(day.Settled) || out.OpenFindings() != len(day.Expected) {
		t.Fatalf("dry run = %+v", out)
	}
	runs, _ := b.store.ListRuns(ctx, "", 10)
	fs, _ := b.store.ListFindings(ctx, ledger.FindingFilter{})
	in, _ := b.store.GetIntent(ctx, day.Settled[0])
	if len(runs) != 0 || len(fs) != 0 || in.State != ledger.StateUnknown {
		t.Fatalf("dry run wrote: %d runs, %d findings, settled intent %s", len(runs), len(fs), in.State)
	}
}

func TestBusyWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := scenario.Stripe(4, date, 10)
	b := setup(t, dbtest.Postgres, day, reconciler.Config{})
	if _, err := b.store.ClaimRun(ctx, ledger.RunClaim{Provider: day.Provider, From: day.From, To: day.To,
		Owner: "other", Lease: time.Hour, Now: day.Now}); err != nil {
		t.Fatal(err)
	}
	_, err := b.rec.Run(ctx, reconciler.Params{Provider: day.Provider, From: day.From, To: day.To})
	if !errors.Is(err, reconciler.ErrBusy) {
		t.Fatalf("run of a held window: %v", err)
	}
	// A dry run needs no claim.
	if _, err := b.rec.Run(ctx, reconciler.Params{Provider: day.Provider, From: day.From, To: day.To, DryRun: true}); err != nil {
		t.Fatal(err)
	}
}

// puller emits sightings, then fails with err when set.
type puller struct {
	sightings  []providers.Sighting
	err        error
	from, to   time.Time
	calledWith int
}

func (p *puller) Pull(_ context.Context, from, to time.Time, emit func(providers.Sighting) error) error {
	p.from, p.to = from, to
	p.calledWith++
	for _, s := range p.sightings {
		if err := emit(s); err != nil {
			return err
		}
	}
	return p.err
}

func TestPull(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			day := scenario.Mpesa(5, date, 30)
			p := &puller{sightings: day.Late}
			b := setup(t, e.New, day, reconciler.Config{Pullers: map[string]providers.Puller{"mpesa": p}})
			out := b.run(t, reconciler.Params{})
			want := slices.DeleteFunc(slices.Clone(day.Expected), func(x scenario.Expected) bool { return eqExpected(x, day.Remedied) })
			if !slices.EqualFunc(scenario.Of(out.Findings), want, eqExpected) || out.PullError != "" {
				t.Fatalf("findings after pull: %v (pull error %q)", scenario.Of(out.Findings), out.PullError)
			}
			if !p.from.Equal(day.From.Add(-2*time.Hour)) || !p.to.Equal(day.Now) {
				t.Fatalf("pulled %s..%s", p.from, p.to)
			}
			// --no-pull does not call it.
			b.clock.Add(time.Minute)
			b.run(t, reconciler.Params{NoPull: true})
			if p.calledWith != 1 {
				t.Fatalf("puller called %d times", p.calledWith)
			}
		})
	}
}

func TestPullFailureIsReported(t *testing.T) {
	t.Parallel()
	day := scenario.Mpesa(6, date, 30)
	p := &puller{err: errors.New("mpesa: retryable error 500.003.02: Spike Arrest Violation")}
	b := setup(t, dbtest.SQLite, day, reconciler.Config{Pullers: map[string]providers.Puller{"mpesa": p}})
	out := b.run(t, reconciler.Params{})
	if !strings.Contains(out.PullError, "Spike Arrest") || !strings.Contains(out.Run.Error, "missing_at_provider not judged") {
		t.Fatalf("pull error %q, run error %q", out.PullError, out.Run.Error)
	}
	for _, f := range out.Findings {
		if f.Kind == ledger.KindMissingAtProvider {
			t.Fatalf("missing_at_provider raised on incomplete evidence: %+v", f)
		}
	}
	if len(out.Findings) != len(day.Expected)-1 {
		t.Fatalf("findings %v", scenario.Of(out.Findings))
	}
}

// TestPullFailureKeepsMissingFindings: a run whose pull failed cannot tell
// that a missing charge turned up, so it leaves open missing_at_provider
// findings as they are instead of resolving them.
func TestPullFailureKeepsMissingFindings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := scenario.Mpesa(6, date, 30)
	p := &puller{}
	b := setup(t, dbtest.SQLite, day, reconciler.Config{Pullers: map[string]providers.Puller{"mpesa": p}})
	out := b.run(t, reconciler.Params{})
	var missing string
	for _, f := range out.Findings {
		if f.Kind == ledger.KindMissingAtProvider {
			missing = f.ID
		}
	}
	if missing == "" || out.PullError != "" {
		t.Fatalf("no missing_at_provider to keep: %v (%q)", scenario.Of(out.Findings), out.PullError)
	}
	p.err = errors.New("mpesa: retryable error 500.003.02: Spike Arrest Violation")
	b.clock.Add(time.Minute)
	out = b.run(t, reconciler.Params{})
	f, err := b.store.GetFinding(ctx, missing)
	if err != nil || f.Status != ledger.FindingOpen || len(out.Resolved) != 0 {
		t.Fatalf("after a failed pull the missing finding is %+v (%v); resolved %v", f.Status, err, scenario.Of(out.Resolved))
	}
}

func TestHook(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			day := scenario.Stripe(7, date, 20)
			var calls []int
			fail := true
			hook := func(ctx context.Context, tx ledger.Tx, run ledger.Run, changes []ledger.FindingChange, resolved []ledger.Finding) error {
				calls = append(calls, len(changes))
				// The hook writes in the run's transaction.
				if _, _, err := tx.RecordAlert(ctx, ledger.Alert{Subject: run.Key, Reason: "run", RunID: run.ID,
					State: ledger.AlertPending, CreatedAt: run.StartedAt}); err != nil {
					return err
				}
				if fail {
					return errors.New("slack queue unavailable")
				}
				return nil
			}
			b := setup(t, e.New, day, reconciler.Config{OnFindings: hook})
			_, err := b.rec.Run(ctx, reconciler.Params{Provider: day.Provider, From: day.From, To: day.To})
			if err == nil || !strings.Contains(err.Error(), "slack queue unavailable") {
				t.Fatalf("run with a failing hook: %v", err)
			}
			fs, _ := b.store.ListFindings(ctx, ledger.FindingFilter{})
			alerts, _ := b.store.ListAlerts(ctx, 0, 10)
			runs, _ := b.store.ListRuns(ctx, day.Provider, 10)
			if len(fs) != 0 || len(alerts) != 0 || len(runs) != 1 || runs[0].State != ledger.RunFailed {
				t.Fatalf("rolled back run left %d findings, %d alerts, runs %+v", len(fs), len(alerts), runs)
			}
			fail = false
			b.clock.Add(time.Minute)
			out := b.run(t, reconciler.Params{})
			alerts, _ = b.store.ListAlerts(ctx, 0, 10)
			if len(alerts) != 1 || !slices.Equal(calls, []int{len(day.Expected), len(day.Expected)}) || len(out.Changes) != len(day.Expected) {
				t.Fatalf("hook calls %v, alerts %d", calls, len(alerts))
			}
		})
	}
}

func TestFindingsWorkflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	day := scenario.Mpesa(8, date, 20)
	b := setup(t, dbtest.SQLite, day, reconciler.Config{})
	out := b.run(t, reconciler.Params{})
	id := out.Findings[0].ID
	f, err := b.rec.Acknowledge(ctx, id, "looking into it")
	if err != nil || f.Status != ledger.FindingAcknowledged {
		t.Fatalf("ack = %+v, %v", f, err)
	}
	if _, err := b.rec.Resolve(ctx, id, " "); err == nil {
		t.Fatal("resolve without a note accepted")
	}
	if f, err = b.rec.Resolve(ctx, id, "refunded by hand"); err != nil || f.Status != ledger.FindingResolved || f.ResolvedBy != ledger.ResolvedByPerson {
		t.Fatalf("resolve = %+v, %v", f, err)
	}
	if _, err := b.rec.Acknowledge(ctx, "f_nope", ""); !errors.Is(err, ledger.ErrNotFound) {
		t.Fatalf("ack of a missing finding: %v", err)
	}
	// A person's resolution holds on the next run; the outcome no longer
	// counts it as open.
	b.clock.Add(time.Minute)
	again := b.run(t, reconciler.Params{})
	if again.OpenFindings() != len(day.Expected)-1 {
		t.Fatalf("open findings %d", again.OpenFindings())
	}
	open, err := b.rec.ListFindings(ctx, ledger.FindingFilter{Statuses: []ledger.FindingStatus{ledger.FindingOpen}})
	if err != nil || len(open) != len(day.Expected)-1 {
		t.Fatalf("open = %d, %v", len(open), err)
	}
}

func TestWindowValidation(t *testing.T) {
	t.Parallel()
	rec := reconciler.New(dbtest.SQLite(t), reconciler.Config{})
	for _, p := range []reconciler.Params{{From: date, To: date.Add(time.Hour)}, {Provider: "mpesa", To: date},
		{Provider: "mpesa", From: date, To: date}} {
		if _, err := rec.Run(context.Background(), p); err == nil {
			t.Fatalf("params %+v accepted", p)
		}
	}
	_ = matcher.Options{}
}

// blockingPuller holds a run in its pull until released or cancelled.
type blockingPuller struct {
	started chan struct{}
	release chan struct{}
}

func (p *blockingPuller) Pull(ctx context.Context, _, _ time.Time, _ func(providers.Sighting) error) error {
	close(p.started)
	select {
	case <-p.release:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// TestLongRunKeepsItsWindow: a run that works past its lease renews it, so
// another process cannot take the window over; a run whose window is taken
// over anyway stops with ErrLeaseLost and writes nothing.
func TestLongRunKeepsItsWindow(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			day := scenario.Mpesa(8, date, 20)
			lease := 300 * time.Millisecond
			p := &blockingPuller{started: make(chan struct{}), release: make(chan struct{})}
			b := setup(t, e.New, day, reconciler.Config{Lease: lease, Pullers: map[string]providers.Puller{"mpesa": p}})
			params := reconciler.Params{Provider: day.Provider, From: day.From, To: day.To}
			type result struct {
				out *reconciler.Outcome
				err error
			}
			first := func() chan result {
				ch := make(chan result, 1)
				go func() {
					out, err := b.rec.Run(ctx, params)
					ch <- result{out, err}
				}()
				return ch
			}
			waitRenewedPast := func(at time.Time) ledger.Run {
				t.Helper()
				var run ledger.Run
				poll.WaitErr(t, 10*time.Second, "the lease to be renewed past "+at.String(), func() (bool, error) {
					var err error
					run, err = b.store.GetRunByKey(ctx, ledger.RunKey(day.Provider, day.From, day.To))
					return err == nil && run.LeaseExpiresAt.After(at), err
				})
				return run
			}

			done := first()
			<-p.started
			// Well past the first lease: only a renewal keeps the window.
			b.clock.Add(10 * lease)
			waitRenewedPast(day.Now.Add(10 * lease))
			other := reconciler.New(b.store, reconciler.Config{Owner: "other", Clock: b.clock.Now, Lease: lease})
			if _, err := other.Run(ctx, params); !errors.Is(err, reconciler.ErrBusy) {
				t.Fatalf("second process ran a window whose run is alive: %v", err)
			}
			close(p.release)
			res := <-done
			if res.err != nil || res.out.Run.State != ledger.RunFinished {
				t.Fatalf("long run: %+v, %v", res.out, res.err)
			}

			// Taken over behind its back (its lease ran out while it
			// could not renew): the run stops and writes nothing.
			before := lastSeen(t, b.store)
			if before.IsZero() {
				t.Fatal("the first run wrote no findings")
			}
			p.started, p.release = make(chan struct{}), make(chan struct{})
			b.clock.Add(time.Minute)
			done = first()
			<-p.started
			if _, err := b.store.ClaimRun(ctx, ledger.RunClaim{Provider: day.Provider, From: day.From, To: day.To,
				Owner: "thief", Lease: time.Hour, Now: b.clock.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			select {
			case res = <-done:
			case <-time.After(15 * time.Second):
				close(p.release)
				<-done
				t.Fatal("the run did not stop after its window was taken over")
			}
			if !errors.Is(res.err, reconciler.ErrLeaseLost) {
				t.Fatalf("run taken over: %v", res.err)
			}
			run, err := b.store.GetRunByKey(ctx, ledger.RunKey(day.Provider, day.From, day.To))
			if err != nil || run.Owner != "thief" || run.State != ledger.RunRunning {
				t.Fatalf("run after the takeover: %+v, %v", run, err)
			}
			if after := lastSeen(t, b.store); !after.Equal(before) {
				t.Fatalf("the run that lost its window wrote findings: last seen %s -> %s", before, after)
			}
		})
	}
}

// lastSeen is when any finding was last seen.
func lastSeen(t *testing.T, s ledger.Store) time.Time {
	t.Helper()
	fs, err := s.ListFindings(context.Background(), ledger.FindingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for _, f := range fs {
		if f.LastSeenAt.After(last) {
			last = f.LastSeenAt
		}
	}
	return last
}
