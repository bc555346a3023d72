#!/usr/bin/env bash
# End-to-end charges per second through River (intent created with its job in
# one transaction, claimed, attempt recorded, instant provider, outcome and
# event recorded with the job's completion) beside pgbench's single-insert tps
# on the same PostgreSQL, and their ratio. Target: >= 0.3x. For context it
# also works as many no-op River jobs: River's own cost per job, without the
# ledger's two durable writes per charge.
#   bench/charges.sh                       throwaway durable PostgreSQL
#   BENCH_DATABASE_URL=... bench/charges.sh
#   N=5000 WORKERS=32 CLIENTS=32 DURATION=10 bench/charges.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-5000}
WORKERS=${WORKERS:-32}
CLIENTS=${CLIENTS:-32}
DURATION=${DURATION:-10}

. bench/lib.sh
bench_db
go build -o /tmp/chargebench ./bench/cmd/chargebench
pg=$(pgbench_insert "$CLIENTS" "$DURATION")
ch=$(/tmp/chargebench -url "$BENCH_DATABASE_URL" -n "$N" -workers "$WORKERS")
noop=$(/tmp/chargebench -noop -url "$BENCH_DATABASE_URL" -n "$N" -workers "$WORKERS")
printf '%-28s %10s\n' measure per_second
printf '%-28s %10.1f\n' "pgbench single insert ($CLIENTS)" "$pg"
printf '%-28s %10.1f\n' "charges through River ($WORKERS)" "$ch"
printf '%-28s %10.1f\n' "no-op River jobs ($WORKERS)" "$noop"
awk -v a="$ch" -v b="$pg" 'BEGIN { printf "%-28s %10.2f\n", "ratio", a / b }'
