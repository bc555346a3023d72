package books_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/money"
)

func kes(t testing.TB, s string) money.Amount {
	t.Helper()
	a, err := money.Parse(s, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// canonicalJSON renders JSON text with sorted keys and no spaces, numbers
// as written.
func canonicalJSON(s string) string {
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Sprintf("invalid JSON %q", s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("invalid JSON %q", s)
	}
	return string(b)
}

// migrateTo applies the ledger's migrations up to version v only.
func migrateTo(ctx context.Context, s ledger.Store, v int64) error {
	drv, err := engine.Of(s)
	if err != nil {
		return err
	}
	m := drv.Migrations()
	db, release, err := m.Open()
	if err != nil {
		return err
	}
	defer release()
	p, err := goose.NewProvider(m.Dialect, db, m.FS)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, v)
	return err
}

// markApplied records migration v as applied, as a newer binary would.
func markApplied(ctx context.Context, s ledger.Store, v int64) error {
	drv, err := engine.Of(s)
	if err != nil {
		return err
	}
	db, release, err := drv.Migrations().Open()
	if err != nil {
		return err
	}
	defer release()
	_, err = db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (%d, true)`, v))
	return err
}
