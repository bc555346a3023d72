package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

// ErrNothingReplayed reports a standby that has replayed no transaction
// since it started: how far it lags cannot be told.
var ErrNothingReplayed = errors.New("the standby has replayed no transaction yet")

// ReplicaLag measures how far this database, a streaming standby, lags
// behind its primary. A standby whose WAL receiver is streaming and that
// has replayed all the WAL it received holds what the primary has sent: it
// has no lag. Otherwise the lag is now() - pg_last_xact_replay_timestamp(),
// the age of the last transaction it replayed; on a primary that commits
// nothing for a while that measure grows with the quiet, so it errs on the
// side of lagging. A database that is not in recovery (a primary, or the
// same server standing in for a replica) has no lag.
//
// Only a role with the privileges of pg_read_all_stats (pg_monitor has
// them) sees the WAL receiver's status; for another role the standby is
// never taken as caught up, and its lag is the age of its last replayed
// transaction. A WAL receiver cut off from its primary says it streams
// until wal_receiver_timeout (60s by default) passes without a word: for
// that long a standby behind a broken link counts as caught up.
func (s *Store) ReplicaLag(ctx context.Context) (time.Duration, error) {
	var inRecovery, caughtUp bool
	var micros *int64
	err := s.pool.QueryRow(ctx, `SELECT pg_is_in_recovery(),
		COALESCE(pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
			AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming'), false),
		(EXTRACT(EPOCH FROM (now() - pg_last_xact_replay_timestamp())) * 1000000)::bigint`).Scan(&inRecovery, &caughtUp, &micros)
	switch {
	case err != nil:
		return 0, ledger.Wrap("replica lag", "", translate(err))
	case !inRecovery, caughtUp:
		return 0, nil
	case micros == nil:
		return 0, ledger.Wrap("replica lag", "", ErrNothingReplayed)
	case *micros < 0:
		// The standby's clock is behind the primary's.
		return 0, nil
	}
	return time.Duration(*micros) * time.Microsecond, nil
}

// WALPosition returns how far the write-ahead log of this database, the
// primary, has been written (pg_current_wal_insert_lsn()): everything
// committed before the call lies before it. Replayed on a standby tells
// whether it has caught up with that position.
func (s *Store) WALPosition(ctx context.Context) (string, error) {
	var pos string
	err := s.pool.QueryRow(ctx, `SELECT pg_current_wal_insert_lsn()::text`).Scan(&pos)
	return pos, ledger.Wrap("wal position", "", translate(err))
}

// Replayed reports whether this database holds everything the primary had
// written up to pos (WALPosition): a standby that has replayed that far,
// or a database that is not in recovery.
func (s *Store) Replayed(ctx context.Context, pos string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT NOT pg_is_in_recovery() OR COALESCE(pg_last_wal_replay_lsn() >= $1::pg_lsn, false)`,
		pos).Scan(&ok)
	return ok, ledger.Wrap("replayed", pos, translate(err))
}
