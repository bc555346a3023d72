package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/internal/dbtest"
)

// booksSQLite makes the README's example book in a SQLite file: intents,
// a statement, callbacks and a run with its findings.
func booksSQLite(t *testing.T) string {
	t.Helper()
	u := "sqlite:" + filepath.Join(t.TempDir(), "books.db")
	for _, args := range [][]string{
		{"migrate"},
		{"--config", "../../examples/config.yaml", "import", "intents", "../../examples/intents.csv"},
		{"import", "statement", "--provider", "mpesa", "../../examples/mpesa-statement.csv"},
		{"import", "callbacks", "--provider", "mpesa", "../../examples/mpesa-callbacks.jsonl"},
		{"run", "--provider", "mpesa", "--from", "2026-03-14", "--no-pull"},
	} {
		if code, out, errOut := cli(t, append(args, "--database-url", u)...); code != 0 {
			t.Fatalf("%v: %d %s %s", args, code, out, errOut)
		}
	}
	return u
}

// TestBooksCopy: the example book copied from SQLite to PostgreSQL prints
// its verification and progress, and the copy answers like the source;
// a second copy into the same target, a target that is the source and a
// target that is no database URL are refused.
func TestBooksCopy(t *testing.T) {
	t.Parallel()
	src := booksSQLite(t)
	dst := dbtest.NewSchemaURL(t)
	code, out, errOut := cli(t, "books", "copy", "--to", dst, "--database-url", src)
	if code != 0 || !strings.Contains(out, "verified: ") || strings.Contains(out, "DIFFERS") ||
		!strings.Contains(errOut, "copying ") || !strings.Contains(errOut, "intents ") {
		t.Fatalf("copy: %d\n%s\n%s", code, out, errOut)
	}
	for _, u := range []string{src, dst} {
		code, list, errOut := cli(t, "findings", "list", "--database-url", u)
		if code != 0 || strings.Count(list, "\n") < 6 {
			t.Fatalf("findings list on %s: %d %s %s", u, code, list, errOut)
		}
		if u == dst {
			if _, srcList, _ := cli(t, "findings", "list", "--database-url", src); list != srcList {
				t.Errorf("the copy lists\n%s\nthe source\n%s", list, srcList)
			}
		}
	}
	if code, out, errOut := cli(t, "books", "verify", "--to", dst, "--database-url", src); code != 0 || !strings.Contains(out, "verified: ") {
		t.Errorf("verify: %d %s %s", code, out, errOut)
	}
	// The copy takes writes the source does not.
	if code, out, errOut := cli(t, "import", "intents", "--database-url", dst, "../../ledger/intentcsv/testdata/good.csv"); code != 0 {
		t.Fatalf("import into the copy: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "books", "verify", "--to", dst, "--database-url", src); code != 1 ||
		!strings.Contains(out, "DIFFERS") || !strings.Contains(errOut, "differs from its source") {
		t.Errorf("verify a copy that changed: %d %s %s", code, out, errOut)
	}
	code, _, errOut = cli(t, "books", "copy", "--quiet", "--to", dst, "--database-url", src)
	if code != 1 || !strings.Contains(errOut, "not empty") || !strings.Contains(errOut, "intents (") {
		t.Errorf("copy into a full target: %d %s", code, errOut)
	}
	if code, _, errOut = cli(t, "books", "copy", "--to", src, "--database-url", src); code != 2 {
		t.Errorf("copy onto itself: %d %s", code, errOut)
	}
	if code, _, errOut = cli(t, "books", "copy", "--to", "mysql://x", "--database-url", src); code != 2 {
		t.Errorf("copy to another kind of database: %d %s", code, errOut)
	}
	if code, _, _ = cli(t, "books", "copy", "--database-url", src); code != 2 {
		t.Errorf("copy without --to: %d", code)
	}
	missing := "sqlite:" + filepath.Join(t.TempDir(), "none.db")
	if code, _, errOut = cli(t, "books", "copy", "--to", dbtest.NewSchemaURL(t), "--database-url", missing); code != 1 ||
		!strings.Contains(errOut, "does not exist") {
		t.Errorf("copy from a file that does not exist: %d %s", code, errOut)
	}
}

// TestBooksPrune: a dry run counts, the prune does what it counted, and
// the cut is asked for once.
func TestBooksPrune(t *testing.T) {
	t.Parallel()
	u := booksSQLite(t)
	code, dry, errOut := cli(t, "books", "prune", "--before", "2030-01-01", "--dry-run", "--database-url", u)
	if code != 0 || !strings.Contains(dry, "would prune") || !strings.Contains(dry, "provider_txn_sources.raw") {
		t.Fatalf("dry run: %d %s %s", code, dry, errOut)
	}
	code, done, errOut := cli(t, "books", "prune", "--before", "2030-01-01", "--batch", "3", "--database-url", u)
	if code != 0 || strings.Replace(dry, "would prune (dry run, nothing changed)", "pruned", 1) != done {
		t.Fatalf("prune: %d\n%s\nafter the dry run\n%s\n%s", code, done, dry, errOut)
	}
	if code, _, _ := cli(t, "books", "prune", "--older-than", "2160h", "--database-url", u); code != 0 {
		t.Errorf("--older-than: %d", code)
	}
	for _, args := range [][]string{{}, {"--before", "2030-01-01", "--older-than", "1h"}, {"--before", "soon"}, {"--before", "2030-01-01", "--batch", "0"}} {
		if code, _, errOut := cli(t, append(append([]string{"books", "prune"}, args...), "--database-url", u)...); code != 2 {
			t.Errorf("prune %v: %d %s", args, code, errOut)
		}
	}
}

// TestBooksErase: without its key erasing is refused, naming the
// variable; with it, a customer of the example book is erased and a second
// erasure finds nothing left; a customer that is no phone number or
// e-mail address is a usage error.
func TestBooksErase(t *testing.T) {
	t.Parallel()
	u := booksSQLite(t)
	args := []string{"books", "erase", "--customer", "0712 340 845", "--actor", "dpo@shop.example", "--reason", "asked by mail",
		"--database-url", u}
	code, _, errOut := cliEnv(t, nil, args...)
	if code != 1 || !strings.Contains(errOut, "RECONCILE_BOOKS_ERASE_KEY") {
		t.Fatalf("without a key: %d %s", code, errOut)
	}
	key := []string{"RECONCILE_BOOKS_ERASE_KEY=a-secret-of-some-thirty-bytes!!"}
	code, out, errOut := cliEnv(t, key, append(args, "--dry-run")...)
	if code != 0 || !strings.Contains(out, "would erase") {
		t.Fatalf("dry run: %d %s %s", code, out, errOut)
	}
	code, out, errOut = cliEnv(t, key, args...)
	if code != 0 || !strings.Contains(out, "erased: ") || !strings.Contains(out, "intents") || !strings.Contains(out, "customer") {
		t.Fatalf("erase: %d %s %s", code, out, errOut)
	}
	token := strings.Fields(out[strings.Index(out, "is now ")+len("is now "):])[0]
	code, again, errOut := cliEnv(t, key, append(args[:len(args)-2], "--customer", "+254712340845", "--database-url", u)...)
	if code != 0 || !strings.Contains(again, "erased: 0 values") || !strings.Contains(again, token) {
		t.Errorf("erasing again: %d %s %s", code, again, errOut)
	}
	if code, _, errOut := cliEnv(t, key, "books", "erase", "--customer", "order 17", "--actor", "x", "--database-url", u); code != 2 {
		t.Errorf("a customer that is nobody: %d %s", code, errOut)
	}
	if code, _, _ := cli(t, "books", "erase", "--customer", "0712340845", "--database-url", u); code != 2 {
		t.Errorf("without --actor: %d", code)
	}
}
