package queue

import "context"

// DepthKey is a queue and a job state.
type DepthKey struct{ Queue, State string }

const depthSQL = `SELECT queue, state, count(*) FROM river_job
	WHERE state IN ('available', 'running', 'retryable', 'scheduled', 'pending', 'discarded')
	GROUP BY queue, state`

// Depth counts the jobs waiting, running or discarded, by queue and state.
func (q *Queue) Depth(ctx context.Context) (map[DepthKey]int64, error) {
	rows, err := q.drv.Query(ctx, depthSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
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
