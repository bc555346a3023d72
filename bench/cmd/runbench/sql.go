package main

import (
	"context"
	"time"

	"github.com/reconcilehq/reconcile/bench/benchsql"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
)

func sqlFindings(ctx context.Context, pg *pgstore.Store, provider string, from, to, now time.Time, grace time.Duration) (map[ledger.Kind]int, error) {
	rows, err := pg.Pool().Query(ctx, benchsql.FindingsSQL, provider, from, to, now, grace, 2*time.Hour)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[ledger.Kind]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[ledger.Kind(k)] = n
	}
	return out, rows.Err()
}
