#!/usr/bin/env bash
# Runs stripe-mock (github.com/stripe/stripe-mock, installed with `go install`
# when it is not on PATH or in GOBIN) on free ports of 127.0.0.1, for the
# tests that check request shapes against Stripe's OpenAPI spec.
#
#   scripts/stripe-mock.sh run CMD [ARGS...]
#       start stripe-mock, run CMD with STRIPE_MOCK_URL set, stop stripe-mock,
#       exit with CMD's status
#   eval "$(scripts/stripe-mock.sh start)"
#       start stripe-mock in the background and print
#       `export STRIPE_MOCK_URL=http://127.0.0.1:PORT STRIPE_MOCK_PID=PID`
#   scripts/stripe-mock.sh stop PID
#       stop a stripe-mock started with `start`
set -euo pipefail

STRIPE_MOCK_VERSION=v0.203.0

find_bin() {
  local gobin
  if command -v stripe-mock >/dev/null 2>&1; then command -v stripe-mock; return; fi
  gobin=$(go env GOBIN)
  [ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
  if [ ! -x "$gobin/stripe-mock" ]; then
    echo "scripts/stripe-mock.sh: installing stripe-mock $STRIPE_MOCK_VERSION" >&2
    (cd / && GOFLAGS= go install "github.com/stripe/stripe-mock@$STRIPE_MOCK_VERSION") >&2
  fi
  echo "$gobin/stripe-mock"
}

# start_mock sets MOCK_PID and MOCK_URL. Both listeners get a port chosen by
# the system (an empty port), so parallel runs never collide; the HTTP
# address is read from stripe-mock's own "Listening for HTTP" line.
start_mock() {
  local bin log addr i
  bin=$(find_bin)
  log=$(mktemp "${TMPDIR:-/tmp}/stripe-mock.XXXXXX")
  "$bin" -http-addr 127.0.0.1: -https-addr 127.0.0.1: >"$log" 2>&1 </dev/null &
  MOCK_PID=$!
  addr=
  for i in $(seq 1 300); do
    addr=$(sed -n 's/^Listening for HTTP at address: //p' "$log")
    [ -n "$addr" ] && break
    if ! kill -0 "$MOCK_PID" 2>/dev/null; then
      echo "scripts/stripe-mock.sh: stripe-mock exited:" >&2
      cat "$log" >&2
      rm -f "$log"
      exit 1
    fi
    sleep 0.1
  done
  rm -f "$log"
  if [ -z "$addr" ]; then
    echo "scripts/stripe-mock.sh: stripe-mock did not start listening within 30s" >&2
    kill "$MOCK_PID" 2>/dev/null || true
    exit 1
  fi
  MOCK_URL="http://$addr"
}

stop_mock() {
  local pid=$1
  if [ -r "/proc/$pid/cmdline" ] && ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q stripe-mock; then
    echo "scripts/stripe-mock.sh: process $pid is not stripe-mock" >&2
    return 1
  fi
  kill "$pid" 2>/dev/null || return 0
  local i
  for i in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

case "${1:-}" in
  run)
    shift
    [ $# -gt 0 ] || { echo "usage: $0 run CMD [ARGS...]" >&2; exit 2; }
    start_mock
    trap 'stop_mock "$MOCK_PID"' EXIT
    echo "scripts/stripe-mock.sh: stripe-mock at $MOCK_URL (pid $MOCK_PID)" >&2
    status=0
    STRIPE_MOCK_URL=$MOCK_URL "$@" || status=$?
    exit "$status"
    ;;
  start)
    start_mock
    echo "export STRIPE_MOCK_URL=$MOCK_URL STRIPE_MOCK_PID=$MOCK_PID"
    ;;
  stop)
    [ -n "${2:-}" ] || { echo "usage: $0 stop PID" >&2; exit 2; }
    stop_mock "$2"
    ;;
  *)
    echo "usage: $0 run CMD [ARGS...] | start | stop PID" >&2
    exit 2
    ;;
esac
