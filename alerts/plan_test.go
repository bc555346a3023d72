package alerts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// reconciler drives Plan the way a reconcile run does: claim the window,
// upsert what it sees and resolve what it no longer sees in one
// transaction, plan there, finish the run.
type reconciler struct {
	t       *testing.T
	store   ledger.Store
	planner *Planner
	clock   *fakeClock
}

func newReconciler(t *testing.T, store ledger.Store, cfg Config) *reconciler {
	clock := newFakeClock(t0)
	p, err := NewPlanner(cfg, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	return &reconciler{t: t, store: store, planner: p, clock: clock}
}

// run reconciles the fixture window seeing findings, an hour after the
// previous run, and returns the alerts it planned.
func (r *reconciler) run(findings ...ledger.Finding) []ledger.Alert {
	r.t.Helper()
	ctx := context.Background()
	r.clock.Advance(time.Hour)
	now := r.clock.Now()
	run, err := r.store.ClaimRun(ctx, ledger.RunClaim{Provider: "mpesa", From: winFrom, To: winTo, Owner: "test",
		Lease: time.Minute, Now: now})
	if err != nil {
		r.t.Fatal(err)
	}
	var planned []ledger.Alert
	err = r.store.InTx(ctx, func(tx ledger.Tx) error {
		var changes []ledger.FindingChange
		for _, f := range findings {
			ch, err := tx.UpsertFinding(ctx, f, run.ID, now)
			if err != nil {
				return err
			}
			changes = append(changes, ch)
		}
		resolved, err := tx.ResolveUnseen(ctx, ledger.ResolveUnseenParams{Provider: "mpesa", From: winFrom, To: winTo,
			SeenSince: now, Note: "no longer seen", Now: now})
		if err != nil {
			return err
		}
		planned, err = r.planner.Plan(ctx, tx, run, changes, resolved)
		return err
	})
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.store.FinishRun(ctx, ledger.RunFinish{ID: run.ID, Owner: "test", State: ledger.RunFinished,
		Counts: ledger.RunCounts{Findings: len(findings)}, Now: now}); err != nil {
		r.t.Fatal(err)
	}
	return planned
}

// reasons renders planned alerts as "subject-tag reason" for comparison.
func reasons(alerts []ledger.Alert, names map[string]string) []string {
	var out []string
	for _, a := range alerts {
		subject := names[a.Subject]
		if subject == "" {
			subject = a.Subject
		}
		r := a.Reason
		if strings.HasPrefix(r, "summary:") {
			r = "summary"
		}
		out = append(out, subject+" "+r+" -> "+a.Channel)
	}
	return out
}

// TestPlanLifecycle re-runs one window through the life of its findings:
// unchanged re-runs plan nothing, growth plans one escalation, resolution
// one follow-up, a comeback one reopening; summaries follow the open set.
func TestPlanLifecycle(t *testing.T) {
	t.Parallel()
	for _, engine := range dbtest.Engines() {
		t.Run(engine.Name, func(t *testing.T) {
			t.Parallel()
			store := engine.New(t)
			r := newReconciler(t, store, testConfig(ModeBot, nil))
			dup, failed, unknown := fixtureFindings(t)
			runKey := ledger.RunKey("mpesa", winFrom, winTo)
			names := map[string]string{dup.ID: "dup", failed.ID: "failed", unknown.ID: "unknown", runKey: "run"}

			steps := []struct {
				name string
				seen []ledger.Finding
				want []string
			}{
				{"first run", []ledger.Finding{dup, failed, unknown}, []string{
					"failed opened -> C0URGENT", "dup opened -> C0URGENT", "run summary -> C0FINOPS"}},
				{"re-run 1", []ledger.Finding{dup, failed, unknown}, nil},
				{"re-run 2", []ledger.Finding{unknown, failed, dup}, nil},
				{"re-run 3", []ledger.Finding{dup, failed, unknown}, nil},
				{"dup grows", []ledger.Finding{grow(t, dup, "3000.00"), failed, unknown}, []string{
					"dup escalated:high:KES:3000.00 -> C0URGENT", "run summary -> C0FINOPS"}},
				{"grown again seen", []ledger.Finding{grow(t, dup, "3000.00"), failed, unknown}, nil},
				{"medium grows: summary only", []ledger.Finding{grow(t, dup, "3000.00"), failed, grow(t, unknown, "900.00")}, []string{
					"run summary -> C0FINOPS"}},
				{"failed resolved", []ledger.Finding{grow(t, dup, "3000.00"), grow(t, unknown, "900.00")}, []string{
					"failed resolved:" + t0.Add(8*time.Hour).Format(time.RFC3339Nano) + " -> C0URGENT", "run summary -> C0FINOPS"}},
				{"still resolved", []ledger.Finding{grow(t, dup, "3000.00"), grow(t, unknown, "900.00")}, nil},
				{"failed comes back", []ledger.Finding{grow(t, dup, "3000.00"), failed, grow(t, unknown, "900.00")}, []string{
					"failed reopened:" + t0.Add(8*time.Hour).Format(time.RFC3339Nano) + " -> C0URGENT", "run summary -> C0FINOPS"}},
				{"comeback re-run", []ledger.Finding{grow(t, dup, "3000.00"), failed, grow(t, unknown, "900.00")}, nil},
				{"all clear", nil, []string{
					"dup resolved:" + t0.Add(12*time.Hour).Format(time.RFC3339Nano) + " -> C0URGENT",
					"failed resolved:" + t0.Add(12*time.Hour).Format(time.RFC3339Nano) + " -> C0URGENT",
					"run summary -> C0FINOPS"}},
				{"clean re-run", nil, nil},
			}
			var total int
			for _, s := range steps {
				got := reasons(r.run(s.seen...), names)
				if !slices.Equal(got, s.want) {
					t.Errorf("%s: planned\n  %q\nwant\n  %q", s.name, got, s.want)
				}
				total += len(got)
			}
			recorded, err := store.ListAlerts(context.Background(), 0, 0)
			if err != nil || len(recorded) != total {
				t.Fatalf("recorded %d alerts, planned %d: %v", len(recorded), total, err)
			}
		})
	}
}

func grow(t *testing.T, f ledger.Finding, atRisk string) ledger.Finding {
	f.AtRisk = kes(t, atRisk)
	return f
}

// TestPlanRolledBack checks the outbox: alerts planned in a transaction
// that rolls back are not recorded, and the next run plans them again.
func TestPlanRolledBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.SQLite(t)
	r := newReconciler(t, store, testConfig(ModeBot, nil))
	dup, _, _ := fixtureFindings(t)
	run, err := store.ClaimRun(ctx, ledger.RunClaim{Provider: "mpesa", From: winFrom, To: winTo, Owner: "test", Lease: time.Minute, Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("crash before commit")
	err = store.InTx(ctx, func(tx ledger.Tx) error {
		ch, err := tx.UpsertFinding(ctx, dup, run.ID, t0)
		if err != nil {
			return err
		}
		planned, err := r.planner.Plan(ctx, tx, run, []ledger.FindingChange{ch}, nil)
		if err != nil || len(planned) != 2 {
			t.Fatalf("planned %d, %v", len(planned), err)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if got, _ := store.ListAlerts(ctx, 0, 0); len(got) != 0 {
		t.Fatalf("rolled back plan left %d alerts", len(got))
	}
	if _, err := store.FinishRun(ctx, ledger.RunFinish{ID: run.ID, Owner: "test", State: ledger.RunFailed, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if got := r.run(dup); len(got) != 2 {
		t.Fatalf("next run planned %d alerts, want opened + summary", len(got))
	}
}

// TestPlanThresholds checks which findings get messages of their own.
func TestPlanThresholds(t *testing.T) {
	t.Parallel()
	dup, failed, unknown := fixtureFindings(t)
	small := grow(t, dup, "999.99")
	usd := dup
	usd.AtRisk.Currency = "USD"
	noRisk := failed
	noRisk.AtRisk = dup.AtRisk
	noRisk.AtRisk.Currency = ""
	cfg := testConfig(ModeBot, nil)
	for _, c := range []struct {
		name string
		f    ledger.Finding
		want bool
	}{
		{"high above floor", dup, true},
		{"high at floor", grow(t, dup, "1000.00"), true},
		{"high below floor", small, false},
		{"currency without floor", usd, true},
		{"no amount at risk", noRisk, true},
		{"medium", unknown, false},
	} {
		if got := cfg.immediate(c.f); got != c.want {
			t.Errorf("%s: immediate = %v, want %v", c.name, got, c.want)
		}
	}
	cfg.ImmediateSeverity = ledger.SeverityMedium
	if !cfg.immediate(grow(t, unknown, "1000.00")) || cfg.immediate(unknown) {
		t.Error("medium findings with ImmediateSeverity medium: the amount floor still applies")
	}
}

// TestPlanResolutionByHand plans the follow-up of a finding a person
// resolved, once, as the findings service's announcer does.
func TestPlanResolutionByHand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.SQLite(t)
	r := newReconciler(t, store, testConfig(ModeBot, nil))
	dup, _, unknown := fixtureFindings(t)
	r.run(dup, unknown)
	for _, f := range []ledger.Finding{dup, unknown} {
		if _, err := store.UpdateFinding(ctx, ledger.FindingUpdate{ID: f.ID, To: ledger.FindingResolved, Note: "refunded", Now: t0.Add(3 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []int{1, 0} {
		resolved, err := store.GetFinding(ctx, dup.ID)
		if err != nil {
			t.Fatal(err)
		}
		// Through the findings service's announcer: planned and handed to
		// enqueue in the deciding transaction.
		var got []ledger.Alert
		announce, _ := r.planner.Announcers(func(_ context.Context, _ ledger.Tx, as []ledger.Alert) error {
			got = as
			return nil
		})
		err = store.InTx(ctx, func(tx ledger.Tx) error { return announce(ctx, tx, resolved) })
		if err != nil || len(got) != want {
			t.Fatalf("try %d: planned %d, want %d: %v", i, len(got), want, err)
		}
	}
	// The medium finding was never announced on its own: no follow-up.
	quiet, _ := store.GetFinding(ctx, unknown.ID)
	got, err := r.planner.PlanResolution(ctx, store, quiet)
	if err != nil || len(got) != 0 {
		t.Fatalf("follow-up of an unannounced finding: %d, %v", len(got), err)
	}
	// An open finding has no resolution to announce.
	if _, err := r.planner.PlanResolution(ctx, store, dup); err == nil {
		t.Fatal("resolution of an open finding planned")
	}
}

// TestPlanCleanWindow: a clean window is quiet unless asked to speak.
func TestPlanCleanWindow(t *testing.T) {
	t.Parallel()
	for _, when := range []bool{false, true} {
		cfg := testConfig(ModeBot, nil)
		cfg.SummaryWhenClean = when
		r := newReconciler(t, dbtest.SQLite(t), cfg)
		first, second := r.run(), r.run()
		if want := map[bool]int{false: 0, true: 1}[when]; len(first) != want || len(second) != 0 {
			t.Errorf("SummaryWhenClean %v: planned %d then %d", when, len(first), len(second))
		}
	}
}

func TestReasonRoundTrip(t *testing.T) {
	for _, r := range []reason{
		{Kind: reasonOpened},
		{Kind: reasonEscalated, Severity: ledger.SeverityHigh, AtRisk: kes(t, "3000.00")},
		{Kind: reasonEscalated, Severity: ledger.SeverityMedium},
		{Kind: reasonReopened, At: t0},
		{Kind: reasonResolved, At: t0.Add(time.Nanosecond)},
		{Kind: reasonSummary, Fingerprint: "3f9a0c1d2e4b5a69", Attempt: 12},
	} {
		got, err := parseReason(r.String())
		if err != nil || got.String() != r.String() {
			t.Errorf("%q -> %+v, %v", r.String(), got, err)
		}
	}
	for _, bad := range []string{"", "opened:x", "escalated", "escalated:urgent", "escalated:high:KES:1.234",
		"reopened:yesterday", "summary:abc", "summary:abc:7", "bogus"} {
		if _, err := parseReason(bad); err == nil {
			t.Errorf("parseReason(%q) accepted", bad)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	ok := testConfig(ModeBot, nil)
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	secret := "https://hooks.slack.com/services/T1/B2/verysecretvalue"
	for _, c := range []struct {
		name  string
		edit  func(*Config)
		field string
	}{
		{"no mode", func(c *Config) { c.Mode = "" }, "mode"},
		{"no token", func(c *Config) { c.BotToken = "" }, "bot_token"},
		{"channel name in bot mode", func(c *Config) { c.Channel = "#finance" }, "channel"},
		{"webhook without URLs", func(c *Config) { c.Mode = ModeWebhook }, "webhooks"},
		{"webhook channel without URL", func(c *Config) {
			c.Mode, c.Webhooks = ModeWebhook, map[string]string{"C0FINOPS": secret}
		}, "channel"},
		{"bad severity", func(c *Config) { c.ImmediateSeverity = "urgent" }, "immediate_severity"},
		{"findings URL with query", func(c *Config) { c.FindingsURL = "https://x.example/f?token=abc" }, "findings_url"},
		{"findings URL with user", func(c *Config) { c.FindingsURL = "https://u:p@x.example/f" }, "findings_url"},
		{"summary top", func(c *Config) { c.SummaryTop = 11 }, "summary_top"},
		{"twice the same floor", func(c *Config) { c.ImmediateMinAtRisk = append(c.ImmediateMinAtRisk, kes(t, "5.00")) }, "immediate_min_at_risk"},
	} {
		cfg := testConfig(ModeBot, nil)
		c.edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), "field "+c.field) {
			t.Errorf("%s: %v", c.name, err)
		}
		if err != nil && strings.Contains(err.Error(), "verysecretvalue") {
			t.Errorf("%s: error shows a secret: %v", c.name, err)
		}
	}
	cfg := testConfig(ModeWebhook, map[string]string{"C0FINOPS": secret, "C0URGENT": secret})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{cfg.String(), ok.String()} {
		if strings.Contains(s, "verysecret") || strings.Contains(s, "TESTTOKEN") {
			t.Errorf("String shows a secret: %s", s)
		}
	}
	if a, err := ParseAmount("KES 1000"); err != nil || a.String() != "KES 1000.00" {
		t.Errorf("ParseAmount = %v, %v", a, err)
	}
	for _, bad := range []string{"1000", "KES 10.001", "XXX 5", "KES 1,000"} {
		if _, err := ParseAmount(bad); err == nil {
			t.Errorf("ParseAmount(%q) accepted", bad)
		}
	}
}
