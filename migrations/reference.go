package migrations

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"

	"github.com/reconcilehq/reconcile/ledger"
)

// Go returns the migrations written in Go for dialect, to register beside
// the SQL files: migration 14 fills the normal form of every stored
// reference that migration 13 left empty (all of them on SQLite, those with
// characters beyond printable ASCII on PostgreSQL), with
// ledger.NormalReference, the function every writer uses.
func Go(dialect goose.Dialect) []*goose.Migration {
	pg := dialect == goose.DialectPostgres
	up := func(ctx context.Context, tx *sql.Tx) error {
		for _, t := range []normTable{
			{"intents", "key", "''"},
			{"provider_txns", "txn_id", "provider"},
		} {
			if err := t.fill(ctx, tx, pg); err != nil {
				return fmt.Errorf("migration 14: %s: %w", t.name, err)
			}
		}
		return nil
	}
	return []*goose.Migration{goose.NewGoMigration(14, &goose.GoFunc{RunTx: up}, &goose.GoFunc{RunTx: func(context.Context, *sql.Tx) error { return nil }})}
}

// normTable names a table whose ref_norm is filled, by its key: id, plus
// provider for transactions (” for intents, keyed by key alone).
type normTable struct{ name, id, provider string }

// normBatch is how many rows are filled per statement.
const normBatch = 5000

func (t normTable) fill(ctx context.Context, tx *sql.Tx, pg bool) error {
	sel := fmt.Sprintf(`SELECT %s, %s, reference FROM %s WHERE ref_norm IS NULL LIMIT %d`, t.provider, t.id, t.name, normBatch)
	upd := fmt.Sprintf(`UPDATE %s SET ref_norm = ? WHERE %s = ? AND (%s) = ?`, t.name, t.id, t.provider)
	if pg {
		upd = fmt.Sprintf(`UPDATE %s SET ref_norm = $1 WHERE %s = $2 AND (%s) = $3`, t.name, t.id, t.provider)
	}
	stmt, err := tx.PrepareContext(ctx, upd)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for {
		type row struct{ provider, id, ref string }
		var rows []row
		rs, err := tx.QueryContext(ctx, sel)
		if err != nil {
			return err
		}
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.provider, &r.id, &r.ref); err != nil {
				rs.Close()
				return err
			}
			rows = append(rows, r)
		}
		if err := rs.Close(); err != nil {
			return err
		}
		if err := rs.Err(); err != nil {
			return err
		}
		for _, r := range rows {
			if _, err := stmt.ExecContext(ctx, ledger.NormalReference(r.ref), r.id, r.provider); err != nil {
				return err
			}
		}
		if len(rows) < normBatch {
			return nil
		}
	}
}
