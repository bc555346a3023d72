#!/usr/bin/env bash
# Compares the ledger's create-intent path with pgbench running a single
# INSERT ... ON CONFLICT DO NOTHING transaction into the same intents table, on
# the same PostgreSQL, at 1, 8 and 32 clients, and prints both throughputs
# and their ratio. Target: ledger >= 0.8x pgbench at 32 clients.
#   bench/claims.sh            throwaway durable PostgreSQL (fsync on)
#   BENCH_DATABASE_URL=... bench/claims.sh   an existing database (migrated here)
#   DURATION=10 CLIENTS="1 8 32" bench/claims.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CLIENTS=${CLIENTS:-"1 8 32"}

if [ -z "${BENCH_DATABASE_URL:-}" ]; then
  eval "$(scripts/pgtmp.sh start durable)"
  trap 'scripts/pgtmp.sh stop "$PGTMP_DIR"' EXIT
  BENCH_DATABASE_URL=$PGTMP_URL
fi
command -v pgbench >/dev/null || { echo "claims.sh: pgbench not found (Debian package postgresql-client)" >&2; exit 1; }

go build -o /tmp/reconcile-bench ./cmd/reconcile
go build -o /tmp/claimbench ./bench/cmd/claimbench
/tmp/reconcile-bench migrate --database-url "$BENCH_DATABASE_URL" >/dev/null

script=$(mktemp)
cat >"$script" <<'SQL'
\set k random(1, 2000000000)
INSERT INTO intents (key, provider, amount, currency, customer, reference, state, created_at, updated_at)
VALUES ('pgbench-' || :client_id || '-' || :k, 'mpesa', 100, 'KES', '', 'PGBENCHREF01', 'pending', now(), now())
ON CONFLICT (key) DO NOTHING;
SQL

printf '%-8s %14s %14s %8s\n' clients pgbench_tps ledger_tps ratio
for c in $CLIENTS; do
  j=$(( c < $(nproc) ? c : $(nproc) ))
  pg=$(pgbench -n -M prepared -c "$c" -j "$j" -T "$DURATION" -f "$script" "$BENCH_DATABASE_URL" 2>/dev/null \
    | awk '/^tps/ {print $3; exit}')
  ld=$(/tmp/claimbench -url "$BENCH_DATABASE_URL" -clients "$c" -duration "${DURATION}s" -prefix "ledger-$c-$RANDOM")
  awk -v c="$c" -v pg="$pg" -v ld="$ld" 'BEGIN { printf "%-8s %14.1f %14.1f %8.2f\n", c, pg, ld, ld / pg }'
done
rm -f "$script"
