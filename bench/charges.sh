#!/usr/bin/env bash
# End-to-end charges per second through River (intent created with its job in
# one transaction, claimed, attempt recorded, instant provider, outcome and
# event recorded with the job's completion) beside pgbench's single-insert tps
# on the same PostgreSQL, and their ratio. Target: >= 0.3x.
#   bench/charges.sh                       throwaway durable PostgreSQL
#   BENCH_DATABASE_URL=... bench/charges.sh
#   N=5000 WORKERS=32 CLIENTS=32 DURATION=10 bench/charges.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-5000}
WORKERS=${WORKERS:-32}
CLIENTS=${CLIENTS:-32}
DURATION=${DURATION:-10}

if [ -z "${BENCH_DATABASE_URL:-}" ]; then
  eval "$(scripts/pgtmp.sh start durable)"
  trap 'scripts/pgtmp.sh stop "$PGTMP_DIR"' EXIT
  BENCH_DATABASE_URL=$PGTMP_URL
fi
go build -o /tmp/reconcile-bench ./cmd/reconcile
go build -o /tmp/chargebench ./bench/cmd/chargebench
/tmp/reconcile-bench migrate --database-url "$BENCH_DATABASE_URL" >/dev/null

script=$(mktemp)
cat >"$script" <<'SQL'
\set k random(1, 2000000000)
INSERT INTO intents (key, provider, amount, currency, customer, reference, state, created_at, updated_at)
VALUES ('pgbench-' || :client_id || '-' || :k, 'mpesa', 100, 'KES', '', 'PGBENCHREF01', 'pending', now(), now())
ON CONFLICT (key) DO NOTHING;
SQL
j=$(( CLIENTS < $(nproc) ? CLIENTS : $(nproc) ))
pg=$(pgbench -n -M prepared -c "$CLIENTS" -j "$j" -T "$DURATION" -f "$script" "$BENCH_DATABASE_URL" 2>/dev/null | awk '/^tps/ {print $3; exit}')
ch=$(/tmp/chargebench -url "$BENCH_DATABASE_URL" -n "$N" -workers "$WORKERS")
rm -f "$script"
printf '%-28s %10s\n' measure per_second
printf '%-28s %10.1f\n' "pgbench single insert ($CLIENTS)" "$pg"
printf '%-28s %10.1f\n' "charges through River ($WORKERS)" "$ch"
awk -v a="$ch" -v b="$pg" 'BEGIN { printf "%-28s %10.2f\n", "ratio", a / b }'
