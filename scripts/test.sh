#!/usr/bin/env bash
# Runs the test suite. When TEST_DATABASE_URL is not set it starts a throwaway
# PostgreSQL (initdb into a temporary directory, unix socket only, no TCP port)
# and stops it afterwards. Extra arguments go to `go test`.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${TEST_DATABASE_URL:-}" ]; then
  eval "$(scripts/pgtmp.sh start)"
  trap 'scripts/pgtmp.sh stop "$PGTMP_DIR"' EXIT
  export TEST_DATABASE_URL="$PGTMP_URL"
  echo "scripts/test.sh: throwaway PostgreSQL at $PGTMP_DIR" >&2
fi

# stripe-mock checks the shape of Stripe requests; start one unless given.
run=(go test -race -timeout 20m "${@:-./...}")
if [ -z "${STRIPE_MOCK_URL:-}" ]; then
  scripts/stripe-mock.sh run "${run[@]}"
else
  "${run[@]}"
fi
