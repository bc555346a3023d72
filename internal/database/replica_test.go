package database_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
)

// lagProbe is a replica lag the test sets.
type lagProbe struct {
	mu  sync.Mutex
	lag time.Duration
	err error
}

func (p *lagProbe) set(lag time.Duration, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lag, p.err = lag, err
}

func (p *lagProbe) measure(context.Context) (time.Duration, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lag, p.err
}

// lockedBuffer is a log sink safe for concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestReplicaReads stands the test database in for its own replica, on a
// second pool with an application name of its own: reads go through that
// pool (pg_stat_activity shows its connection) while the lag is within the
// bound, and to the primary beyond it or when the lag cannot be told, with
// the reason; the change is logged once each way. The replica's
// connections refuse writes.
func TestReplicaReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	primary, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "reconcile-replica-" + hex.EncodeToString(b)
	probe := &lagProbe{lag: time.Second}
	var logs lockedBuffer
	rep, err := database.OpenReplica(ctx, url, primary, database.ReplicaOptions{MaxLag: 30 * time.Second, ApplicationName: name,
		Lag: probe.measure, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	reg := ledger.PullRegistration{Provider: "mpesa", ShortCode: "174379", RegisteredAt: time.Now(), By: "cli:test"}
	if err := primary.RecordPullRegistration(ctx, reg); err != nil {
		t.Fatal(err)
	}

	// Within the bound: the replica, whose pool is the one with our name.
	rd, why := rep.Reader(ctx)
	if rd != rep.Store() || why != "replica" {
		t.Fatalf("lag 1s: %T (%s), want the replica", rd, why)
	}
	if _, err := rd.ListRuns(ctx, "", 10); err != nil {
		t.Fatal(err)
	}
	var conns int
	if err := rep.Store().(*pgstore.Store).Pool().QueryRow(ctx,
		`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid = pg_backend_pid()`, name).Scan(&conns); err != nil || conns != 1 {
		t.Errorf("the replica's connection is not named %s in pg_stat_activity: %d (%v)", name, conns, err)
	}
	if err := primary.(*pgstore.Store).Pool().QueryRow(ctx,
		`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid = pg_backend_pid()`, name).Scan(&conns); err != nil || conns != 0 {
		t.Errorf("the primary's connection is named %s: %d (%v)", name, conns, err)
	}
	if fresh, why := rep.Fresh(ctx); fresh != rep.Store() || why != "" {
		t.Errorf("Fresh within the bound on a server not in recovery: %T (%s), want the replica", fresh, why)
	}
	err = rep.Store().RecordPullRegistration(ctx, reg)
	if err == nil || !strings.Contains(err.Error(), "read-only transaction") {
		t.Errorf("a write through the replica: %v, want it refused as read-only", err)
	}

	// Beyond the bound, twice: the primary, with why; logged once.
	probe.set(45*time.Second, nil)
	for range 2 {
		rd, why = rep.Reader(ctx)
		if rd != primary || why != "primary: the replica lags 45s, more than 30s (database_read_max_lag)" {
			t.Errorf("lag 45s: %T (%s), want the primary", rd, why)
		}
	}
	if fresh, why := rep.Fresh(ctx); fresh != nil || !strings.Contains(why, "lags 45s") {
		t.Errorf("Fresh at lag 45s: %T (%s), want none", fresh, why)
	}
	if n := strings.Count(logs.String(), "read replica: reading the primary"); n != 1 {
		t.Errorf("the change to the primary was logged %d times, want once:\n%s", n, logs.String())
	}
	if got, err := rd.(ledger.Store).GetPullRegistration(ctx, "mpesa", "174379"); err != nil || got.By != "cli:test" {
		t.Errorf("read from the primary: %+v (%v)", got, err)
	}

	// A lag that cannot be told sends reads to the primary too.
	probe.set(0, errors.New("no answer"))
	if rd, why := rep.Reader(ctx); rd != primary || why != "primary: the replica cannot tell its lag: no answer" {
		t.Errorf("unknown lag: %T (%s), want the primary", rd, why)
	}

	// Caught up again: the replica, logged once.
	probe.set(0, nil)
	if rd, why := rep.Reader(ctx); rd != rep.Store() || why != "replica" {
		t.Errorf("caught up: %T (%s), want the replica", rd, why)
	}
	if n := strings.Count(logs.String(), "read replica: caught up, reading it again"); n != 1 {
		t.Errorf("catching up was logged %d times, want once:\n%s", n, logs.String())
	}
}

// TestReplicaLagOfAPrimary measures the lag with the engine's own queries:
// a server not in recovery has none and holds everything the primary
// wrote, so both Reader and Fresh read it.
func TestReplicaLagOfAPrimary(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	primary, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	rep, err := database.OpenReplica(ctx, url, primary, database.ReplicaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	if lag, err := rep.Store().(*pgstore.Store).ReplicaLag(ctx); err != nil || lag != 0 {
		t.Errorf("lag of a server not in recovery: %s (%v), want none", lag, err)
	}
	pos, err := primary.(*pgstore.Store).WALPosition(ctx)
	if err != nil || !strings.Contains(pos, "/") {
		t.Fatalf("WAL position %q (%v)", pos, err)
	}
	if ok, err := rep.Store().(*pgstore.Store).Replayed(ctx, pos); err != nil || !ok {
		t.Errorf("replayed %s: %v (%v), want true", pos, ok, err)
	}
	if rd, why := rep.Reader(ctx); rd != rep.Store() || why != "replica" {
		t.Errorf("Reader: %T (%s)", rd, why)
	}
	if rd, why := rep.Fresh(ctx); rd != rep.Store() || why != "" {
		t.Errorf("Fresh: %T (%s)", rd, why)
	}
	if rep.MaxLag() != database.DefaultReadMaxLag {
		t.Errorf("max lag %s, want the default", rep.MaxLag())
	}
}

// TestReplicaNeedsPostgres: SQLite has no read replica, as primary or as
// replica.
func TestReplicaNeedsPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	lite := dbtest.SQLite(t)
	if _, err := database.OpenReplica(ctx, dbtest.PostgresBaseURL(t), lite, database.ReplicaOptions{}); err == nil ||
		!strings.Contains(err.Error(), "needs PostgreSQL") {
		t.Errorf("a SQLite primary: %v", err)
	}
	pg := dbtest.Postgres(t)
	if _, err := database.OpenReplica(ctx, "sqlite:x.db", pg, database.ReplicaOptions{}); err == nil ||
		!strings.Contains(err.Error(), "want postgres://") {
		t.Errorf("a SQLite replica: %v", err)
	}
}

// TestReplicaThatDoesNotAnswer: a lag check that gets no answer gives up
// in bounded time and reads go to the primary.
func TestReplicaThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.PostgresURL(t)
	primary, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	silent := func(ctx context.Context) (time.Duration, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	rep, err := database.OpenReplica(ctx, url, primary, database.ReplicaOptions{Lag: silent})
	if err != nil {
		t.Fatal(err)
	}
	defer rep.Close()
	start := time.Now()
	rd, why := rep.Reader(ctx)
	if rd != primary || !strings.Contains(why, "cannot tell its lag: context deadline exceeded") {
		t.Errorf("a silent replica: %T (%s), want the primary", rd, why)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the lag check took %s", took)
	}
}
