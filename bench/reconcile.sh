#!/usr/bin/env bash
# Benchmarks a reconcile run against PostgreSQL, in one go:
#   (a) a reconcile run end to end and (d) one with --dry-run (bench/cmd/runbench,
#       through the reconciler package),
#   (b) a hand-written SQL FULL OUTER JOIN computing the same finding counts,
#   (c) COPY ... TO STDOUT (FORMAT binary) of the run's inputs (the statements
#       the store's scans run),
# on a bulk day of N intents and about as many provider transactions (0.1% of
# each anomaly), printing wall and CPU times and the ratios (bench/run.sh does
# only this part, repeated). Before that,
# the in-memory matcher alone (go test -bench: BenchmarkMatchRows is fed the
# store's compact rows as a run is, BenchmarkMatch ledger structs) and its
# peak memory on a large run.
#
# Uses TEST_DATABASE_URL when set; otherwise starts a throwaway PostgreSQL
# (as scripts/test.sh does) and stops it afterwards.
#
#   bench/reconcile.sh                 1M x 1M in PostgreSQL, matcher bench, 10M x 10M RSS
#   N=200000 RSS_N=1000000 bench/reconcile.sh
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-1000000}
RSS_N=${RSS_N:-10000000}

# The in-memory parts run first, before PostgreSQL starts: a server still
# checkpointing or vacuuming the bulk load would share the machine with them.
echo "== in-memory matcher (MATCH_BENCH_N=$N)"
# One process each: what one leaves on the heap would slow the other's GC.
go test -c -o /tmp/reconcile-matcher.test ./matcher/
for b in BenchmarkMatchRows BenchmarkMatch; do
  MATCH_BENCH_N=$N /tmp/reconcile-matcher.test -test.run '^$' -test.bench "^$b\$" -test.benchtime 10x | grep -E '^Benchmark'
done

echo
echo "== peak memory of the in-memory matcher, ${RSS_N} intents x about ${RSS_N} transactions"
go build -o /tmp/reconcile-matchrss ./bench/cmd/matchrss
if [ -x /usr/bin/time ]; then
  /usr/bin/time -v /tmp/reconcile-matchrss -n "$RSS_N" 2>&1 | grep -E 'matchrss|Maximum resident|Elapsed'
else
  /tmp/reconcile-matchrss -n "$RSS_N"
fi

echo
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  bin=""
  if command -v initdb >/dev/null 2>&1; then bin=$(dirname "$(command -v initdb)"); fi
  if [ -z "$bin" ]; then for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && bin=$d; done; fi
  [ -n "$bin" ] || { echo "bench/reconcile.sh: PostgreSQL binaries not found; install postgresql" >&2; exit 1; }
  dir=$(mktemp -d "${TMPDIR:-/tmp}/reconcile-bench-pg.XXXXXX")
  as=()
  if [ "$(id -u)" = 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$dir"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-k $dir -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=1GB -c work_mem=256MB -c max_wal_size=4GB" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  trap '"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
  export TEST_DATABASE_URL="postgres://postgres@/postgres?host=$dir&sslmode=disable"
fi

echo "== reconcile run vs SQL vs COPY (N=$N)"
go run ./bench/cmd/runbench -n "$N" -repeat "${REPEAT:-1}"

