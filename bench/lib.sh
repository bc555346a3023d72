# Shared by the benchmark scripts (sourced, not run).

# bench_db sets BENCH_DATABASE_URL, starting a throwaway durable PostgreSQL
# (stopped on exit) unless one is given, and migrates it.
bench_db() {
  if [ -z "${BENCH_DATABASE_URL:-}" ]; then
    eval "$(scripts/pgtmp.sh start durable)"
    trap 'scripts/pgtmp.sh stop "$PGTMP_DIR"' EXIT
    BENCH_DATABASE_URL=$PGTMP_URL
  fi
  command -v pgbench >/dev/null || { echo "bench: pgbench not found (Debian package postgresql-client)" >&2; exit 1; }
  go build -o /tmp/reconcile-bench ./cmd/reconcile
  /tmp/reconcile-bench migrate --database-url "$BENCH_DATABASE_URL" >/dev/null
}

# pgbench_insert CLIENTS SECONDS prints the tps of pgbench running one
# INSERT ... ON CONFLICT DO NOTHING transaction into the intents table.
pgbench_insert() {
  local script jobs tps
  script=$(mktemp)
  cat >"$script" <<'SQL'
\set k random(1, 2000000000)
INSERT INTO intents (key, provider, amount, currency, customer, reference, state, created_at, updated_at, amount_minor)
VALUES ('pgbench-' || :client_id || '-' || :k, 'mpesa', 100, 'KES', '', 'PGBENCHREF01', 'pending', now(), now(),
        minor_units(100, 'KES'))
ON CONFLICT (key) DO NOTHING;
SQL
  jobs=$(( $1 < $(nproc) ? $1 : $(nproc) ))
  tps=$(pgbench -n -M prepared -c "$1" -j "$jobs" -T "$2" -f "$script" "$BENCH_DATABASE_URL" 2>/dev/null | awk '/^tps/ {print $3; exit}')
  rm -f "$script"
  echo "$tps"
}
