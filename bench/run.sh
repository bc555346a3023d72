#!/usr/bin/env bash
# Benchmarks the reconcile run alone on PostgreSQL: loads N intents and about
# as many M-Pesa transactions directly with COPY (no import), then, REPEAT
# times in the same process, times
#   (c) binary COPY ... TO STDOUT of the columns the run reads (the
#       statements of the store's scans),
#   (b) a hand-written SQL FULL OUTER JOIN computing the finding counts,
#   (d) reconcile run --dry-run and (a) reconcile run (recording findings),
# and prints wall and CPU seconds (this process plus its PostgreSQL
# backends) and the ratios d/c, a/c (target <= 1.25) and d/b, a/b (target
# <= 0.7), with their range over the repeats. On a shared machine, the CPU
# ratios are the steadier figure.
#
# Uses TEST_DATABASE_URL when set (the server must be on this machine for
# its CPU time to be counted); otherwise starts a throwaway PostgreSQL.
#
#   bench/run.sh                       1M x 1M, 3 repeats
#   N=200000 REPEAT=5 bench/run.sh
#
# HISTORY=30,90 times instead the day's run alone and then with that many
# earlier days of the same volume in the books (a year of books costs a day
# only if the day's run reads by index): the target is within 1.2x.
#   N=200000 HISTORY=30,90 REPEAT=5 bench/run.sh
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-1000000}
REPEAT=${REPEAT:-3}

if [ -z "${TEST_DATABASE_URL:-}" ]; then
  eval "$(scripts/pgtmp.sh start)"
  trap 'scripts/pgtmp.sh stop "$PGTMP_DIR"' EXIT
  export TEST_DATABASE_URL=$PGTMP_URL
fi

go build -o /tmp/reconcile-runbench ./bench/cmd/runbench
if [ -n "${HISTORY:-}" ]; then
  /tmp/reconcile-runbench -n "$N" -repeat "$REPEAT" -history "$HISTORY"
else
  /tmp/reconcile-runbench -n "$N" -repeat "$REPEAT"
fi
