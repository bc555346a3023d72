package wiring_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/alerts"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/wiring"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 11, 3, 8, 0, 0, 0, time.UTC)

func clock() time.Time { return t0 }

// setup opens the parts of the default configuration on url as mode says.
func setup(t *testing.T, url string, mode wiring.Mode) (*wiring.Parts, error) {
	t.Helper()
	cfg := config.Default()
	cfg.DatabaseURL = url
	p, err := wiring.Open(t.Context(), cfg, wiring.Options{Mode: mode, Clock: clock})
	if err == nil {
		t.Cleanup(p.Close)
	}
	return p, err
}

// TestOpenReady: on either engine the parts come opened and wired: the
// books, the configured providers with their zones, the queue, the
// findings service, and what is built from them on demand.
func TestOpenReady(t *testing.T) {
	t.Parallel()
	for _, e := range []struct {
		name     string
		url      func(testing.TB) string
		embedded bool
	}{{"postgres", dbtest.PostgresURL, false}, {"sqlite", dbtest.SQLiteURL, true}} {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			p, err := setup(t, e.url(t), wiring.Existing)
			if err != nil {
				t.Fatal(err)
			}
			if p.Queue == nil || p.Findings == nil || p.Replica != nil {
				t.Fatalf("parts not wired: %+v", p)
			}
			if _, ok := p.Providers["mpesa"]; !ok {
				t.Errorf("providers: %v", p.Providers)
			}
			if z := p.Zones["mpesa"]; z == nil || z.String() != "Africa/Nairobi" {
				t.Errorf("mpesa zone: %v", z)
			}
			if p.Reads(t.Context()) != ledger.Reader(p.Store) || p.Lists() != p.Store {
				t.Error("without a replica reports and lists do not read the primary")
			}
			if p.Embedded() != e.embedded {
				t.Errorf("embedded: %v", p.Embedded())
			}
			if _, err := p.Reconciler(p.Queue, p.QueuedCharges()); err != nil {
				t.Errorf("reconciler: %v", err)
			}
			if p.Intake() == nil || len(p.CallbackParsers()) == 0 {
				t.Error("no callback intake")
			}
			if p.AlertsOn || p.PreviewAlerts().Mode != alerts.ModeWebhook || p.PreviewAlerts().Channel != "finance-ops" {
				t.Errorf("alerts off: preview with %+v", p.PreviewAlerts())
			}
			if runs, err := p.Reads(t.Context()).ListRuns(t.Context(), "", 10); err != nil || len(runs) != 0 {
				t.Errorf("fresh books: %d runs (%v)", len(runs), err)
			}
		})
	}
}

// TestOpenModes: a command that needs existing books never creates a
// SQLite file and says how to create one; one that may create it does,
// migrated; migrating opens the database as it is.
func TestOpenModes(t *testing.T) {
	t.Parallel()
	url := "sqlite:" + filepath.Join(t.TempDir(), "books.db")
	_, err := setup(t, url, wiring.Existing)
	if err == nil || !strings.Contains(err.Error(), "does not exist: create it with `reconcile migrate") {
		t.Fatalf("existing mode on a missing file: %v", err)
	}
	if !database.Missing(url) {
		t.Fatal("existing mode created the file")
	}
	p, err := setup(t, url, wiring.Create)
	if err != nil {
		t.Fatal(err)
	}
	if pending, err := database.Pending(t.Context(), p.Store); err != nil || len(pending) != 0 {
		t.Errorf("created books not migrated: %v (%v)", pending, err)
	}
	m, err := setup(t, dbtest.NewSchemaURL(t), wiring.Migrate)
	if err != nil {
		t.Fatalf("migrate mode on an empty schema: %v", err)
	}
	if applied, err := database.Migrate(t.Context(), m.Store); err != nil || applied.Empty() {
		t.Errorf("migrate: %+v (%v)", applied, err)
	}
	if _, err := setup(t, dbtest.NewSchemaURL(t), wiring.Create); err == nil {
		t.Error("an unmigrated PostgreSQL schema opened for work")
	}
}

// TestDefaultNotice: a command on the default database says which one.
func TestDefaultNotice(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DatabaseURL = dbtest.SQLiteURL(t)
	var notice strings.Builder
	p, err := wiring.Open(t.Context(), cfg, wiring.Options{Mode: wiring.Existing, DefaultNotice: &notice})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if want := "reconcile: using the default database " + database.DefaultURL; !strings.Contains(notice.String(), want) {
		t.Errorf("notice %q, want %q", notice.String(), want)
	}
}

// TestReplicaLists: without a replica the console reads the primary
// alone; with one, reports and the console's lists read it, and a
// finding's page and the quarantine read the primary.
func TestReplicaLists(t *testing.T) {
	t.Parallel()
	primaryURL := dbtest.NewSchemaURL(t)
	sd := fixture.Books(t, primaryURL)
	primary, err := database.Open(t.Context(), primaryURL, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	if lists := (wiring.Books{Store: primary}).Lists(); lists != primary {
		t.Fatal("without a replica the console does not read the primary alone")
	}
	cfg := config.Default()
	cfg.DatabaseURL = primaryURL
	cfg.DatabaseReadURL = dbtest.PostgresURL(t) // holds none of the primary's books
	cfg.DatabaseReadMaxLag = time.Hour
	p, err := wiring.Open(t.Context(), cfg, wiring.Options{Mode: wiring.Existing, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	if p.Replica == nil {
		t.Fatal("no replica opened")
	}
	lists := p.Lists()
	if runs, err := lists.ListRuns(ctx, "", 10); err != nil || len(runs) != 0 {
		t.Errorf("runs list read the primary: %d runs (%v)", len(runs), err)
	}
	if fs, err := p.Reads(ctx).ListFindings(ctx, ledger.FindingFilter{}); err != nil || len(fs) != 0 {
		t.Errorf("a report read the primary: %d findings (%v)", len(fs), err)
	}
	if f, err := lists.GetFinding(ctx, sd.Dup); err != nil || f.ID != sd.Dup {
		t.Errorf("a finding's page did not read the primary: %+v (%v)", f, err)
	}
	if items, err := lists.ListQuarantine(ctx, "", 10); err != nil || len(items) == 0 {
		t.Errorf("quarantine did not read the primary: %d items (%v)", len(items), err)
	}
}

// TestOpenCopy: a copy reads books that exist and never creates them.
func TestOpenCopy(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "none.db")
	if _, _, err := wiring.OpenCopy(t.Context(), cfg, dbtest.SQLiteURL(t)); err == nil ||
		!strings.Contains(err.Error(), "does not exist: point --database-url at the books to copy") {
		t.Fatalf("copy of missing books: %v", err)
	}
	cfg.DatabaseURL = dbtest.SQLiteURL(t)
	src, dst, err := wiring.OpenCopy(t.Context(), cfg, dbtest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	defer dst.Close()
	if src.Engine() != ledger.EngineSQLite || dst.Engine() != ledger.EnginePostgres {
		t.Errorf("engines %s -> %s", src.Engine(), dst.Engine())
	}
}

// TestLimitsBad: bad amount limits are refused before anything is
// opened.
func TestLimitsBad(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "none.db")
	cfg.Limits.MaxAmounts = map[string]string{"KES": "lots"}
	if _, err := wiring.Open(t.Context(), cfg, wiring.Options{Mode: wiring.Create}); err == nil ||
		!strings.Contains(err.Error(), "config limits.max_amounts") {
		t.Fatalf("bad limits: %v", err)
	}
	if !database.Missing(cfg.DatabaseURL) {
		t.Error("books opened before the limits were checked")
	}
}
