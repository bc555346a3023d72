#!/usr/bin/env bash
# Starts or stops a throwaway PostgreSQL in a temporary directory, listening on
# a unix socket only (no TCP port to clash with).
#   eval "$(scripts/pgtmp.sh start [durable])"   exports PGTMP_DIR, PGTMP_URL, PGBIN
#   scripts/pgtmp.sh standby "$PGTMP_DIR"         a streaming standby of that server (same exports)
#   scripts/pgtmp.sh stop "$PGTMP_DIR"
# By default durability is off (fsync, synchronous_commit) for fast tests;
# "durable" keeps PostgreSQL's defaults, for benchmarks. PGTMP_OPTS adds
# server settings, e.g. PGTMP_OPTS="-c max_wal_size=8GB".
set -euo pipefail

pg_bin() {
  # The directory of the real initdb (not of a link to it), which holds
  # the other server programs too (pg_ctl, pg_basebackup).
  if command -v initdb >/dev/null 2>&1; then dirname "$(readlink -f "$(command -v initdb)")"; return; fi
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return; fi
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  echo "pgtmp: PostgreSQL binaries (initdb, pg_ctl) not found; install the postgresql package" >&2
  exit 1
}

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-}" in
start)
  bin=$(pg_bin)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/reconcile-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then
    # initdb refuses to run as root: the server runs as the postgres user.
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$dir"
  fi
  opts="-k $dir -c listen_addresses= -c max_connections=400 -c shared_buffers=256MB"
  if [ "${2:-}" != durable ]; then
    opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
  opts="$opts ${PGTMP_OPTS:-}"
  as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$opts" start >/dev/null \
    || { cat "$dir/server.log" >&2; exit 1; }
  echo "export PGTMP_DIR='$dir' PGBIN='$bin' PGTMP_URL='postgres://postgres@/postgres?host=$dir&sslmode=disable'"
  ;;
standby)
  # A streaming standby of the server started in PRIMARY_DIR (a base
  # backup over the primary's socket, replaying its WAL as it comes), hot:
  # it answers read-only queries.
  primary=${2:?usage: pgtmp.sh standby PRIMARY_DIR}
  bin=$(pg_bin)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/reconcile-pg.XXXXXX")
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; fi
  as_pg "$bin/pg_basebackup" -h "$primary" -U postgres -D "$dir/data" -R -X stream -c fast --no-sync \
    >"$dir/basebackup.log" 2>&1 || { cat "$dir/basebackup.log" >&2; exit 1; }
  # max_connections may not be below the primary's.
  opts="-k $dir -c listen_addresses= -c max_connections=400 -c shared_buffers=128MB -c fsync=off ${PGTMP_OPTS:-}"
  as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$opts" start >/dev/null \
    || { cat "$dir/server.log" >&2; exit 1; }
  echo "export PGTMP_DIR='$dir' PGBIN='$bin' PGTMP_URL='postgres://postgres@/postgres?host=$dir&sslmode=disable'"
  ;;
stop)
  dir=${2:?usage: pgtmp.sh stop DIR}
  bin=$(pg_bin)
  as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: pgtmp.sh start [durable] | standby PRIMARY_DIR | stop DIR" >&2
  exit 2
  ;;
esac
