package database_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
)

// TestStreamingStandby runs the read replica against a real streaming
// standby of a server of the test's own, with the standby's own measures:
// a standby just started, that has replayed no transaction, is read once
// it has replayed the primary's commit; with replay paused, Fresh gives up
// after its wait and says why, the standby lacks the primary's last
// commit, and once its lag passes the bound Reader reads the primary;
// resumed, both read the standby again. The standby refuses writes.
func TestStreamingStandby(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	primaryURL, standbyURL := dbtest.Standby(t)
	primary, err := database.Open(ctx, primaryURL, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	// fresh judges by what the standby replayed (its lag bound out of
	// reach); bounded judges by the lag, bounded at a second.
	fresh, err := database.OpenReplica(ctx, standbyURL, primary, database.ReplicaOptions{MaxLag: time.Hour, CatchUp: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	var logs lockedBuffer
	bounded, err := database.OpenReplica(ctx, standbyURL, primary, database.ReplicaOptions{MaxLag: time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer bounded.Close()
	standby := fresh.Store()
	ctl, err := pgx.Connect(ctx, standbyURL)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(context.WithoutCancel(ctx))
	var inRecovery bool
	if err := ctl.QueryRow(ctx, `SELECT pg_is_in_recovery()`).Scan(&inRecovery); err != nil || !inRecovery {
		t.Fatalf("the standby is not in recovery: %v (%v)", inRecovery, err)
	}
	register := func(code string) ledger.PullRegistration {
		t.Helper()
		reg := ledger.PullRegistration{Provider: "mpesa", ShortCode: code, RegisteredAt: time.Now().UTC().Truncate(time.Second), By: "cli:" + code}
		if err := primary.RecordPullRegistration(ctx, reg); err != nil {
			t.Fatal(err)
		}
		return reg
	}
	holds := func(code string) bool {
		t.Helper()
		got, err := standby.GetPullRegistration(ctx, "mpesa", code)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			return false
		case err != nil:
			t.Fatalf("read %s on the standby: %v", code, err)
		case got.By != "cli:"+code:
			t.Fatalf("read %s on the standby: %+v", code, got)
		}
		return true
	}

	pause := func() {
		t.Helper()
		if _, err := ctl.Exec(ctx, `SELECT pg_wal_replay_pause()`); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "replay to pause", func() bool {
			var state string
			return ctl.QueryRow(ctx, `SELECT pg_get_wal_replay_pause_state()`).Scan(&state) == nil && state == "paused"
		})
	}
	resume := func() {
		t.Helper()
		if _, err := ctl.Exec(ctx, `SELECT pg_wal_replay_resume()`); err != nil {
			t.Error(err)
		}
	}

	// received waits for the standby to receive (not replay) all the
	// primary wrote.
	received := func() {
		t.Helper()
		pos, err := primary.(*pgstore.Store).WALPosition(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the standby to receive "+pos, func() bool {
			var ok bool
			return ctl.QueryRow(ctx, `SELECT pg_last_wal_receive_lsn() >= $1::pg_lsn`, pos).Scan(&ok) == nil && ok
		})
	}

	// Just started, the standby has replayed no transaction: its lag
	// cannot be told. Fresh waits for it to replay the primary's commit.
	pause()
	register("174379")
	received()
	if _, err := standby.(*pgstore.Store).ReplicaLag(ctx); !errors.Is(err, pgstore.ErrNothingReplayed) {
		t.Fatalf("the lag of a standby that replayed nothing: %v, want %v", err, pgstore.ErrNothingReplayed)
	}
	resumed := make(chan struct{})
	go func() {
		defer close(resumed)
		time.Sleep(300 * time.Millisecond)
		resume()
	}()
	rd, why := fresh.Fresh(ctx)
	<-resumed
	if rd != standby || why != "" {
		t.Fatalf("Fresh after a commit on the primary: %T (%s), want the standby", rd, why)
	}
	if !holds("174379") {
		t.Fatal("Fresh read the standby before it replayed the primary's commit")
	}
	if lag, err := standby.(*pgstore.Store).ReplicaLag(ctx); err != nil || lag > time.Minute {
		t.Errorf("the lag of a standby streaming: %s (%v)", lag, err)
	}
	err = standby.RecordPullRegistration(ctx, ledger.PullRegistration{Provider: "mpesa", ShortCode: "600000", RegisteredAt: time.Now(), By: "x"})
	if err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Errorf("a write on the standby: %v, want it refused", err)
	}

	// Replay paused: the next commit stays on the primary.
	pause()
	register("600638")
	start := time.Now()
	rd, why = fresh.Fresh(ctx)
	if rd != nil || !strings.Contains(why, "did not replay up to the primary's position") {
		t.Errorf("Fresh with replay paused: %T (%s), want none", rd, why)
	}
	if took := time.Since(start); took < 2*time.Second || took > 10*time.Second {
		t.Errorf("Fresh with replay paused returned after %s, want its 2s wait", took)
	}
	if holds("600638") {
		t.Fatal("the standby holds a commit made while its replay was paused")
	}
	waitFor(t, "the lag to pass its bound", func() bool {
		rd, why := bounded.Reader(ctx)
		return rd == primary && strings.HasPrefix(why, "primary: the replica lags ")
	})
	if got, err := primary.GetPullRegistration(ctx, "mpesa", "600638"); err != nil || got.By != "cli:600638" {
		t.Errorf("the primary's own registration: %+v (%v)", got, err)
	}

	// Resumed: Fresh waits for the replay, and a standby that has replayed
	// all it received has no lag, though no commit followed.
	resume()
	if rd, why := fresh.Fresh(ctx); rd != standby || why != "" {
		t.Fatalf("Fresh after replay resumed: %T (%s), want the standby", rd, why)
	}
	if !holds("600638") {
		t.Fatal("the standby lacks the commit made while paused after resuming")
	}
	waitFor(t, "Reader to read the standby again", func() bool {
		rd, why := bounded.Reader(ctx)
		return rd == bounded.Store() && why == "replica"
	})
	for _, msg := range []string{"read replica: reading the primary", "read replica: caught up, reading it again"} {
		if n := strings.Count(logs.String(), msg); n != 1 {
			t.Errorf("%q logged %d times, want once:\n%s", msg, n, logs.String())
		}
	}
}

// waitFor polls cond for up to 20 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
