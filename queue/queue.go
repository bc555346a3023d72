package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/ledger/sqlitestore"
)

// Queue names.
const (
	QueueCharges = "charges"
	QueueEvents  = "events"
	QueueAlerts  = "alerts"
	QueueRuns    = "runs"
)

// Config configures the River client. Without Workers the client only
// inserts and lists (the CLI); with them it also works jobs (serve).
type Config struct {
	Workers *river.Workers
	// Queues maps queue names to their concurrency; default one worker per
	// queue that has workers.
	Queues       map[string]int
	PeriodicJobs []*river.PeriodicJob
	Logger       *slog.Logger
	// ID names this client among replicas; default River's (host + time).
	ID string
	// JobTimeout bounds one try of a job; default 1 minute.
	JobTimeout time.Duration
	// RescueStuckJobsAfter is when a running job whose worker died is tried
	// again; default 2 minutes (at least JobTimeout).
	RescueStuckJobsAfter time.Duration
	RetryPolicy          river.ClientRetryPolicy
	// MaxAttempts caps tries of jobs that do not set their own.
	MaxAttempts int
	// FetchPollInterval is how often idle workers look for jobs; default River's.
	FetchPollInterval time.Duration
	// FetchCooldown is the least time between two fetches of jobs; it caps
	// throughput at about (workers / cooldown) jobs a second. Default 10ms.
	FetchCooldown time.Duration
	ErrorHandler  river.ErrorHandler
	// CompletedJobRetention keeps completed jobs this long; default River's 24 h.
	CompletedJobRetention time.Duration
	// NoLeader keeps this client out of leader election: it schedules no
	// periodic jobs and runs no maintenance (a replica without the
	// scheduler role).
	NoLeader bool
}

// Queue is a River client on the ledger's engine.
type Queue struct {
	engine ledger.Engine
	pg     *river.Client[pgx.Tx]
	lite   *river.Client[*sql.Tx]
	depth  func(context.Context) (map[DepthKey]int64, error)
}

// New creates the River client on store's database.
func New(store ledger.Store, cfg Config) (*Queue, error) {
	rc := &river.Config{
		Logger:                      cfg.Logger,
		ID:                          cfg.ID,
		JobTimeout:                  orDefault(cfg.JobTimeout, time.Minute),
		RescueStuckJobsAfter:        orDefault(cfg.RescueStuckJobsAfter, 2*time.Minute),
		RetryPolicy:                 cfg.RetryPolicy,
		MaxAttempts:                 cfg.MaxAttempts,
		PeriodicJobs:                cfg.PeriodicJobs,
		ErrorHandler:                cfg.ErrorHandler,
		CompletedJobRetentionPeriod: cfg.CompletedJobRetention,
		FetchPollInterval:           cfg.FetchPollInterval,
		LeaderElectionDisabled:      cfg.NoLeader,
	}
	if rc.RescueStuckJobsAfter < rc.JobTimeout {
		rc.RescueStuckJobsAfter = rc.JobTimeout
	}
	if rc.Logger == nil {
		rc.Logger = slog.New(slog.DiscardHandler)
	}
	rc.FetchCooldown = orDefault(cfg.FetchCooldown, 10*time.Millisecond)
	if rc.FetchPollInterval > 0 && rc.FetchPollInterval < rc.FetchCooldown {
		rc.FetchCooldown = rc.FetchPollInterval
	}
	if cfg.Workers != nil {
		rc.Workers = cfg.Workers
		rc.Queues = map[string]river.QueueConfig{}
		for name, n := range cfg.Queues {
			if n > 0 {
				rc.Queues[name] = river.QueueConfig{MaxWorkers: n}
			}
		}
		if len(rc.Queues) == 0 {
			rc.Queues[river.QueueDefault] = river.QueueConfig{MaxWorkers: 1}
		}
	}
	q := &Queue{engine: store.Engine()}
	var err error
	switch s := store.(type) {
	case *pgstore.Store:
		q.pg, err = river.NewClient(riverpgxv5.New(s.Pool()), rc)
		q.depth = pgDepth(s.Pool())
	case *sqlitestore.Store:
		// SQLite has one writer; River polls instead of listening.
		rc.PollOnly = true
		q.lite, err = river.NewClient(riversqlite.New(s.DB()), rc)
		q.depth = sqlDepth(s.DB())
	default:
		return nil, fmt.Errorf("queue: unsupported store %T", store)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: %w", err)
	}
	return q, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

var errEngine = errors.New("queue: transaction belongs to another engine")

// InsertTx enqueues args inside the ledger transaction tx: the job exists if
// and only if the transaction commits.
func (q *Queue) InsertTx(ctx context.Context, tx ledger.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	if q.pg != nil {
		ptx, ok := pgstore.Unwrap(tx)
		if !ok {
			return nil, errEngine
		}
		return q.pg.InsertTx(ctx, ptx, args, opts)
	}
	stx, ok := sqlitestore.Unwrap(tx)
	if !ok {
		return nil, errEngine
	}
	return q.lite.InsertTx(ctx, stx, args, opts)
}

// Insert enqueues args on its own.
func (q *Queue) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	if q.pg != nil {
		return q.pg.Insert(ctx, args, opts)
	}
	return q.lite.Insert(ctx, args, opts)
}

// CompleteTx marks job completed inside tx, so that the job completes if and
// only if the outcome it recorded in tx commits. It works only inside a
// River worker.
func CompleteTx[T river.JobArgs](ctx context.Context, tx ledger.Tx, job *river.Job[T]) error {
	switch tx.Engine() {
	case ledger.EnginePostgres:
		ptx, ok := pgstore.Unwrap(tx)
		if !ok {
			return errEngine
		}
		_, err := river.JobCompleteTx[*riverpgxv5.Driver](ctx, ptx, job)
		return err
	default:
		stx, ok := sqlitestore.Unwrap(tx)
		if !ok {
			return errEngine
		}
		_, err := river.JobCompleteTx[*riversqlite.Driver](ctx, stx, job)
		return err
	}
}

// Start starts working jobs.
func (q *Queue) Start(ctx context.Context) error {
	if q.pg != nil {
		return q.pg.Start(ctx)
	}
	return q.lite.Start(ctx)
}

// Stop stops fetching jobs and waits for running ones to finish (or ctx to end).
func (q *Queue) Stop(ctx context.Context) error {
	if q.pg != nil {
		return q.pg.Stop(ctx)
	}
	return q.lite.Stop(ctx)
}

// StopAndCancel cancels running jobs' contexts and waits for them to return.
func (q *Queue) StopAndCancel(ctx context.Context) error {
	if q.pg != nil {
		return q.pg.StopAndCancel(ctx)
	}
	return q.lite.StopAndCancel(ctx)
}

// Subscribe delivers job events (completed, failed, ...) of the given kinds.
func (q *Queue) Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func()) {
	if q.pg != nil {
		return q.pg.Subscribe(kinds...)
	}
	return q.lite.Subscribe(kinds...)
}

// List lists jobs.
func (q *Queue) List(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error) {
	if q.pg != nil {
		return q.pg.JobList(ctx, params)
	}
	return q.lite.JobList(ctx, params)
}

// Get returns one job.
func (q *Queue) Get(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	if q.pg != nil {
		return q.pg.JobGet(ctx, id)
	}
	return q.lite.JobGet(ctx, id)
}

// Retry makes a discarded, cancelled or retryable job available to run now,
// with its attempts left as they are (River gives it one more try).
func (q *Queue) Retry(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	if q.pg != nil {
		return q.pg.JobRetry(ctx, id)
	}
	return q.lite.JobRetry(ctx, id)
}

// InsertManyTx enqueues many jobs inside the ledger transaction tx in one
// statement per engine, with the same options for each; the jobs exist if
// and only if the transaction commits. It returns how many were inserted,
// not counting unique jobs that already existed.
func (q *Queue) InsertManyTx(ctx context.Context, tx ledger.Tx, args []river.JobArgs, opts *river.InsertOpts) (int, error) {
	params := make([]river.InsertManyParams, len(args))
	for i, a := range args {
		params[i] = river.InsertManyParams{Args: a, InsertOpts: opts}
	}
	var (
		res []*rivertype.JobInsertResult
		err error
	)
	if q.pg != nil {
		ptx, ok := pgstore.Unwrap(tx)
		if !ok {
			return 0, errEngine
		}
		res, err = q.pg.InsertManyTx(ctx, ptx, params)
	} else {
		stx, ok := sqlitestore.Unwrap(tx)
		if !ok {
			return 0, errEngine
		}
		res, err = q.lite.InsertManyTx(ctx, stx, params)
	}
	n := 0
	for _, r := range res {
		if !r.UniqueSkippedAsDuplicate {
			n++
		}
	}
	return n, err
}
