package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// mainEnv makes the test binary act as the reconcile binary, so tests can
// start real `reconcile serve` processes (and kill them).
const mainEnv = "RECONCILE_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}
