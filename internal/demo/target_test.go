package demo_test

import (
	"testing"

	"github.com/reconcilehq/reconcile/internal/demo"
)

// TestTarget: the demo runs on its own SQLite file unless a database was
// chosen, and never prints a password in the URL it suggests.
func TestTarget(t *testing.T) {
	t.Parallel()
	if got := demo.Target(false, "postgres://db/books"); got != demo.DefaultTarget {
		t.Errorf("nothing chosen: %s", got)
	}
	if got := demo.Target(true, "postgres://db/books"); got != "postgres://db/books" {
		t.Errorf("chosen: %s", got)
	}
	if got := demo.NextURL("sqlite:reconcile-demo.db"); got != "sqlite:reconcile-demo.db" {
		t.Errorf("without a password: %s", got)
	}
	if got := demo.NextURL("postgres://u:secret@db/books?search_path=" + demo.Schema); got != "'<your database URL>&search_path="+demo.Schema+"'" {
		t.Errorf("with a password: %s", got)
	}
}
