package main

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
)

// cli runs one command line in-process and returns its exit code and output.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// cliOK runs the command line like cli and fails the test unless it
// exits 0; it returns stdout and stderr.
func cliOK(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, out, errOut := cli(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out, errOut
}

// cliUser is someone running the command line against one engine's books:
// the files they write go to a directory of their own (dir), and every
// command they run ends with the flags in common (the books, and any
// configuration).
type cliUser struct {
	t      *testing.T
	dir    string
	common []string
}

// onBothEngines runs fn, in parallel, as a user of fresh books on the
// embedded SQLite and on PostgreSQL.
func onBothEngines(t *testing.T, fn func(t *testing.T, u *cliUser)) {
	t.Helper()
	for name, url := range map[string]string{"sqlite": "sqlite:" + filepath.Join(t.TempDir(), "r.db"), "postgres": dbtest.NewSchemaURL(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, &cliUser{t: t, dir: t.TempDir(), common: []string{"--database-url", url}})
		})
	}
}

// write writes a file of the user's and returns its path.
func (u *cliUser) write(file, text string) string {
	p := filepath.Join(u.dir, file)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		u.t.Fatal(err)
	}
	return p
}

// run runs a command, failing the test unless it exits with want, and
// returns its standard output and error.
func (u *cliUser) run(want int, args ...string) (string, string) {
	u.t.Helper()
	code, out, errOut := cli(u.t, append(args, u.common...)...)
	if code != want {
		u.t.Fatalf("reconcile %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, out, errOut)
	}
	return out, errOut
}

// do is run's output and error together; stdout its output alone.
func (u *cliUser) do(want int, args ...string) string {
	u.t.Helper()
	out, errOut := u.run(want, args...)
	return out + errOut
}

func (u *cliUser) stdout(want int, args ...string) string {
	u.t.Helper()
	out, _ := u.run(want, args...)
	return out
}

// cliEnv runs one command line in a child process with env added (for
// settings that only come from the environment).
func cliEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), mainEnv+"=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	for _, url := range []string{dbtest.NewSchemaURL(t), "sqlite:" + filepath.Join(t.TempDir(), "r.db")} {
		code, out, errOut := cli(t, "migrate", "--database-url", url)
		if code != 0 || !strings.Contains(out, "applied ledger 0001_books.sql") || !strings.Contains(out, "applied river") {
			t.Fatalf("first migrate: %d %q %q", code, out, errOut)
		}
		code, out, _ = cli(t, "migrate", "--database-url", url)
		if code != 0 || !strings.Contains(out, "nothing to do") {
			t.Fatalf("second migrate: %d %q", code, out)
		}
	}
}

func TestOutOfDateSchemaIsRefused(t *testing.T) {
	t.Parallel()
	url := dbtest.NewSchemaURL(t)
	code, _, errOut := cli(t, "findings", "list", "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "reconcile migrate") {
		t.Fatalf("unmigrated postgres: %d %q", code, errOut)
	}
	// A SQLite file that exists migrates by itself.
	code, out, errOut := cli(t, "findings", "list", "--database-url", migrated(t))
	if code != 0 || !strings.Contains(out, "No findings.") {
		t.Fatalf("sqlite: %d %q %q", code, out, errOut)
	}
}

func TestImportIntentsExitCodes(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	// Charging a pending intent needs a charger for its provider: none is
	// configured, and nothing is imported.
	code, _, errOut := cli(t, "import", "intents", "--charge", "--database-url", url, "../../ledger/intentcsv/testdata/good.csv")
	if code != 1 || !strings.Contains(errOut, "good.csv line 3: --charge: no charger is configured for provider \"mpesa\"") ||
		!strings.Contains(errOut, "RECONCILE_PROVIDERS_MPESA_CONSUMER_KEY") {
		t.Fatalf("pending without a charger: %d %q", code, errOut)
	}
	history := filepath.Join(t.TempDir(), "history.csv")
	if err := os.WriteFile(history, []byte("key,provider,amount,currency,status,created_at\n"+
		"charge:order-4472,mpesa,250.50,KES,succeeded,2026-11-02T06:35:00Z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "import", "intents", "--database-url", url, history)
	if code != 0 || !strings.Contains(out, "1 intent(s) created") {
		t.Fatalf("history: %d %q %q", code, out, errOut)
	}
	code, _, errOut = cli(t, "import", "intents", "--database-url", url, "../../ledger/intentcsv/testdata/bad.csv")
	if code != 1 || !strings.Contains(errOut, "bad.csv line 3: field amount") || !strings.Contains(errOut, "line 7: field key: key reused") ||
		strings.Contains(errOut, "line 2:") {
		t.Fatalf("bad: %d %q", code, errOut)
	}
	code, out, _ = cli(t, "quarantine", "list", "--database-url", url, "--source", "intents_csv")
	if code != 0 || !strings.Contains(out, "bad.csv") || !strings.Contains(out, "more decimal places") {
		t.Fatalf("quarantine list: %d %s", code, out)
	}
	code, _, errOut = cli(t, "import", "intents", "--database-url", url, "missing.csv")
	if code != 1 || !strings.Contains(errOut, "missing.csv") {
		t.Fatalf("missing file: %d %q", code, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bogus"},
		{"findings", "list", "--frob"},
		{"import", "intents"},
		{"findings", "list", "--status", "closed"},
		{"findings", "resolve", "f_1"},
		{"run", "--provider", "mpesa"},
		{"quarantine", "list", "--format", "yaml"},
	} {
		args = append(args, "--database-url", "sqlite:"+filepath.Join(t.TempDir(), "r.db"))
		if code, _, errOut := cli(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
}

func TestHelpEverywhere(t *testing.T) {
	t.Parallel()
	walk := func(path []string) {
		code, out, _ := cli(t, append(path, "--help")...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%v --help: %d", path, code)
		}
	}
	root := newRootCmd(&app{})
	walk(nil)
	for _, c := range root.Commands() {
		walk([]string{c.Name()})
		for _, sub := range c.Commands() {
			walk([]string{c.Name(), sub.Name()})
		}
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for file, want := range map[string]string{
		write("level.yaml", "log:\n  level: verbose\n"):                                        "config log.level",
		write("typo.yaml", "log:\n  levle: info\n"):                                            "unknown key log.levle",
		write("url.yaml", "database_url: mysql://x\n"):                                         "config database_url",
		write("conns.yaml", "database:\n  max_conns: -1\n"):                                    "config database.max_conns",
		write("format.yaml", "log:\n  format: pretty\n"):                                       "config log.format",
		write("mdkey.yaml", "providers:\n  stripe:\n    intent_metadata_key: \"order[id]\"\n"): "config providers.stripe.intent_metadata_key",
	} {
		code, _, errOut := cli(t, "findings", "list", "--config", file)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s: %d %q, want %q", filepath.Base(file), code, errOut, want)
		}
	}
}

func TestDatabaseURLIsRedacted(t *testing.T) {
	t.Parallel()
	for _, u := range []string{
		"postgres://app:s3cretpass@127.0.0.1:1/db?connect_timeout=1",
		"postgres://app:s3cretpass@/db?host=/nonexistent-socket-dir&connect_timeout=1",
		"postgres:///db?host=/nonexistent-socket-dir&password=s3cretpass&connect_timeout=1",
		"postgres://app:s3cret%zzpass@/db?host=/nonexistent-socket-dir",
		"postgres://app:s3cretpass@/db?host=/nonexistent-socket-dir&pool_max_conns=abc",
	} {
		for _, cmd := range []string{"findings list", "migrate"} {
			code, out, errOut := cli(t, append(strings.Fields(cmd), "--database-url", u)...)
			if code != 1 || strings.Contains(out+errOut, "s3cret") {
				t.Errorf("%s on %s: %d %q %q", cmd, u, code, out, errOut)
			}
		}
	}
	// A migrate that succeeds names its target over a unix socket, with the
	// password hidden (the test server trusts local connections).
	pu, err := url.Parse(dbtest.NewSchemaURL(t))
	if err != nil {
		t.Fatal(err)
	}
	pu.User = url.UserPassword(pu.User.Username(), "s3cretpass")
	code, out, errOut := cli(t, "migrate", "--database-url", pu.String())
	if code != 0 || strings.Contains(out+errOut, "s3cret") || !strings.Contains(out, ":xxxxx@/") {
		t.Errorf("migrate: %d %q %q", code, out, errOut)
	}
}
