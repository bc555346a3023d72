package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
)

// TestFindingsMatchCLI accepts a suggestion from the command line on both
// engines: show names the command, a wrong match is refused with the
// reason, match resolves both findings, unmatch reopens them.
func TestFindingsMatchCLI(t *testing.T) {
	t.Parallel()
	for _, url := range []string{dbtest.NewSchemaURL(t), "sqlite:" + filepath.Join(t.TempDir(), "r.db")} {
		ctx := context.Background()
		s, err := database.Open(ctx, url, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := database.Migrate(ctx, s); err != nil {
			t.Fatal(err)
		}
		unknown, missing := fixture.Typo(t, s)
		s.Close()
		run := func(args ...string) (int, string, string) {
			t.Helper()
			return cli(t, append(args, "--database-url", url, "--actor", "dave")...)
		}
		if code, out, _ := cli(t, "findings", "show", missing.ID, "--database-url", url); code != 0 ||
			!strings.Contains(out, "accept: reconcile findings match "+unknown.ID+" --intent k-typo") {
			t.Fatalf("show: %d\n%s", code, out)
		}
		if code, _, errOut := run("findings", "match", unknown.ID, "--intent", "k-typo"); code != exitUsage || !strings.Contains(errOut, "--note is required") {
			t.Fatalf("match without a note: %d %s", code, errOut)
		}
		if code, _, errOut := run("findings", "match", unknown.ID, "--intent", "k-usd", "--note", "x"); code != exitUsage || !strings.Contains(errOut, "currencies differ") {
			t.Fatalf("match across currencies: %d %s", code, errOut)
		}
		if code, _, errOut := run("findings", "match", missing.ID, "--intent", "k-typo", "--note", "x"); code != exitUsage || !strings.Contains(errOut, "only an unknown_charge") {
			t.Fatalf("match a missing_at_provider: %d %s", code, errOut)
		}
		code, out, errOut := run("findings", "match", unknown.ID, "--intent", "k-typo", "--note", "O for 0")
		want := "matched provider txn TX-TYPO with intent k-typo\n" + unknown.ID + " unknown_charge: resolved\n" + missing.ID + " missing_at_provider: resolved\n"
		if code != 0 || out != want {
			t.Fatalf("match: %d %q %s, want %q", code, out, errOut, want)
		}
		if code, _, errOut := run("findings", "match", unknown.ID, "--intent", "k-typo", "--note", "again"); code == 0 || !strings.Contains(errOut, "already matched by hand") {
			t.Fatalf("match twice: %d %s", code, errOut)
		}
		code, out, _ = run("findings", "unmatch", unknown.ID, "--note", "wrong payer")
		if code != 0 || !strings.Contains(out, unknown.ID+" unknown_charge: open") || !strings.Contains(out, missing.ID+" missing_at_provider: open") {
			t.Fatalf("unmatch: %d %s", code, out)
		}
	}
}
