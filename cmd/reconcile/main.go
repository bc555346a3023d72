package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // CRON_TZ and provider zones work on machines without zoneinfo

	"github.com/reconcilehq/reconcile/schedule"
)

// Exit codes (README.md, Command line).
const (
	exitOK       = 0
	exitError    = 1
	exitUsage    = 2
	exitFindings = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runAt(ctx, args, stdin, stdout, stderr, nil)
}

// runAt is run with a clock (time.Now when nil), so tests can fix the time.
func runAt(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, clock func() time.Time) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, clock: clock}
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	a.close()
	if err == nil {
		return exitOK
	}
	if _, _, ferr := root.Find(args); ferr != nil {
		// The command line names no command: cobra stopped there.
		err = &usageError{err}
	}
	var ee *exitErr
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "reconcile:", a.redact(ee.err.Error()))
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "reconcile:", a.redact(err.Error()))
	var ue *usageError
	var fe *schedule.FlagError
	if errors.As(err, &ue) || errors.As(err, &fe) {
		fmt.Fprintln(stderr, "Run 'reconcile --help' for usage.")
		return exitUsage
	}
	return exitError
}

// usageError is a mistake in the command line: exit code 2. A bad flag
// value found by another package (schedule.FlagError) is one too.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return &usageError{fmt.Errorf(format, args...)} }

// exitErr ends a command with a specific code (3 for findings), printing
// err if it is set.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}
