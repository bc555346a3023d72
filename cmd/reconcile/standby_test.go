package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
)

// TestReadReplicaStandby runs the commands against a real streaming
// standby of a server of the test's own: the reports read it and print
// what the primary holds; a run's matching reads it once it has replayed
// the run's pull, and reads the primary, saying why, while its replay is
// paused.
func TestReadReplicaStandby(t *testing.T) {
	t.Parallel()
	primary, standby := dbtest.Standby(t)
	sd := fixture.Books(t, primary)
	cfg := writeConfig(t, "database_url: "+primary+"\ndatabase_read_url: "+standby+"\n")
	// reads is where the run's summary line says its matching read.
	reads := func(errOut string) string {
		t.Helper()
		for _, line := range strings.Split(errOut, "\n") {
			var l struct {
				Msg   string `json:"msg"`
				Reads string `json:"reads"`
			}
			if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "reconcile run" && l.Reads != "" {
				return l.Reads
			}
		}
		t.Fatalf("the run's summary does not say where it read:\n%s", errOut)
		return ""
	}

	_, errOut := cliOK(t, "run", "--provider", "mpesa", "--from", "2026-11-02", "--to", "2026-11-03", "--no-pull", "--config", cfg)
	if got := reads(errOut); got != "replica" {
		t.Errorf("a run with the standby streaming read %s, want the replica", got)
	}
	for _, args := range [][]string{{"findings", "list", "--provider", "mpesa", "--status", "all"}, {"findings", "show", sd.Dup}} {
		want, _ := cliOK(t, append(args, "--database-url", primary)...)
		got, _ := cliOK(t, append(args, "--config", cfg)...)
		if got != want || !strings.Contains(got, sd.Dup) {
			t.Errorf("%v through the standby:\n%s\nwant what the primary holds:\n%s", args, got, want)
		}
	}

	ctl, err := pgx.Connect(t.Context(), standby)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(context.WithoutCancel(t.Context()))
	if _, err := ctl.Exec(t.Context(), `SELECT pg_wal_replay_pause()`); err != nil {
		t.Fatal(err)
	}
	_, errOut = cliOK(t, "run", "--provider", "mpesa", "--from", "2026-11-03", "--to", "2026-11-04", "--no-pull", "--config", cfg)
	if got := reads(errOut); !strings.HasPrefix(got, "primary: the replica did not replay up to the primary's position") {
		t.Errorf("a run with replay paused read %s, want the primary", got)
	}
	if _, err := ctl.Exec(t.Context(), `SELECT pg_wal_replay_resume()`); err != nil {
		t.Fatal(err)
	}
	if out, _ := cliOK(t, "runs", "list", "--database-url", primary); strings.Count(out, "finished") < 2 {
		t.Errorf("the runs were not recorded on the primary:\n%s", out)
	}
}
