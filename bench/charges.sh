#!/usr/bin/env bash
# Charges per second through River, end to end (intents created with their
# jobs while 32 workers claim them, record the attempt, call an instant
# provider and record the outcome, state and event with the job's
# completion), beside pgbench running the minimal SQL of the same charge on
# the same PostgreSQL: the same three transactions touching the same rows
# (create intent and job; claim the intent with its attempt and mark the job
# running; outcome, state, event and job completion). Their ratio is what
# River, the pool and Go cost on top of the SQL; target >= 0.5x. For context
# it also prints pgbench's single-insert rate, the charges worked from an
# already filled queue, and no-op River jobs (River's own ceiling).
#   bench/charges.sh                       throwaway durable PostgreSQL
#   BENCH_DATABASE_URL=... bench/charges.sh
#   N=5000 WORKERS=32 CLIENTS=32 DURATION=10 RUNS=3 bench/charges.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-5000}
WORKERS=${WORKERS:-32}
CLIENTS=${CLIENTS:-32}
DURATION=${DURATION:-10}
RUNS=${RUNS:-1}

. bench/lib.sh
bench_db
go build -o /tmp/chargebench ./bench/cmd/chargebench

# pgbench_charge CLIENTS SECONDS prints the tps of pgbench running one charge
# per script: three transactions, as the real path commits them.
pgbench_charge() {
  local script jobs tps
  script=$(mktemp)
  cat >"$script" <<'SQL'
\set k random(1, 2000000000)
\set salt random(1, 2000000000)
BEGIN;
INSERT INTO intents (key, provider, amount, currency, customer, reference, state, created_at, updated_at, amount_minor)
VALUES ('pgb-' || :client_id || '-' || :k || '-' || :salt, 'instant', 100, 'KES', '', 'PGBENCHREF01', 'pending', now(), now(),
        minor_units(100, 'KES'))
ON CONFLICT (key) DO NOTHING;
INSERT INTO river_job (args, kind, max_attempts, queue, state, unique_key, unique_states, metadata, tags)
VALUES (jsonb_build_object('intent_key', 'pgb-' || :client_id || '-' || :k || '-' || :salt), 'charge', 8, 'charges',
        'available', sha256(convert_to('charge&{"intent_key":"pgb-' || :client_id || '-' || :k || '-' || :salt || '"}', 'UTF8')),
        B'11110101', '{}', '{}')
ON CONFLICT DO NOTHING
RETURNING id AS job_id \gset
COMMIT;
BEGIN;
UPDATE river_job SET state = 'running', attempt = attempt + 1, attempted_at = now(), attempted_by = ARRAY['pgbench']
WHERE id = :job_id;
WITH upd AS (
  UPDATE intents SET state = 'processing', claim_token = claim_token + 1, claim_owner = 'pgbench',
         lease_expires_at = now() + interval '2 minutes', updated_at = now()
  WHERE key = 'pgb-' || :client_id || '-' || :k || '-' || :salt AND state = 'pending'
  RETURNING key, claim_token
)
INSERT INTO attempts (intent_key, number, claim_token, outcome, started_at)
SELECT key, 1, claim_token, 'started', now() FROM upd
RETURNING id AS attempt_id \gset
COMMIT;
BEGIN;
WITH att AS (
  UPDATE attempts SET provider_ref = 'instant-' || :attempt_id, outcome = 'succeeded', finished_at = now()
  WHERE id = :attempt_id RETURNING intent_key
), upd AS (
  UPDATE intents SET state = 'succeeded', updated_at = now(), lease_expires_at = NULL
  WHERE key = (SELECT intent_key FROM att) AND state = 'processing' AND claim_token = 1
  RETURNING key, reference
)
INSERT INTO events (id, type, intent_key, payload, created_at)
SELECT 'evt_' || md5(key), 'charge.succeeded', key,
       json_build_object('id', 'evt_' || md5(key), 'type', 'charge.succeeded', 'created_at', now(),
         'data', json_build_object('intent_key', key, 'provider', 'instant', 'amount', '100.00', 'currency', 'KES',
                                   'reference', reference, 'state', 'succeeded')), now()
FROM upd
ON CONFLICT (id) DO NOTHING;
UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = :job_id AND state = 'running';
COMMIT;
SQL
  jobs=$(( $1 < $(nproc) ? $1 : $(nproc) ))
  tps=$(pgbench -n -M prepared -c "$1" -j "$jobs" -T "$2" -f "$script" "$BENCH_DATABASE_URL" 2>/dev/null | awk '/^tps/ {print $3; exit}')
  rm -f "$script"
  echo "$tps"
}

# db_stats prints commits so far, the WAL position and the charges pgbench
# completed so far, '|'-separated.
db_stats() {
  psql -At "$BENCH_DATABASE_URL" -c "SELECT xact_commit, pg_current_wal_lsn(),
    (SELECT count(*) FROM intents WHERE key LIKE 'pgb-%' AND state = 'succeeded')
    FROM pg_stat_database WHERE datname = current_database()"
}

# per_charge BEFORE AFTER CHARGES prints commits and WAL bytes per charge.
per_charge() {
  psql -At "$BENCH_DATABASE_URL" -c "SELECT round(($(cut -d'|' -f1 <<<"$2") - $(cut -d'|' -f1 <<<"$1"))::numeric / $3, 2)
    || ' commits, ' || round(pg_wal_lsn_diff('$(cut -d'|' -f2 <<<"$2")', '$(cut -d'|' -f2 <<<"$1")') / $3) || ' WAL bytes'"
}

printf '%-40s %10s %10s %10s %10s %10s %8s\n' run pgb_insert pgb_charge charges worked noop ratio
for run in $(seq "$RUNS"); do
  pg=$(pgbench_insert "$CLIENTS" "$DURATION")
  a=$(db_stats)
  pgc=$(pgbench_charge "$CLIENTS" "$DURATION")
  b=$(db_stats)
  pgb_cost=$(per_charge "$a" "$b" "$(( $(cut -d'|' -f3 <<<"$b") - $(cut -d'|' -f3 <<<"$a") ))")
  ch=$(/tmp/chargebench -e2e -url "$BENCH_DATABASE_URL" -n "$N" -workers "$WORKERS")
  c=$(db_stats)
  ch_cost=$(per_charge "$b" "$c" "$N")
  wk=$(/tmp/chargebench -url "$BENCH_DATABASE_URL" -n "$N" -workers "$WORKERS")
  noop=$(/tmp/chargebench -noop -url "$BENCH_DATABASE_URL" -n "$N" -workers "$WORKERS")
  printf '%-40s %10.1f %10.1f %10.1f %10.1f %10.1f %8.2f\n' "$run ($CLIENTS clients, $WORKERS workers)" \
    "$pg" "$pgc" "$ch" "$wk" "$noop" "$(awk -v a="$ch" -v b="$pgc" 'BEGIN { print a / b }')"
done
echo "per charge, last run: pgbench $pgb_cost; River $ch_cost (its fetches, completions and the bench's polling included)"
echo "pgb_insert: pgbench single INSERT tps; pgb_charge: pgbench charges/s (3 transactions each);"
echo "charges: end-to-end charges/s through River; worked: charges/s from a filled queue;"
echo "noop: no-op River jobs/s; ratio: charges / pgb_charge (target >= 0.5)"
