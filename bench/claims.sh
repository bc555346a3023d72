#!/usr/bin/env bash
# Compares the ledger's create-intent path with pgbench running a single
# INSERT ... ON CONFLICT DO NOTHING transaction into the same intents table, on
# the same PostgreSQL, at 1, 8 and 32 clients, and prints both throughputs
# and their ratio. Target: ledger >= 0.8x pgbench at 32 clients. Each side
# runs ROUNDS times, alternating, and keeps its best, so that load from
# elsewhere on the machine does not favour one side.
#   bench/claims.sh            throwaway durable PostgreSQL (fsync on)
#   BENCH_DATABASE_URL=... bench/claims.sh   an existing database (migrated here)
#   DURATION=10 CLIENTS="1 8 32" bench/claims.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-2}
CLIENTS=${CLIENTS:-"1 8 32"}

. bench/lib.sh
bench_db
go build -o /tmp/claimbench ./bench/cmd/claimbench

printf '%-8s %14s %14s %8s\n' clients pgbench_tps ledger_tps ratio
for c in $CLIENTS; do
  pg=0 ld=0
  for r in $(seq "$ROUNDS"); do
    p=$(pgbench_insert "$c" "$DURATION")
    l=$(/tmp/claimbench -url "$BENCH_DATABASE_URL" -clients "$c" -duration "${DURATION}s" -prefix "ledger-$c-$r-$RANDOM")
    pg=$(awk -v a="$pg" -v b="$p" 'BEGIN { print (b > a ? b : a) }')
    ld=$(awk -v a="$ld" -v b="$l" 'BEGIN { print (b > a ? b : a) }')
  done
  awk -v c="$c" -v pg="$pg" -v ld="$ld" 'BEGIN { printf "%-8s %14.1f %14.1f %8.2f\n", c, pg, ld, ld / pg }'
done
