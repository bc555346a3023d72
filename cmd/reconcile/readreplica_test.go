package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
)

// TestReadReplica: with database_read_url set, the reports (runs list and
// show, findings list and show) read the replica and a run's matching
// reads it too. A replica that holds none of the primary's books (a fresh
// schema standing in for one) shows that the reports read it; the same
// database standing in for its own replica shows that what they print is
// the primary's. SQLite has no replica: the error names the key.
func TestReadReplica(t *testing.T) {
	t.Parallel()
	primary := dbtest.NewSchemaURL(t)
	sd := fixture.Books(t, primary)
	empty := dbtest.PostgresURL(t)
	self := primary + "&application_name=reconcile-test-replica"
	if !strings.Contains(primary, "?") {
		self = primary + "?application_name=reconcile-test-replica"
	}
	with := func(replica string) string {
		return writeConfig(t, "database_url: "+primary+"\ndatabase_read_url: "+replica+"\n")
	}

	reports := [][]string{{"runs", "list"}, {"runs", "show", "1"}, {"findings", "show", sd.Dup},
		{"findings", "list", "--provider", "mpesa", "--status", "all"}}
	for _, args := range reports {
		want, _ := cliOK(t, append(args, "--database-url", primary)...)
		got, _ := cliOK(t, append(args, "--config", with(self))...)
		if got != want {
			t.Errorf("%v through the database standing in for its replica:\n%s\nwant:\n%s", args, got, want)
		}
	}
	if out, _ := cliOK(t, "runs", "list", "--config", with(empty)); strings.Contains(out, "mpesa") {
		t.Errorf("runs list did not read the replica, which holds no run:\n%s", out)
	}
	if out, _ := cliOK(t, "findings", "list", "--status", "all", "--config", with(empty)); strings.Contains(out, sd.Dup) {
		t.Errorf("findings list did not read the replica, which holds no finding:\n%s", out)
	}
	if code, _, errOut := cli(t, "findings", "show", sd.Dup, "--config", with(empty)); code == 0 || !strings.Contains(errOut, "no such finding") {
		t.Errorf("findings show on a replica without the finding: exit %d: %s", code, errOut)
	}

	// A run's matching reads the replica once it holds what the primary
	// wrote (a database not in recovery holds it all); the run writes the
	// primary.
	_, errOut := cliOK(t, "run", "--provider", "mpesa", "--from", "2026-11-02", "--to", "2026-11-03", "--no-pull",
		"--config", with(self))
	if !strings.Contains(errOut, "reads=replica") && !strings.Contains(errOut, `"reads":"replica"`) {
		t.Errorf("the run's summary does not say it read the replica:\n%s", errOut)
	}
	if out, _ := cliOK(t, "runs", "show", "1", "--database-url", primary); !strings.Contains(out, "finished") {
		t.Errorf("the run was not recorded on the primary:\n%s", out)
	}

	lite := "sqlite:" + filepath.Join(t.TempDir(), "r.db")
	cfg := writeConfig(t, "database_url: "+lite+"\ndatabase_read_url: "+primary+"\n")
	code, _, errOut := cli(t, "runs", "list", "--config", cfg)
	if code == 0 || !strings.Contains(errOut, "database_read_url") || !strings.Contains(errOut, "SQLite") {
		t.Errorf("a replica of SQLite: exit %d: %s", code, errOut)
	}
}
