package dbtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/database"
)

// Standby starts a PostgreSQL server of its own, without autovacuum, and a
// streaming standby of it (scripts/pgtmp.sh start, then standby), and
// returns the URLs of both.
// The primary's database is migrated before the standby is made, so the
// standby starts with the books' tables. Both servers are stopped and their
// directories removed when the test ends.
func Standby(t testing.TB) (primary, standby string) {
	t.Helper()
	script := filepath.Join(repoRoot(t), "scripts", "pgtmp.sh")
	// Nothing but the test commits on the primary: what the standby has
	// replayed is what the test wrote.
	primaryDir, primary := pgtmp(t, script, "start", "-c autovacuum=off")
	migrateURL(t, primary)
	_, standby = pgtmp(t, script, "standby", primaryDir)
	return primary, standby
}

// exports reads the variables pgtmp.sh prints for eval.
var exports = regexp.MustCompile(`(\w+)='([^']*)'`)

// pgtmp runs pgtmp.sh with args (for start, the server settings that
// follow it), registers the stop of the server it started and returns its
// directory and URL.
func pgtmp(t testing.TB, script string, args ...string) (dir, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", script, args[0])
	if args[0] == "start" {
		cmd.Env = append(os.Environ(), "PGTMP_OPTS="+strings.Join(args[1:], " "))
	} else {
		cmd.Args = append(cmd.Args, args[1:]...)
	}
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("pgtmp.sh %v: %v\n%s", args, err, msg)
	}
	vars := map[string]string{}
	for _, m := range exports.FindAllStringSubmatch(string(out), -1) {
		vars[m[1]] = m[2]
	}
	dir, url = vars["PGTMP_DIR"], vars["PGTMP_URL"]
	if dir == "" || url == "" {
		t.Fatalf("pgtmp.sh %v printed no server: %s", args, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("pgtmp.sh stop %s: %v\n%s", dir, err, out)
		}
	})
	return dir, url
}

// migrateURL migrates the database at u.
func migrateURL(t testing.TB, u string) {
	t.Helper()
	s := open(t, u)
	defer s.Close()
	if _, err := database.Migrate(t.Context(), s); err != nil {
		t.Fatalf("migrate %s: %v", u, err)
	}
}

// repoRoot is the directory of the module's go.mod, above the test's
// working directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
