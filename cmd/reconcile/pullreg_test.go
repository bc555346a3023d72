package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/poll"
	"github.com/reconcilehq/reconcile/providers/mpesa/mpesafake"
	"github.com/reconcilehq/reconcile/service"
)

const (
	pullNominated = "254708374149"
	pullPathToken = "pulltoken0123456789abcdefghijklmnopqrst"
)

// pullConfig is a config file that pulls M-Pesa from the fake at base.
func pullConfig(t *testing.T, base, shortCode string, enabled bool) string {
	t.Helper()
	return writeConfig(t, fmt.Sprintf(`
providers:
  mpesa:
    base_url: %s
    short_code: "%s"
    callbacks:
      public_url: https://pay.example.com
    pull:
      enabled: %v
`, base, shortCode, enabled))
}

// TestProvidersRegister: `reconcile providers register mpesa` registers the
// short code for pulling once and records it, on both engines. Before it,
// a run's pull fails saying the short code is not registered and naming the
// command; after it, the run pulls. Registering again asks Daraja nothing
// unless --force, which is what a short code Safaricom forgot needs. The
// nominated number is never shown whole, nor the callback path token.
func TestProvidersRegister(t *testing.T) {
	t.Parallel()
	for name, newURL := range map[string]func(testing.TB) string{
		"postgres": func(t testing.TB) string { return dbtest.NewSchemaURL(t) },
		"sqlite":   func(t testing.TB) string { return "sqlite:" + filepath.Join(t.TempDir(), "reconcile.db") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			fake := mpesafake.New(mpesafake.Config{Seed: 11})
			base := fake.Start()
			t.Cleanup(fake.Close)
			short, passKey, key, secret := fake.Credentials()
			url := newURL(t)
			creds := []string{"RECONCILE_DATABASE_URL=" + url, "RECONCILE_PROVIDERS_MPESA_CONSUMER_KEY=" + key,
				"RECONCILE_PROVIDERS_MPESA_CONSUMER_SECRET=" + secret, "RECONCILE_PROVIDERS_MPESA_PASS_KEY=" + passKey,
				"RECONCILE_PROVIDERS_MPESA_CALLBACKS_PATH_TOKEN=" + pullPathToken}
			env := append(creds, "RECONCILE_PROVIDERS_MPESA_PULL_NOMINATED_NUMBER="+pullNominated)
			cfg := pullConfig(t, base, short, true)
			if code, out, errOut := cliEnv(t, env, "migrate", "--config", cfg); code != 0 {
				t.Fatalf("migrate: %d %s %s", code, out, errOut)
			}
			register := func(want int, args ...string) (string, string) {
				t.Helper()
				code, out, errOut := cliEnv(t, env, append([]string{"providers", "register", "--config", cfg}, args...)...)
				if code != want {
					t.Fatalf("providers register %v: exit %d, want %d\n%s\n%s", args, code, want, out, errOut)
				}
				if strings.Contains(out+errOut, pullNominated) || strings.Contains(out+errOut, pullPathToken) {
					t.Errorf("providers register %v shows the nominated number or the path token:\n%s\n%s", args, out, errOut)
				}
				return out, errOut
			}
			// The run of the last hour, with what its pull said.
			pullError := func() string {
				t.Helper()
				now := time.Now().UTC()
				code, out, errOut := cliEnv(t, env, "run", "--config", cfg, "--provider", "mpesa", "--format", "json",
					"--from", now.Add(-time.Hour).Format(time.RFC3339), "--to", now.Format(time.RFC3339))
				var rep struct {
					PullError string `json:"pull_error"`
				}
				if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
					t.Fatalf("run: %d %v\n%s\n%s", code, err, out, errOut)
				}
				return rep.PullError
			}

			// What cannot register, and why.
			for _, c := range []struct {
				env  []string
				cfg  string
				args []string
				code int
				want string
			}{
				{env, cfg, []string{"bogus"}, 2, `--provider "bogus"`},
				{env, cfg, []string{"stripe"}, 1, "stripe needs no registration for pulling"},
				{env, pullConfig(t, base, short, false), []string{"mpesa"}, 1, "set providers.mpesa.pull.enabled"},
				{creds, cfg, []string{"mpesa"}, 1, "registering for pulling needs RECONCILE_PROVIDERS_MPESA_PULL_NOMINATED_NUMBER"},
			} {
				code, out, errOut := cliEnv(t, c.env, append([]string{"providers", "register", "--config", c.cfg}, c.args...)...)
				if code != c.code || !strings.Contains(errOut, c.want) {
					t.Errorf("providers register %v: exit %d %q %q, want %d and %q", c.args, code, out, errOut, c.code, c.want)
				}
			}
			if n := len(fake.Registrations()); n != 0 {
				t.Fatalf("%d registrations reached Daraja, want none", n)
			}

			if got := pullError(); !strings.Contains(got, "short code "+short+" is not registered for pulling") ||
				!strings.Contains(got, "`reconcile providers register mpesa --force`") {
				t.Errorf("pull before registering: %q, want it to say the short code is not registered and name the command", got)
			}

			out, _ := register(0, "mpesa", "--actor", "alice")
			for _, want := range []string{"mpesa: short code " + short + " registered for pulling (status 1000: Service request successful; ref ",
				"nominated number 2547****4149, callback https://pay.example.com/daraja/[path token]/c2b/confirmation"} {
				if !strings.Contains(out, want) {
					t.Errorf("register:\n%s\nwant %q", out, want)
				}
			}
			regs := fake.Registrations()
			if len(regs) != 1 || regs[0].NominatedNumber != pullNominated ||
				regs[0].CallbackURL != "https://pay.example.com/daraja/"+pullPathToken+"/c2b/confirmation" {
				t.Fatalf("Daraja received %+v", regs)
			}
			store, err := database.Open(ctx, url, database.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			rec, err := store.GetPullRegistration(ctx, "mpesa", short)
			if err != nil || rec.By != "cli:alice" || rec.ResponseRef != regs[0].RefID || rec.Status != "1000" ||
				rec.NominatedNumber != "2547****4149" || strings.Contains(rec.CallbackURL, pullPathToken) {
				t.Errorf("the books record %+v (%v)", rec, err)
			}
			if got := pullError(); got != "" {
				t.Errorf("pull once registered: %q", got)
			}

			out, _ = register(0, "mpesa", "--actor", "bob")
			if !strings.Contains(out, "is registered for pulling already, since ") || !strings.Contains(out, " EAT (+03:00) by cli:alice") ||
				!strings.Contains(out, "--force registers it again") {
				t.Errorf("registering again:\n%s", out)
			}
			if n := len(fake.Registrations()); n != 1 {
				t.Errorf("registering again reached Daraja: %d registrations", n)
			}

			// Safaricom forgets the short code: the pull says so, and
			// --force registers it again.
			fake.Unregister(short)
			if got := pullError(); !strings.Contains(got, "not registered for pulling") {
				t.Errorf("pull after Safaricom forgot: %q", got)
			}
			out, _ = register(0, "mpesa", "--force", "--actor", "bob")
			if !strings.Contains(out, "registered for pulling (status 1000") {
				t.Errorf("--force:\n%s", out)
			}
			if rec, err := store.GetPullRegistration(ctx, "mpesa", short); err != nil || rec.By != "cli:bob" {
				t.Errorf("after --force the books record %+v (%v)", rec, err)
			}
			if got := pullError(); got != "" {
				t.Errorf("pull after --force: %q", got)
			}
			if n := len(fake.Registrations()); n != 2 {
				t.Errorf("%d registrations reached Daraja, want 2", n)
			}
		})
	}
}

// pullServer builds `reconcile serve` on url pulling M-Pesa from base, with
// the nominated number set or not.
func pullServer(t *testing.T, url, base, shortCode, nominated string) (*service.Server, *syncBuffer) {
	t.Helper()
	file := writeConfig(t, fmt.Sprintf(`
database_url: %q
http:
  listen: 127.0.0.1:0
  admin_listen: 127.0.0.1:0
queue:
  shutdown_grace: 2s
providers:
  mpesa:
    base_url: %s
    short_code: "%s"
    callbacks:
      public_url: https://pay.example.com
    pull:
      enabled: true
`, url, base, shortCode))
	cfg, err := config.Load(config.Source{File: file})
	if err != nil {
		t.Fatal(err)
	}
	m := &cfg.Providers.Mpesa
	m.ConsumerKey, m.ConsumerSecret, m.PassKey = mpesafake.SandboxKey, mpesafake.SandboxSecret, mpesafake.SandboxPassKey
	m.Callbacks.PathToken = pullPathToken
	m.Pull.NominatedNumber = nominated
	logs := &syncBuffer{}
	a := &app{stdin: strings.NewReader(""), stdout: io.Discard, stderr: logs, cfg: cfg, clock: time.Now,
		logger: slog.New(slog.NewJSONHandler(logs, nil))}
	t.Cleanup(a.close)
	s, err := newServer(t.Context(), a)
	if err != nil {
		t.Fatalf("newServer: %v\n%s", err, logs)
	}
	return s, logs
}

// serveUntil runs s until done says so, then stops it and waits.
func serveUntil(t *testing.T, s *service.Server, logs *syncBuffer, what string, done func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	err := poll.Until(ctx, 30*time.Second, 20*time.Millisecond, func() (bool, error) { return done(), nil })
	cancel()
	if rerr := <-errc; rerr != nil {
		t.Fatalf("serve: %v\n%s", rerr, logs)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, logs)
	}
}

// TestServeRegistersPulls: serve registers at its start the short code the
// books do not record; a refusal or a missing setting is logged with its
// cause and counted, and serve keeps serving; the next start registers,
// and the one after finds the record and asks Daraja nothing.
func TestServeRegistersPulls(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.SQLiteURL(t)
	fake := mpesafake.New(mpesafake.Config{Seed: 12})
	base := fake.Start()
	t.Cleanup(fake.Close)
	short, _, _, _ := fake.Credentials()
	counted := func(s *service.Server, result string) func() bool {
		return func() bool {
			return sample(t, scrape(t, s.Admin()), "reconcile_pull_registrations_total", map[string]string{"provider": "mpesa", "result": result}) == 1
		}
	}

	// No nominated number: nothing is sent, the cause is logged and counted.
	s, logs := pullServer(t, url, base, short, "")
	serveUntil(t, s, logs, "the missing setting counted", counted(s, "failed"))
	if !strings.Contains(logs.String(), `"msg":"registration for pulling not made: pulls fail until it is","provider":"mpesa","short_code":"`+short+`","missing":"RECONCILE_PROVIDERS_MPESA_PULL_NOMINATED_NUMBER"`) {
		t.Errorf("no warning naming the missing setting:\n%s", logs)
	}

	// Daraja refuses: logged with its cause and counted; serve answers.
	fake.Inject(mpesafake.PathPullRegister, mpesafake.Fault{Status: 500, ErrorCode: "500.003.02", ErrorMessage: "Spike Arrest Violation"})
	s, logs = pullServer(t, url, base, short, pullNominated)
	serveUntil(t, s, logs, "the refusal counted", counted(s, "failed"))
	if !strings.Contains(logs.String(), `"msg":"registration for pulling failed: pulls fail until it is made; it is tried again at the next start","provider":"mpesa"`) ||
		!strings.Contains(logs.String(), "Spike Arrest Violation") {
		t.Errorf("no warning with the cause:\n%s", logs)
	}
	if strings.Contains(logs.String(), pullNominated) {
		t.Errorf("the log shows the nominated number:\n%s", logs)
	}
	store, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := store.GetPullRegistration(ctx, "mpesa", short); err == nil {
		t.Fatal("a refused registration was recorded")
	}

	// The next start registers.
	s, logs = pullServer(t, url, base, short, pullNominated)
	serveUntil(t, s, logs, "registered", counted(s, "registered"))
	rec, err := store.GetPullRegistration(ctx, "mpesa", short)
	if err != nil || !strings.HasPrefix(rec.By, "serve:") || rec.Status != "1000" || rec.NominatedNumber != "2547****4149" {
		t.Errorf("the books record %+v (%v)", rec, err)
	}
	if strings.Contains(logs.String(), pullNominated) || !strings.Contains(logs.String(), `"nominated_number":"2547****4149"`) {
		t.Errorf("the log does not mask the nominated number:\n%s", logs)
	}

	// And the one after finds the record.
	s, logs = pullServer(t, url, base, short, pullNominated)
	serveUntil(t, s, logs, "found recorded", counted(s, "recorded"))
	if regs := fake.Registrations(); len(regs) != 1 {
		t.Errorf("Daraja received %d registrations, want 1: %+v", len(regs), regs)
	}
}
