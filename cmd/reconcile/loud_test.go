package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cliIn runs one command line in a child process whose working directory is
// dir, with no RECONCILE_* variables but env.
func cliIn(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "RECONCILE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(append(cmd.Env, mainEnv+"=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// migrated returns the URL of a fresh, migrated SQLite file.
func migrated(t *testing.T) string {
	t.Helper()
	url := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	if code, _, errOut := cli(t, "migrate", "--database-url", url); code != 0 {
		t.Fatalf("migrate: %s", errOut)
	}
	return url
}

// TestDefaultDatabaseIsNamed: a command on the default database says which
// one it uses; one given a database says nothing about it.
func TestDefaultDatabaseIsNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, errOut := cliIn(t, dir, nil, "migrate")
	if code != 0 || !strings.Contains(errOut, "using the default database sqlite:reconcile.db") {
		t.Fatalf("migrate: %d %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "reconcile.db")); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cliIn(t, dir, nil, "findings", "list")
	if code != 0 || !strings.Contains(errOut, "using the default database sqlite:reconcile.db") {
		t.Fatalf("findings list: %d %q", code, errOut)
	}
	code, _, errOut = cliIn(t, dir, []string{"RECONCILE_DATABASE_URL=sqlite:reconcile.db"}, "findings", "list")
	if code != 0 || strings.Contains(errOut, "default database") {
		t.Fatalf("chosen by the environment: %d %q", code, errOut)
	}
}

// TestReadOnlyCommandsNeverCreateADatabase: listing and previewing in a
// folder without a database fails, saying how to create one, and leaves no
// file behind.
func TestReadOnlyCommandsNeverCreateADatabase(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"findings", "list"},
		{"findings", "ack", "f_0123456789abcdef0123"},
		{"quarantine", "list"},
		{"jobs", "list"},
		{"jobs", "retry", "1"},
		{"alerts", "preview", "--run", "1"},
		{"run", "--provider", "mpesa", "--from", "2026-03-14", "--dry-run"},
	} {
		path := filepath.Join(t.TempDir(), "r.db")
		code, out, errOut := cli(t, append(args, "--database-url", "sqlite:"+path)...)
		if code != 1 || !strings.Contains(errOut, "does not exist") || !strings.Contains(errOut, "reconcile migrate") {
			t.Errorf("%v: %d %q %q, want an error saying to run reconcile migrate", args, code, out, errOut)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v created %s", args, path)
		}
	}
}

// TestRunWithoutPullableEvidence: Stripe's evidence is pulled; without an
// API key a run is an error naming the setting, unless --no-pull (or
// --dry-run, which never pulls).
func TestRunWithoutPullableEvidence(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	code, _, errOut := cli(t, "run", "--provider", "stripe", "--from", "2026-03-14", "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "RECONCILE_PROVIDERS_STRIPE_API_KEY") || !strings.Contains(errOut, "--no-pull") {
		t.Fatalf("stripe without a key: %d %q", code, errOut)
	}
	for _, flag := range []string{"--no-pull", "--dry-run"} {
		code, out, errOut := cli(t, "run", "--provider", "stripe", "--from", "2026-03-14", flag, "--database-url", url)
		if code != 0 || !strings.Contains(out, "evidence      stored only (stripe is not pulled without RECONCILE_PROVIDERS_STRIPE_API_KEY)") {
			t.Fatalf("%s: %d %q %q", flag, code, out, errOut)
		}
	}
	// M-Pesa's evidence arrives by callbacks and statements: nothing to pull.
	if code, _, errOut := cli(t, "run", "--provider", "mpesa", "--from", "2026-03-14", "--database-url", url); code != 0 {
		t.Fatalf("mpesa: %d %q", code, errOut)
	}
	code, out, _ := cli(t, "run", "--help")
	if code != 0 || !strings.Contains(out, "--dry-run never pulls") {
		t.Fatalf("run --help does not say what --dry-run does: %s", out)
	}
}

// TestRunToDefaultsToOneDay: --to is one day after --from, in the provider's
// zone.
func TestRunToDefaultsToOneDay(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	code, out, errOut := cli(t, "run", "--provider", "mpesa", "--from", "2026-03-14", "--format", "json", "--database-url", url)
	if code != 0 {
		t.Fatalf("%d %q", code, errOut)
	}
	var got struct{ From, To, Zone string }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.From != "2026-03-13T21:00:00Z" || got.To != "2026-03-14T21:00:00Z" || got.Zone != "Africa/Nairobi" {
		t.Fatalf("window %+v", got)
	}
	code, out, _ = cli(t, "run", "--provider", "mpesa", "--from", "2026-03-14", "--database-url", url)
	if code != 0 || !strings.Contains(out, "mpesa 2026-03-14 00:00 → 2026-03-15 00:00 EAT (+03:00)") {
		t.Fatalf("text does not show the window in Nairobi time: %s", out)
	}
}

// TestUnusedSettingsAreNotRequired: webhook alerts without the webhook URL
// and event endpoints without the signing secret (secrets) stop only the
// command that delivers (serve); listing, running (which plans alerts and
// events for serve to deliver) and previewing work.
func TestUnusedSettingsAreNotRequired(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("alerts:\n  mode: webhook\n  channel: finance-ops\nhttp:\n  listen: 127.0.0.1:0\n"+
		"events:\n  endpoints: [\"https://hooks.example.com/payments\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"findings", "list"},
		{"quarantine", "list"},
		{"jobs", "list"},
		{"run", "--provider", "mpesa", "--from", "2026-03-14"},
		{"run", "--provider", "mpesa", "--from", "2026-03-14", "--dry-run"},
		{"alerts", "preview", "--run", "1"},
	} {
		code, _, errOut := cliIn(t, t.TempDir(), nil, append(args, "--config", cfg, "--database-url", url)...)
		if code != 0 {
			t.Errorf("%v: %d %q", args, code, errOut)
		}
	}
	code, _, errOut := cliIn(t, t.TempDir(), nil, "serve", "--config", cfg, "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "RECONCILE_ALERTS_WEBHOOK_URL") || !strings.Contains(errOut, "RECONCILE_EVENTS_SIGNING_SECRET") {
		t.Fatalf("serve without the webhook URL and the signing secret: %d %q", code, errOut)
	}
}

// TestUnknownCommandsAndProvidersExit2: an unknown or missing subcommand and
// an unknown provider are usage errors everywhere.
func TestUnknownCommandsAndProvidersExit2(t *testing.T) {
	t.Parallel()
	url := migrated(t)
	for _, args := range [][]string{
		{"bogus"},
		{"findings"},
		{"findings", "bogus"},
		{"jobs", "bogus"},
		{"import", "bogus"},
		{"quarantine", "bogus"},
		{"alerts", "bogus"},
		{"findings", "list", "--provider", "paypal"},
		{"run", "--provider", "paypal", "--from", "2026-03-14"},
		{"import", "statement", "--provider", "paypal", "x.csv"},
		{"import", "callbacks", "--provider", "paypal", "x.jsonl"},
		{"jobs", "list", "--format", "yaml"},
		{"quarantine", "list", "--format", "yaml"},
	} {
		code, out, errOut := cli(t, append(args, "--database-url", url)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%q %q)", args, code, out, errOut)
		}
	}
}

// imported returns a migrated SQLite database holding the examples' M-Pesa
// intents and statement.
func imported(t *testing.T) string {
	t.Helper()
	url := migrated(t)
	for _, args := range [][]string{
		{"--config", "../../examples/config.yaml", "import", "intents", "../../examples/intents.csv"},
		{"import", "statement", "--provider", "mpesa", "../../examples/mpesa-statement.csv"},
	} {
		if code, _, errOut := cli(t, append(args, "--database-url", url)...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	return url
}

// TestTimesInTheProvidersZone: the Slack messages a run would send show
// times in the provider's zone with the offset when alerts.zone is not set.
func TestTimesInTheProvidersZone(t *testing.T) {
	t.Parallel()
	url := imported(t)
	code, out, errOut := cli(t, "run", "--provider", "mpesa", "--from", "2026-03-14", "--dry-run", "--database-url", url)
	if code != 0 {
		t.Fatalf("%d %q", code, errOut)
	}
	slack := out[strings.Index(out, "Slack messages this run would send"):]
	if !strings.Contains(slack, "2026-03-14 00:00 → 2026-03-15 00:00 EAT (+03:00)") || strings.Contains(slack, " UTC") {
		t.Fatalf("Slack preview not in Nairobi time:\n%s", slack)
	}
}

// TestListsAreNewestFirst: every list command sorts the same way, newest
// first, and takes the same formats.
func TestListsAreNewestFirst(t *testing.T) {
	t.Parallel()
	url := imported(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("alerts:\n  mode: webhook\n  channel: finance-ops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A run with alerts on queues their deliveries: jobs to list.
	if code, _, errOut := cli(t, "run", "--provider", "mpesa", "--from", "2026-03-14", "--config", cfg, "--database-url", url); code != 0 {
		t.Fatalf("run: %s", errOut)
	}
	if code, _, _ := cli(t, "import", "intents", "../../examples/bad-intents.csv", "--database-url", url); code != 1 {
		t.Fatal("bad intents imported")
	}
	var jobs struct{ Jobs []struct{ ID int64 } }
	var quarantine struct{ Quarantine []struct{ ID int64 } }
	var findings struct {
		Findings []struct {
			OccurredAt string `json:"occurred_at"`
		}
	}
	for _, c := range []struct {
		args []string
		into any
	}{{[]string{"jobs", "list"}, &jobs}, {[]string{"quarantine", "list"}, &quarantine}, {[]string{"findings", "list"}, &findings}} {
		for _, f := range []string{"text", "csv", "json"} {
			code, out, errOut := cli(t, append(c.args, "--format", f, "--database-url", url)...)
			if code != 0 {
				t.Fatalf("%v --format %s: %d %q", c.args, f, code, errOut)
			}
			if f == "json" {
				if err := json.Unmarshal([]byte(out), c.into); err != nil {
					t.Fatalf("%v: %v", c.args, err)
				}
			}
		}
	}
	if len(jobs.Jobs) < 2 || len(quarantine.Quarantine) < 2 || len(findings.Findings) < 2 {
		t.Fatalf("too little to sort: %d jobs, %d quarantined, %d findings", len(jobs.Jobs), len(quarantine.Quarantine), len(findings.Findings))
	}
	for i := 1; i < len(jobs.Jobs); i++ {
		if jobs.Jobs[i].ID > jobs.Jobs[i-1].ID {
			t.Errorf("jobs not newest first: %v", jobs.Jobs)
		}
	}
	for i := 1; i < len(quarantine.Quarantine); i++ {
		if quarantine.Quarantine[i].ID > quarantine.Quarantine[i-1].ID {
			t.Errorf("quarantine not newest first: %v", quarantine.Quarantine)
		}
	}
	for i := 1; i < len(findings.Findings); i++ {
		if findings.Findings[i].OccurredAt > findings.Findings[i-1].OccurredAt {
			t.Errorf("findings not newest first: %v", findings.Findings)
		}
	}
}
