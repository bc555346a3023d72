package wiring_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reconcilehq/reconcile/books"
	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/fixture"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/schedule"
	"github.com/reconcilehq/reconcile/wiring"
)

// TestSetup: a configured provider is described without its clients; an
// unknown one is an error naming --provider and the known ones.
func TestSetup(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	s, err := wiring.Setup(cfg, clock, "mpesa")
	if err != nil || s.Zone == nil || s.Zone.String() != "Africa/Nairobi" {
		t.Fatalf("mpesa: %+v (%v)", s, err)
	}
	_, err = wiring.Setup(cfg, clock, "paypal")
	var fe *schedule.FlagError
	if !errors.As(err, &fe) || fe.Flag != "provider" || !strings.HasPrefix(err.Error(), `--provider "paypal": want one of `) ||
		!strings.Contains(err.Error(), "mpesa") {
		t.Errorf("unknown provider: %v", err)
	}
}

// TestCompareBooks: the table of checks work returns is written, and a
// failure names what was done and where.
func TestCompareBooks(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.DatabaseURL = dbtest.SQLiteURL(t)
	fixture.Books(t, cfg.DatabaseURL)
	var out bytes.Buffer
	err := wiring.CompareBooks(t.Context(), cfg, dbtest.SQLiteURL(t), "copy to", &out,
		func(ctx context.Context, src, dst ledger.Store) (*books.CopyReport, error) {
			return books.Copy(ctx, src, dst, books.CopyOptions{Clock: clock})
		})
	if err != nil || !strings.Contains(out.String(), "intents") {
		t.Fatalf("copy:\n%s (%v)", out.String(), err)
	}
	empty := dbtest.SQLiteURL(t)
	out.Reset()
	err = wiring.CompareBooks(t.Context(), cfg, empty, "verify", &out, books.Verify)
	if err == nil || !strings.HasPrefix(err.Error(), "verify sqlite:") || out.Len() == 0 {
		t.Errorf("verify against an empty database:\n%s (%v)", out.String(), err)
	}
}

// TestServiceDeps: serve's server is built from the parts, its console
// reading as Lists says and its errors redacted of the secrets.
func TestServiceDeps(t *testing.T) {
	t.Parallel()
	p, err := setup(t, dbtest.SQLiteURL(t), wiring.Create)
	if err != nil {
		t.Fatal(err)
	}
	d := p.ServiceDeps()
	if d.Store != p.Store || d.ConsoleStore != p.Lists() || d.Findings != p.Findings || d.Redact == nil || d.Clock == nil ||
		d.Logger != p.Logger || len(d.Providers) != len(p.Providers) {
		t.Errorf("service deps: %+v", d)
	}
}
