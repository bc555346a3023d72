package engine

import (
	"context"
	"errors"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
)

// RiverClient is a River client whose transactional methods take ledger
// transactions, whatever the engine's transaction type.
type RiverClient interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertTx(ctx context.Context, tx ledger.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertManyTx(ctx context.Context, tx ledger.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
	JobList(ctx context.Context, params *river.JobListParams) (*river.JobListResult, error)
	JobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
}

// ErrOtherEngine reports a ledger transaction given to another engine's
// driver.
var ErrOtherEngine = errors.New("engine: transaction belongs to another engine")

// Unwrapper returns the engine's own transaction behind a ledger
// transaction, or false when tx belongs to another engine.
type Unwrapper[TTx any] func(tx ledger.Tx) (TTx, bool)

// NewRiverClient creates a River client with River's driver d for a store
// package's Driver.
func NewRiverClient[TTx any](d riverdriver.Driver[TTx], unwrap Unwrapper[TTx], cfg *river.Config) (RiverClient, error) {
	c, err := river.NewClient(d, cfg)
	if err != nil {
		return nil, err
	}
	return &riverClient[TTx]{Client: c, unwrap: unwrap}, nil
}

type riverClient[TTx any] struct {
	*river.Client[TTx]
	unwrap Unwrapper[TTx]
}

func (c *riverClient[TTx]) InsertTx(ctx context.Context, tx ledger.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	t, ok := c.unwrap(tx)
	if !ok {
		return nil, ErrOtherEngine
	}
	return c.Client.InsertTx(ctx, t, args, opts)
}

func (c *riverClient[TTx]) InsertManyTx(ctx context.Context, tx ledger.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	t, ok := c.unwrap(tx)
	if !ok {
		return nil, ErrOtherEngine
	}
	return c.Client.InsertManyTx(ctx, t, params)
}

// CompleteJobTx marks job completed inside tx for a store package's Driver.
func CompleteJobTx[TTx any](ctx context.Context, unwrap Unwrapper[TTx], tx ledger.Tx, job *rivertype.JobRow) error {
	t, ok := unwrap(tx)
	if !ok {
		return ErrOtherEngine
	}
	_, err := river.JobCompleteTx[riverdriver.Driver[TTx]](ctx, t, &river.Job[anyArgs]{JobRow: job})
	return err
}

// anyArgs stands for any job's arguments when completing it: the updated
// job River decodes into it is not used.
type anyArgs struct{}

func (anyArgs) Kind() string { return "" }
