package database

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
)

// DefaultReadMaxLag is how far a read replica may lag behind the primary
// before reads go to the primary (database_read_max_lag).
const DefaultReadMaxLag = 30 * time.Second

// DefaultCatchUp is how long Replica.Fresh waits for the replica to replay
// what the primary had written when it was asked.
const DefaultCatchUp = 2 * time.Second

// ReplicaApplicationName names the replica's connections in
// pg_stat_activity, unless its URL names them.
const ReplicaApplicationName = "reconcile-replica"

// ReplicaOptions tune OpenReplica. Zero values take the defaults noted.
type ReplicaOptions struct {
	// MaxLag bounds the replica's lag; default DefaultReadMaxLag.
	MaxLag time.Duration
	// CatchUp bounds Fresh's wait; default DefaultCatchUp.
	CatchUp time.Duration
	// MaxConns caps the replica's pool; 0 keeps pgx's default.
	MaxConns int32
	// ApplicationName names the connections; default
	// ReplicaApplicationName.
	ApplicationName string
	// Lag measures how far the replica lags; default the standby's own
	// measure (now() - pg_last_xact_replay_timestamp(), none when it is not
	// in recovery). Tests put theirs.
	Lag func(ctx context.Context) (time.Duration, error)
	// Logger hears when the replica starts and stops lagging beyond
	// MaxLag; default discards.
	Logger *slog.Logger
}

// Replica is a read replica of the books (a PostgreSQL streaming standby),
// opened read-only, beside the primary it follows. Reads that tolerate a
// bounded delay (reports, the console's lists) take Reader; reads that
// must see everything written before them (a run's matching) take Fresh.
// Both fall back to the primary when the replica lags, cannot tell its lag
// or cannot be reached.
type Replica struct {
	primary *pgstore.Store
	store   *pgstore.Store
	opts    ReplicaOptions
	// lagging is whether the last lag check sent reads to the primary,
	// so that only changes are logged.
	lagging atomic.Bool
}

// OpenReplica opens rawURL, a PostgreSQL standby of primary, read-only.
// The replica need not be reachable yet: until it is, reads go to the
// primary.
func OpenReplica(ctx context.Context, rawURL string, primary ledger.Store, opts ReplicaOptions) (*Replica, error) {
	p, ok := primary.(*pgstore.Store)
	if !ok {
		return nil, errors.New("read replica: the primary is not PostgreSQL: a read replica needs PostgreSQL")
	}
	if e, err := Engine(rawURL); err != nil || e != ledger.EnginePostgres {
		return nil, fmt.Errorf("read replica %s: want postgres://...", Redact(rawURL))
	}
	if opts.MaxLag <= 0 {
		opts.MaxLag = DefaultReadMaxLag
	}
	if opts.CatchUp <= 0 {
		opts.CatchUp = DefaultCatchUp
	}
	if opts.ApplicationName == "" {
		opts.ApplicationName = ReplicaApplicationName
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := pgstore.Open(ctx, rawURL, pgstore.Config{MaxConns: opts.MaxConns, ReadOnly: true, ApplicationName: opts.ApplicationName})
	if err != nil {
		return nil, fmt.Errorf("open read replica %s: %w", Redact(rawURL), err)
	}
	if opts.Lag == nil {
		opts.Lag = s.ReplicaLag
	}
	return &Replica{primary: p, store: s, opts: opts}, nil
}

// Store returns the replica's own store, read-only.
func (r *Replica) Store() ledger.Store { return r.store }

// MaxLag returns the bound on the replica's lag.
func (r *Replica) MaxLag() time.Duration { return r.opts.MaxLag }

// Close closes the replica's pool (not the primary's).
func (r *Replica) Close() { r.store.Close() }

// Reader returns the books to read what tolerates a delay of up to MaxLag
// from: the replica while it lags no more than that, the primary
// otherwise. why says which and, for the primary, why.
func (r *Replica) Reader(ctx context.Context) (ledger.Reader, string) {
	if why, _ := r.checkLag(ctx); why != "" {
		return r.primary, "primary: " + why
	}
	return r.store, "replica"
}

// Fresh returns the replica when it holds everything the primary had
// written when Fresh was called: it lags no more than MaxLag (or has
// replayed no transaction since it started, so that its lag cannot be
// told), and it replays up to the primary's current position within
// CatchUp. Otherwise it returns nil, and why the caller should read the
// primary.
func (r *Replica) Fresh(ctx context.Context) (ledger.Reader, string) {
	if why, err := r.checkLag(ctx); why != "" && !errors.Is(err, pgstore.ErrNothingReplayed) {
		return nil, why
	}
	// A replica that stops answering while the run waits must not hold
	// the run longer than the wait.
	ctx, cancel := context.WithTimeout(ctx, r.opts.CatchUp+lagCheckTimeout)
	defer cancel()
	pos, err := r.primary.WALPosition(ctx)
	if err != nil {
		return nil, "the primary's position is unknown: " + err.Error()
	}
	deadline := time.Now().Add(r.opts.CatchUp)
	wait := 5 * time.Millisecond
	for {
		ok, err := r.store.Replayed(ctx, pos)
		switch {
		case err != nil:
			return nil, "the replica cannot say what it replayed: " + err.Error()
		case ok:
			return r.store, ""
		case !time.Now().Before(deadline):
			return nil, fmt.Sprintf("the replica did not replay up to the primary's position %s within %s", pos, r.opts.CatchUp)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err().Error()
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// lagCheckTimeout bounds a lag check, so that a replica that does not
// answer (a host that drops packets) sends reads to the primary in that
// time rather than holding them.
const lagCheckTimeout = 2 * time.Second

// checkLag measures the replica's lag and says why reads must go to the
// primary, or "" when they may go to the replica, with the error that kept
// the lag from being told. It logs when that changes.
func (r *Replica) checkLag(ctx context.Context) (string, error) {
	lctx, cancel := context.WithTimeout(ctx, lagCheckTimeout)
	lag, err := r.opts.Lag(lctx)
	cancel()
	why := ""
	switch {
	case err != nil:
		why = "the replica cannot tell its lag: " + err.Error()
	case lag > r.opts.MaxLag:
		why = fmt.Sprintf("the replica lags %s, more than %s (database_read_max_lag)", lag.Round(time.Millisecond), r.opts.MaxLag)
	}
	if was := r.lagging.Swap(why != ""); was != (why != "") {
		if why != "" {
			r.opts.Logger.LogAttrs(ctx, slog.LevelWarn, "read replica: reading the primary", slog.String("why", why))
		} else {
			r.opts.Logger.LogAttrs(ctx, slog.LevelInfo, "read replica: caught up, reading it again",
				slog.Duration("lag", lag), slog.Duration("max_lag", r.opts.MaxLag))
		}
	}
	return why, err
}
