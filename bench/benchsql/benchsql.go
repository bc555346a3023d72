// Package benchsql holds the hand-written SQL the benchmarks compare the
// reconcile run with.
package benchsql

// FindingsSQL computes the reconcile's finding counts for one provider and
// window in one statement, the way one would write it by hand: link each
// charge to an intent by a recorded provider reference or else by the echoed
// reference, net refunds and reversals against the charge they name, FULL
// OUTER JOIN intents with their charges, and classify.
//
// $1 provider, $2 from, $3 to, $4 now, $5 grace, $6 tolerance.
const FindingsSQL = `
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
