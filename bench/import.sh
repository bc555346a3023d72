#!/usr/bin/env bash
# Times `reconcile import` (the real binary, built once) of generated N-line
# files in the real formats (M-Pesa portal statement, Stripe itemized
# report, intents CSV, and an MT940 statement of N entries of a bank
# account, bank:bench, whose baselines take its text lines) on PostgreSQL
# and SQLite, each into a fresh database,
# and a re-import of the same file, beside baselines in the same run:
# PostgreSQL COPY ... FROM of the same CSV into an unindexed text table;
# SQLite a plain prepared INSERT of the same rows in one transaction through
# the same driver. A second, fairer baseline is printed beside it: the
# floor, the rows the import stored written again into the same migrated,
# indexed tables in one transaction (binary COPY on PostgreSQL, the
# engine's INSERT ... SELECT from the imported file on SQLite): how far the
# import is from the physical cost of its writes. On SQLite a third,
# drvfloor, writes the same rows through the driver (multi-row INSERTs,
# each value bound, the rows in memory before the clock starts): what any
# program pays to hand the engine its values, which the engine-internal
# floor does not. Prints wall and CPU seconds (client: the timed
# process; server: the PostgreSQL server when it runs here; on a shared
# machine wall times say less than CPU times), the ratios to the baselines
# and peak RSS.
# Targets at 1M lines: import <= 4x COPY and <= 2x the SQLite baseline,
# re-import <= 2x COPY, peak RSS < 300 MiB.
#   bench/import.sh                                 1M lines, throwaway durable PostgreSQL
#   N=200000 FORMATS=mpesa,stripe bench/import.sh
#   REPEAT=3 N=200000 bench/import.sh               three rounds: medians, and the spread of wall times
#   BENCH_DATABASE_URL=postgres://... ENGINES=postgres bench/import.sh
#   BIN=/tmp/reconcile-old bench/import.sh            time another build
#   PGTMP_OPTS="-c max_wal_size=8GB" bench/import.sh  the server as tuned for large imports
#                                                     (docs/operations.md); the header prints its settings
# On PostgreSQL it then times the way from files to findings (E2E=0 skips
# it): import intents and the M-Pesa statement (N lines each) and
# `reconcile run --dry-run` over them, against COPY of both files plus the
# hand-written SQL join of bench/reconcile.sh. Target at 1M: <= 3x.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
FORMATS=${FORMATS:-mpesa,stripe,intents,bank}
ENGINES=${ENGINES:-postgres,sqlite}

pgdata=""
if [[ ",$ENGINES," == *,postgres,* && -z "${BENCH_DATABASE_URL:-}" ]]; then
  eval "$(scripts/pgtmp.sh start durable)"
  trap 'scripts/pgtmp.sh stop "$PGTMP_DIR"' EXIT
  BENCH_DATABASE_URL=$PGTMP_URL
  pgdata=$PGTMP_DIR/data
fi
# BIN=path times a reconcile binary built elsewhere (another commit).
BIN=${BIN:-/tmp/reconcile-importbench-bin}
[[ $BIN == /tmp/reconcile-importbench-bin ]] && go build -o "$BIN" ./cmd/reconcile
go build -o /tmp/importbench ./bench/cmd/importbench
echo "== reconcile import, $N lines per file ($(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg))"
/tmp/importbench -bin "$BIN" -pg "${BENCH_DATABASE_URL:-}" -pgdata "$pgdata" \
  -n "$N" -repeat "${REPEAT:-1}" -formats "$FORMATS" -engines "$ENGINES" $([[ ",$ENGINES," == *,postgres,* && ${E2E:-1} == 1 ]] && echo -e2e)
