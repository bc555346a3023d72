package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
)

// TestImportStatementAndCallbacks runs the statement and callbacks imports
// from the command line: counts, idempotent re-import, and a bad file refused
// whole with its lines named.
func TestImportStatementAndCallbacks(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresURL(t)
	stmt := "../../providers/mpesa/testdata/statements/portal_preamble_bom_crlf.csv"
	code, out, errOut := cli(t, "import", "statement", "--provider", "mpesa", stmt, "--database-url", url)
	if code != 0 || !strings.Contains(out, "new transaction(s)") {
		t.Fatalf("statement: %d %s %s", code, out, errOut)
	}
	code, again, _ := cli(t, "import", "statement", "--provider", "mpesa", stmt, "--database-url", url)
	if code != 0 || !strings.Contains(again, ": 0 new transaction(s), 0 new source(s)") {
		t.Fatalf("statement again: %d %s", code, again)
	}

	// Callbacks: one JSON document per line.
	var lines bytes.Buffer
	for _, name := range []string{"stk_success.json", "c2b_official.json", "stk_failure.json"} {
		raw, err := os.ReadFile(filepath.Join("../../providers/mpesa/testdata/callbacks", name))
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			t.Fatal(err)
		}
		lines.Write(compact.Bytes())
		lines.WriteByte('\n')
	}
	file := filepath.Join(t.TempDir(), "callbacks.jsonl")
	if err := os.WriteFile(file, lines.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "import", "callbacks", "--provider", "mpesa", file, "--database-url", url)
	if code != 0 || !strings.Contains(out, "3 callback(s)") || !strings.Contains(out, "2 new transaction(s)") {
		t.Fatalf("callbacks: %d %s %s", code, out, errOut)
	}
	code, out, _ = cli(t, "import", "callbacks", "--provider", "mpesa", file, "--database-url", url)
	if code != 0 || !strings.Contains(out, "3 delivered before") {
		t.Fatalf("callbacks again: %d %s", code, out)
	}

	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, append(lines.Bytes(), []byte("{\"Body\":{\"stkCallback\":\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "import", "callbacks", "--provider", "mpesa", bad, "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "bad.jsonl line 4") {
		t.Fatalf("bad callbacks file: %d %s", code, errOut)
	}
	if code, _, _ := cli(t, "import", "statement", "--provider", "paypal", stmt, "--database-url", url); code != 2 {
		t.Fatalf("unknown provider: exit %d, want 2", code)
	}
}
