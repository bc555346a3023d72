package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestFindingsShowAndRunsGolden prints what people read, on both engines:
// the same books give byte for byte the same output.
func TestFindingsShowAndRunsGolden(t *testing.T) {
	t.Parallel()
	for _, url := range []string{dbtest.NewSchemaURL(t), "sqlite:" + filepath.Join(t.TempDir(), "r.db")} {
		sd := fixture.Books(t, url)
		for _, c := range []struct {
			name string
			args []string
		}{
			{"findings_show.txt", []string{"findings", "show", sd.Dup}},
			{"findings_show.json", []string{"findings", "show", sd.Dup, "--format", "json"}},
			{"findings_show.csv", []string{"findings", "show", sd.Dup, "--format", "csv"}},
			{"findings_show_unknown.txt", []string{"findings", "show", sd.Unknown}},
			{"runs_list.txt", []string{"runs", "list"}},
			{"runs_list.json", []string{"runs", "list", "--format", "json"}},
			{"runs_list.csv", []string{"runs", "list", "--format", "csv"}},
			{"runs_show.txt", []string{"runs", "show", "1"}},
			{"findings_list_day.txt", []string{"findings", "list", "--provider", "mpesa", "--from", "2026-11-03", "--to", "2026-11-04", "--status", "open,acknowledged,resolved"}},
		} {
			code, out, errOut := cli(t, append(c.args, "--database-url", url)...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", c.args, code, errOut)
			}
			golden.Assert(t, "testdata/"+c.name+".golden", out)
		}
	}
}

func TestFindingsActionsRecordWho(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	sd := fixture.Books(t, url)
	run := func(want int, args ...string) string {
		t.Helper()
		code, out, errOut := cli(t, append(args, "--database-url", url)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d: %s%s", args, code, want, out, errOut)
		}
		return out + errOut
	}
	// Only a resolved finding reopens; a reopen needs a note.
	run(2, "findings", "reopen", sd.Dup)
	run(1, "findings", "reopen", sd.Unknown, "--note", "x", "--actor", "dave")
	run(0, "findings", "reopen", sd.Dup, "--note", "refund bounced", "--actor", "dave")
	run(0, "findings", "note", sd.Dup, "--note", "second refund sent", "--actor", "dave")
	run(0, "findings", "ack", sd.Unknown)                               // the operating system user
	run(2, "findings", "ack", sd.Unknown, "--actor", "run")             // reserved for runs
	run(1, "findings", "note", "f_nope", "--note", "x", "--actor", "d") // no such finding
	out := run(0, "findings", "show", sd.Dup)
	for _, want := range []string{
		"reopened by dave via cli: refund bounced",
		"noted by dave via cli: second refund sent",
		"resolved by bob@example.com via web: refunded SKL1AAAA02",
		"acknowledged by alice via cli: calling the customer",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("history lacks %q:\n%s", want, out)
		}
	}
	out = run(0, "findings", "show", sd.Unknown, "--format", "json")
	var d findings.DetailView
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.Finding.AcknowledgedBy == "" || len(d.History) != 2 || d.History[1].Surface != "cli" || d.History[1].Actor != d.Finding.AcknowledgedBy {
		t.Fatalf("ack by the OS user: %+v", d)
	}

	// Filters: an unknown provider and bad dates are usage errors.
	run(2, "findings", "list", "--provider", "paypal")
	run(2, "findings", "list", "--from", "yesterday")
	run(2, "findings", "list", "--from", "2026-11-03", "--to", "2026-11-02")
	run(2, "runs", "show", "abc")
	run(1, "runs", "show", "99")
	run(2, "runs", "list", "--provider", "paypal")
	run(1, "findings", "show", "f_nope")

	// Quarantine: dismiss needs a note; a file row cannot be replayed alone;
	// a callback body goes through the intake again.
	run(2, "quarantine", "dismiss", "1")
	if out := run(1, "quarantine", "replay", itoa(sd.CSVRow), "--actor", "dave"); !strings.Contains(out, "cannot be replayed alone") ||
		!strings.Contains(out, "in.csv") {
		t.Fatalf("replay of a csv row: %s", out)
	}
	run(0, "quarantine", "dismiss", itoa(sd.CSVRow), "--note", "fixed and imported again", "--actor", "dave")
	run(1, "quarantine", "dismiss", itoa(sd.CSVRow), "--note", "again", "--actor", "dave")
	if out := run(0, "quarantine", "replay", itoa(sd.Kept), "--actor", "dave"); !strings.Contains(out, "replayed") ||
		!strings.Contains(out, "1 new transaction(s)") {
		t.Fatalf("replay of a callback: %s", out)
	}
	run(1, "quarantine", "replay", itoa(sd.Kept), "--actor", "dave")
	out = run(0, "quarantine", "list")
	if !strings.Contains(out, "replayed") || !strings.Contains(out, "dismissed") {
		t.Fatalf("quarantine list: %s", out)
	}
	out = run(0, "quarantine", "show", itoa(sd.CSVRow))
	if !strings.Contains(out, "dismissed by dave via cli: fixed and imported again") || !strings.Contains(out, "in.csv line 3") {
		t.Fatalf("quarantine show: %s", out)
	}
	out = run(0, "quarantine", "show", itoa(sd.Kept), "--format", "csv")
	if !strings.Contains(out, `,replayed,dave,cli,,"replayed: stk_callback, 1 new transaction(s), 1 new source(s)"`) {
		t.Fatalf("quarantine show csv: %s", out)
	}
	run(1, "quarantine", "show", "99999")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestDecisionRow: a resolution from the command line goes through the
// findings service: without a note it is a usage error, with one it writes
// the history row every surface writes, --actor as actor and "cli" as
// surface.
func TestDecisionRow(t *testing.T) {
	t.Parallel()
	for name, url := range map[string]string{"postgres": dbtest.NewSchemaURL(t), "sqlite": "sqlite:" + filepath.Join(t.TempDir(), "r.db")} {
		sd := fixture.Books(t, url)
		if code, _, errOut := cli(t, "findings", "resolve", sd.Unknown, "--actor", "erin", "--database-url", url); code != exitUsage ||
			!strings.Contains(errOut, "--note is required") {
			t.Fatalf("%s: resolve without a note: %d %s", name, code, errOut)
		}
		if code, out, errOut := cli(t, "findings", "resolve", sd.Unknown, "--note", fixture.ResolveNote, "--actor", "erin",
			"--database-url", url); code != 0 {
			t.Fatalf("%s: resolve: %d %s %s", name, code, out, errOut)
		}
		s, err := database.Open(context.Background(), url, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fixture.CheckResolved(t, s, sd.Unknown, "erin", ledger.SurfaceCLI)
		s.Close()
	}
}
