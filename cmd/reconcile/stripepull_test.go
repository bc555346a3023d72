package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers/stripe/stripefake"
)

// TestStripePullQuarantinesObjectsBeyondTheLimits: `reconcile run
// --provider stripe` pulls from a Stripe that lists one charge with an
// amount above the maximum among good ones, on each engine. The run
// completes (no pull error, missing_at_provider judged), the good charges
// are in the books, and the bad one is quarantined under stripe_pull with
// its id, its field and its JSON.
func TestStripePullQuarantinesObjectsBeyondTheLimits(t *testing.T) {
	t.Parallel()
	day := time.Date(2024, 11, 23, 0, 0, 0, 0, time.UTC)
	for _, engine := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"postgres", func(t *testing.T) string { return dbtest.NewSchemaURL(t) }},
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "reconcile.db") }},
	} {
		t.Run(engine.name, func(t *testing.T) {
			t.Parallel()
			fake := stripefake.New(func() time.Time { return day.Add(30 * time.Hour) })
			base := fake.Start()
			t.Cleanup(fake.Close)
			for i := range 3 {
				fake.AddCharge(stripefake.Charge{Amount: int64(1000 + i), Currency: "usd", Created: day.Add(time.Duration(10+i) * time.Hour),
					Metadata: map[string]string{"intent_key": "charge:none"}})
			}
			fake.AddCharge(stripefake.Charge{ID: "ch_3Huge0B7WZ01zgkW", Amount: ledger.DefaultMaxMinor + 1, Currency: "usd",
				Created: day.Add(12*time.Hour + time.Minute)})
			dbURL := engine.url(t)
			env := []string{"RECONCILE_DATABASE_URL=" + dbURL, "RECONCILE_PROVIDERS_STRIPE_API_KEY=sk_test_pullquarantine",
				"RECONCILE_PROVIDERS_STRIPE_BASE_URL=" + base, "RECONCILE_PROVIDERS_STRIPE_PAGE_SIZE=2"}
			if code, out, errOut := cliEnv(t, env, "migrate"); code != 0 {
				t.Fatalf("migrate: %d %s %s", code, out, errOut)
			}
			code, out, errOut := cliEnv(t, env, "run", "--provider", "stripe", "--from", "2024-11-23", "--format", "json")
			if code != 0 {
				t.Fatalf("run: %d\n%s\n%s", code, out, errOut)
			}
			var rep struct {
				Summary struct {
					Transactions int `json:"transactions"`
				} `json:"summary"`
				PullError string `json:"pull_error"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("run output: %v\n%s", err, out)
			}
			// The 3 good charges and their 3 Stripe fees (balance
			// transactions are pulled by default).
			if rep.PullError != "" || rep.Summary.Transactions != 6 {
				t.Errorf("run: pull error %q, %d transactions, want none and the 3 good charges with their fees\n%s", rep.PullError, rep.Summary.Transactions, out)
			}
			code, out, errOut = cliEnv(t, env, "quarantine", "list", "--format", "json")
			if code != 0 {
				t.Fatalf("quarantine list: %d %s %s", code, out, errOut)
			}
			items := quarantined(t, env)
			var charge bool
			for _, q := range items {
				// The charge, and its balance transaction when those are
				// pulled: each with its id, the field and its JSON.
				if q.Source != "stripe_pull" || q.Field != "amount" || !strings.Contains(q.Reason, "above the maximum") ||
					!strings.Contains(q.Raw, "ch_3Huge0B7WZ01zgkW") {
					t.Errorf("quarantined: %+v", q)
				}
				charge = charge || q.Origin == "stripe /v1/charges ch_3Huge0B7WZ01zgkW"
			}
			if !charge {
				t.Errorf("the charge is not quarantined: %+v", items)
			}

			// Pulling the window again meets the same objects: the
			// quarantine keeps each once.
			if code, out, errOut := cliEnv(t, env, "run", "--provider", "stripe", "--from", "2024-11-23", "--no-pull=false"); code != 0 {
				t.Fatalf("second run: %d\n%s\n%s", code, out, errOut)
			}
			if again := quarantined(t, env); len(again) != len(items) {
				t.Errorf("after a second pull: %d items, was %d: %+v", len(again), len(items), again)
			}
		})
	}
}

type quarantineEntry struct {
	Source string `json:"source"`
	Origin string `json:"origin"`
	Field  string `json:"field"`
	Reason string `json:"reason"`
	Raw    string `json:"raw"`
	Status string `json:"status"`
}

// quarantined lists the quarantine with `reconcile quarantine list`.
func quarantined(t *testing.T, env []string) []quarantineEntry {
	t.Helper()
	code, out, errOut := cliEnv(t, env, "quarantine", "list", "--format", "json")
	if code != 0 {
		t.Fatalf("quarantine list: %d %s %s", code, out, errOut)
	}
	var list struct {
		Quarantine []quarantineEntry `json:"quarantine"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("quarantine list: %v\n%s", err, out)
	}
	return list.Quarantine
}
