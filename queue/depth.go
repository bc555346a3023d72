package queue

import (
	"context"
	"database/sql"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DepthKey is a queue and a job state.
type DepthKey struct{ Queue, State string }

const depthSQL = `SELECT queue, state, count(*) FROM river_job
	WHERE state IN ('available', 'running', 'retryable', 'scheduled', 'pending', 'discarded')
	GROUP BY queue, state`

// Depth counts the jobs waiting, running or discarded, by queue and state.
func (q *Queue) Depth(ctx context.Context) (map[DepthKey]int64, error) {
	return q.depth(ctx)
}

// rowsOf is what both engines' result sets can do.
type rowsOf interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

func scanDepth(rows rowsOf) (map[DepthKey]int64, error) {
	out := map[DepthKey]int64{}
	for rows.Next() {
		var (
			k DepthKey
			n int64
		)
		if err := rows.Scan(&k.Queue, &k.State, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rows.Err()
}

func pgDepth(pool *pgxpool.Pool) func(context.Context) (map[DepthKey]int64, error) {
	return func(ctx context.Context) (map[DepthKey]int64, error) {
		rows, err := pool.Query(ctx, depthSQL)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return scanDepth(rows)
	}
}

func sqlDepth(db *sql.DB) func(context.Context) (map[DepthKey]int64, error) {
	return func(ctx context.Context) (map[DepthKey]int64, error) {
		rows, err := db.QueryContext(ctx, depthSQL)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return scanDepth(rows)
	}
}
