package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
)

// e2e times, on PostgreSQL, the way from files to findings: import intents
// and import the M-Pesa statement (n lines each) into a fresh database,
// then `reconcile run --dry-run` over the generated month, beside the
// baseline COPY of both files into unindexed text tables plus the
// hand-written SQL join that computes the findings' counts (timed on the
// imported books).
func e2e(ctx context.Context, c config) error {
	intents, statement := filepath.Join(c.dir, "e2e-intents.csv"), filepath.Join(c.dir, "e2e-mpesa.csv")
	for name, file := range map[string]string{"intents": intents, "mpesa": statement} {
		f, _ := lookup(name)
		if err := generate(f, file, c.n); err != nil {
			return err
		}
		defer os.Remove(file)
	}
	u, err := freshDatabase(ctx, c.pgURL, "importbench_e2e")
	if err != nil {
		return err
	}
	if _, err := reconcile(ctx, c.bin, u, "migrate"); err != nil {
		return err
	}
	server := func() time.Duration { return serverCPU(c.pgData) }
	var base result
	for i, file := range []string{intents, statement} {
		s0, self0 := server(), selfCPU()
		wall, err := pgCopy(ctx, u, file, fmt.Sprintf("copy_baseline_%d", i))
		if err != nil {
			return err
		}
		base.wall += wall
		base.client += selfCPU() - self0
		base.server += server() - s0
	}
	var total result
	steps := []struct {
		name string
		args []string
	}{
		{"intents", []string{"import", "intents", intents}},
		{"mpesa", []string{"import", "statement", "--provider", "mpesa", statement}},
		{"run", []string{"run", "--provider", "mpesa", "--from", epoch.AddDate(0, 0, -1).Format(time.RFC3339),
			"--to", epoch.AddDate(0, 1, 2).Format(time.RFC3339), "--dry-run"}},
	}
	for _, st := range steps {
		r, err := timed(ctx, c.bin, u, server, st.args...)
		if err != nil {
			return err
		}
		fmt.Printf("%-8s %-7s %8d %-9s %8.2f %8.2f %8.2f %8.2f %9s %8s %9s %7.0f\n", "postgres", "e2e", c.n, st.name,
			r.wall.Seconds(), r.client.Seconds(), r.server.Seconds(), r.cpu().Seconds(), "", "", "", r.rss)
		total.wall += r.wall
		total.client += r.client
		total.server += r.server
		total.rss = max(total.rss, r.rss)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	s0, self0 := server(), selfCPU()
	start := time.Now()
	rows, err := conn.Query(ctx, findingsSQL, "mpesa", epoch.AddDate(0, 0, -1), epoch.AddDate(0, 1, 2), time.Now(),
		time.Hour, 2*time.Hour)
	if err != nil {
		return err
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	join := result{wall: time.Since(start), client: selfCPU() - self0, server: server() - s0}
	base.wall += join.wall
	base.client += join.client
	base.server += join.server
	for _, r := range []struct {
		step string
		r    result
	}{{"sql_join", join}, {"baseline", base}, {"total", total}} {
		fmt.Printf("%-8s %-7s %8d %-9s %8.2f %8.2f %8.2f %8.2f %8.2fx %8.2fx %9s %7s\n", "postgres", "e2e", c.n, r.step,
			r.r.wall.Seconds(), r.r.client.Seconds(), r.r.server.Seconds(), r.r.cpu().Seconds(),
			r.r.wall.Seconds()/base.wall.Seconds(), r.r.cpu().Seconds()/max(base.cpu().Seconds(), 0.001), "", "")
	}
	return nil
}

// findingsSQL is the hand-written join of bench/cmd/runbench (sql.go),
// which computes the run's finding counts in one statement.
//
// $1 provider, $2 from, $3 to, $4 now, $5 grace, $6 tolerance.
const findingsSQL = `
WITH i AS (
  SELECT key, amount, currency, state, updated_at, lease_expires_at, upper(reference) AS reference,
         created_at >= $2 AND created_at < $3 AS owned
  FROM intents
  WHERE provider = $1 AND created_at >= $2::timestamptz - $6::interval AND created_at < $3::timestamptz + $6::interval
), a AS (
  SELECT DISTINCT a.provider_ref, a.intent_key FROM attempts a JOIN i ON i.key = a.intent_key WHERE a.provider_ref <> ''
), t AS (
  SELECT txn_id, type, status, amount, currency, reference, provider_ref, linked_txn_id,
         occurred_at >= $2 AND occurred_at < $3 AS owned
  FROM provider_txns
  WHERE provider = $1 AND occurred_at >= $2::timestamptz - $6::interval AND occurred_at < $3::timestamptz + $6::interval
), back AS (
  SELECT linked_txn_id AS charge_id, sum(amount) AS amount FROM t
  WHERE type IN ('refund', 'reversal') AND status = 'succeeded' AND linked_txn_id <> '' GROUP BY 1
), c AS (
  SELECT t.txn_id, t.status, t.amount, t.currency, t.owned, t.amount - COALESCE(back.amount, 0) AS net,
         COALESCE(a.intent_key, r.key) AS intent_key
  FROM t
  LEFT JOIN back ON back.charge_id = t.txn_id
  LEFT JOIN a ON a.provider_ref = t.provider_ref AND t.provider_ref <> ''
  LEFT JOIN i r ON a.intent_key IS NULL AND t.reference <> '' AND r.reference = upper(t.reference)
  WHERE t.type = 'charge'
), j AS (
  SELECT i.key, i.owned AS i_owned, i.state, i.amount AS i_amount, i.currency AS i_currency, i.updated_at,
         i.lease_expires_at, c.txn_id, c.status, c.amount, c.currency, c.net, c.owned AS t_owned
  FROM i FULL OUTER JOIN c ON c.intent_key = i.key
), per AS (
  SELECT key, bool_or(i_owned) AS owned, min(state) AS state,
         min(CASE WHEN state = 'processing' THEN COALESCE(lease_expires_at, updated_at) ELSE updated_at END) AS since,
         count(*) FILTER (WHERE status = 'succeeded' AND net > 0) AS succ,
         count(txn_id) AS charges,
         count(*) FILTER (WHERE status = 'failed' OR (status = 'succeeded' AND net <= 0)) AS bad,
         bool_or(status = 'succeeded' AND net > 0 AND currency <> i_currency) AS cur_diff,
         bool_or(status = 'succeeded' AND net > 0 AND currency = i_currency AND amount <> i_amount) AS amt_diff
  FROM j WHERE key IS NOT NULL GROUP BY key
)
SELECT 'unknown_charge', count(*) FROM j WHERE key IS NULL AND t_owned AND status = 'succeeded' AND net > 0
UNION ALL SELECT 'duplicate_charge', count(*) FROM per
  WHERE owned AND state IN ('succeeded', 'unknown', 'processing') AND succ >= 2
UNION ALL SELECT 'currency_mismatch', count(*) FROM per
  WHERE owned AND state IN ('succeeded', 'unknown') AND succ = 1 AND cur_diff
UNION ALL SELECT 'amount_mismatch', count(*) FROM per
  WHERE owned AND state IN ('succeeded', 'unknown') AND succ = 1 AND NOT cur_diff AND amt_diff
UNION ALL SELECT 'status_mismatch', count(*) FROM per
  WHERE owned AND ((state IN ('failed', 'pending') AND succ >= 1)
                   OR (state = 'succeeded' AND succ = 0 AND bad > 0 AND since + $5::interval <= $4))
UNION ALL SELECT 'missing_at_provider', count(*) FROM per
  WHERE owned AND state = 'succeeded' AND succ = 0 AND bad = 0 AND since + $5::interval <= $4
UNION ALL SELECT 'stuck_intent', count(*) FROM per
  WHERE owned AND state IN ('processing', 'unknown') AND charges = 0 AND since + $5::interval <= $4`
