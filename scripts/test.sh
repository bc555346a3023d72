#!/usr/bin/env bash
# Runs the test suite. When TEST_DATABASE_URL is not set it starts a throwaway
# PostgreSQL (initdb into a temporary directory, unix socket only, no TCP port)
# and stops it afterwards. Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

pg_bin() {
  if command -v initdb >/dev/null 2>&1; then dirname "$(command -v initdb)"; return; fi
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then pg_config --bindir; return; fi
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  echo "scripts/test.sh: PostgreSQL binaries (initdb, pg_ctl) not found; install the postgresql package" >&2
  exit 1
}

cleanup() { :; }
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  bin=$(pg_bin)
  dir=$(mktemp -d "${TMPDIR:-/tmp}/reconcile-pg.XXXXXX")
  as=()
  if [ "$(id -u)" = 0 ]; then
    # initdb refuses to run as root: run the server as the postgres user.
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    chown postgres "$dir"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; exit 1; }
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-k $dir -c listen_addresses= -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=256MB" \
    start >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
  cleanup() {
    "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
  }
  trap cleanup EXIT
  export TEST_DATABASE_URL="postgres://postgres@/postgres?host=$dir&sslmode=disable"
  export PGBIN="$bin"
  echo "scripts/test.sh: throwaway PostgreSQL at $dir" >&2
fi

# SQLite's C code, transpiled to Go, is single-threaded by design; instrumenting
# it for the race detector makes every SQLite test about eight times slower and
# checks none of our code, so it is compiled without instrumentation.
go test -race -gcflags='modernc.org/...=-race=false' -timeout 20m "${@:-./...}"
