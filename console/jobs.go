package console

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/queue"
)

// QueueJobs are the discarded jobs of River's queue q, with secrets
// scrubbed from their errors by redact.
func QueueJobs(q *queue.Queue, redact func(string) string) Jobs {
	return queueJobs{q: q, redact: redact}
}

type queueJobs struct {
	q      *queue.Queue
	redact func(string) string
}

func (j queueJobs) Discarded(ctx context.Context, limit int) ([]Job, error) {
	res, err := j.q.List(ctx, river.NewJobListParams().First(limit).States(rivertype.JobStateDiscarded).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc))
	if err != nil {
		return nil, err
	}
	out := make([]Job, 0, len(res.Jobs))
	for _, r := range res.Jobs {
		out = append(out, j.view(r))
	}
	return out, nil
}

func (j queueJobs) Retry(ctx context.Context, id int64) (Job, error) {
	r, err := j.q.Retry(ctx, id)
	if err != nil {
		return Job{}, err
	}
	return j.view(r), nil
}

func (j queueJobs) view(r *rivertype.JobRow) Job {
	when := r.ScheduledAt
	if r.FinalizedAt != nil {
		when = *r.FinalizedAt
	}
	return Job{ID: r.ID, Kind: r.Kind, State: string(r.State), Subject: queue.JobSubject(r), Attempt: r.Attempt,
		MaxAttempts: r.MaxAttempts, When: when.UTC().Truncate(time.Second), LastError: j.redact(queue.LastError(r))}
}
