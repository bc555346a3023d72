package charge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/providers"
)

// DefaultMaxAttempts caps the tries of a charge job when Config sets none.
// With the queue's default backoff (2s doubling to 10m) they span about 40
// minutes, far inside Stripe's 24-hour idempotency key retention.
const DefaultMaxAttempts = 12

// Defaults of the other Config fields, which the CLI's configuration shares.
const (
	DefaultLease         = 2 * time.Minute
	DefaultPendingPoll   = 30 * time.Second
	DefaultPendingGiveUp = 10 * time.Minute
	// DefaultReceiptPoll and DefaultReceiptWait are how often a refund that
	// waits for evidence looks again, and for how long before it fails:
	// an M-Pesa receipt lost with its callback comes back with the next
	// pull, or with the month's statement.
	DefaultReceiptPoll = 5 * time.Minute
	DefaultReceiptWait = 35 * 24 * time.Hour
)

// Config tunes charging.
type Config struct {
	// Lease is how long a worker holds an intent; default DefaultLease. It
	// must exceed one provider call.
	Lease time.Duration
	// MaxAttempts caps the tries of a charge job; default DefaultMaxAttempts.
	MaxAttempts int
	// PendingPoll is how long to wait before asking the provider again
	// about an accepted, not yet final charge (an STK prompt); default
	// DefaultPendingPoll.
	PendingPoll time.Duration
	// PendingGiveUp is how long an attempt may stay pending before the
	// intent is marked unknown for the reconciler to settle; default
	// DefaultPendingGiveUp.
	PendingGiveUp time.Duration
	// ReceiptPoll is how often a refund that cannot be sent yet, because
	// the books lack what its provider needs (providers.ErrAwaitingEvidence:
	// the charge's M-Pesa receipt), looks again; default DefaultReceiptPoll.
	ReceiptPoll time.Duration
	// ReceiptWait is how long such a refund waits before it fails, nothing
	// sent; default DefaultReceiptWait.
	ReceiptWait time.Duration
	// Owner names this process in claims; default "worker".
	Owner string
	// Endpoints receive the outgoing events.
	Endpoints []string
	// SigningSecret signs outgoing events (HMAC-SHA256).
	SigningSecret string
}

func (c Config) withDefaults() Config {
	if c.Lease <= 0 {
		c.Lease = DefaultLease
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.PendingPoll <= 0 {
		c.PendingPoll = DefaultPendingPoll
	}
	if c.PendingGiveUp <= 0 {
		c.PendingGiveUp = DefaultPendingGiveUp
	}
	if c.ReceiptPoll <= 0 {
		c.ReceiptPoll = DefaultReceiptPoll
	}
	if c.ReceiptWait <= 0 {
		c.ReceiptWait = DefaultReceiptWait
	}
	if c.Owner == "" {
		c.Owner = "worker"
	}
	return c
}

// Enqueuer inserts jobs inside a ledger transaction; *queue.Queue is one.
type Enqueuer interface {
	InsertTx(ctx context.Context, tx ledger.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertManyTx(ctx context.Context, tx ledger.Tx, args []river.JobArgs, opts *river.InsertOpts) (int, error)
}

// Service creates intents and runs their charges.
type Service struct {
	store    Store
	chargers map[string]providers.Charger
	cfg      Config
	clock    func() time.Time
	logger   *slog.Logger
	metrics  *Metrics
	queue    Enqueuer
}

// Deps are the collaborators of a Service.
type Deps struct {
	Store Store
	// Chargers are the chargers by account scope (ledger.Scope): the
	// provider's name for its default account, provider@account for
	// another.
	Chargers map[string]providers.Charger
	Clock    func() time.Time
	Logger   *slog.Logger
	Metrics  *Metrics
}

// New returns a Service. Call UseQueue before creating intents or working
// jobs: the queue needs the workers and the workers need the queue.
func New(d Deps, cfg Config) *Service {
	s := &Service{store: d.Store, chargers: d.Chargers, cfg: cfg.withDefaults(), clock: d.Clock, logger: d.Logger, metrics: d.Metrics}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	return s
}

// UseQueue sets the queue jobs are enqueued on.
func (s *Service) UseQueue(q Enqueuer) { s.queue = q }

// CreateIntentTx creates the intent inside the caller's transaction and, when
// it is new and pending, enqueues its job in the same transaction: the job
// exists exactly when the intent does. An intent in a currency its provider
// never moves is refused (providers.CheckIntentCurrency). A charge gets a charge job; a refund
// gets a refund job when its provider can send refunds, and is refused
// unless the charge it names has succeeded. A replay of the same request
// returns the existing intent and enqueues nothing.
func (s *Service) CreateIntentTx(ctx context.Context, tx ledger.Tx, n ledger.NewIntent) (ledger.Intent, bool, error) {
	if s.queue == nil {
		return ledger.Intent{}, false, errors.New("charge: no queue (call UseQueue)")
	}
	if n.CreatedAt.IsZero() {
		n.CreatedAt = s.clock()
	}
	if err := providers.CheckIntentCurrency(n.IntentParams); err != nil {
		return ledger.Intent{}, false, ledger.Wrap("create intent", n.Key, err)
	}
	in, created, err := tx.CreateIntent(ctx, n)
	if err != nil || !created || in.State != ledger.StatePending {
		return in, created, err
	}
	if in.IsRefund() {
		return s.refundCreatedTx(ctx, tx, in)
	}
	if in.IsExpected() {
		// The customer pays it (by account number, transfer or link):
		// nothing is charged; the reconciler sums what arrives.
		return in, true, nil
	}
	if _, ok := s.chargerOf(in.IntentParams); !ok {
		return ledger.Intent{}, false, ledger.Wrap("create intent", in.Key,
			&ledger.FieldError{Field: "provider", Err: fmt.Errorf("no charger is configured for provider %q", in.Provider)})
	}
	if _, err := s.queue.InsertTx(ctx, tx, ChargeArgs{IntentKey: in.Key}, s.chargeOpts()); err != nil {
		return ledger.Intent{}, false, fmt.Errorf("charge: enqueue %s: %w", in.Key, err)
	}
	return in, true, nil
}

// refundCreatedTx completes the creation of the pending refund in, inside
// tx: a refund of a charge that has not succeeded is refused (a
// *ledger.FieldError on refund_of; the caller's transaction rolls back), and
// when the provider can send refunds the refund job is enqueued with it.
// Otherwise the refund is recorded only, for the reconciler to match with
// the refund made elsewhere.
func (s *Service) refundCreatedTx(ctx context.Context, tx ledger.Tx, in ledger.Intent) (ledger.Intent, bool, error) {
	ch, err := tx.GetIntent(ctx, in.RefundOf)
	if err != nil {
		return ledger.Intent{}, false, fmt.Errorf("charge: refund %s: charge %s: %w", in.Key, in.RefundOf, err)
	}
	if !refundable(ch, in) {
		return ledger.Intent{}, false, ledger.Wrap("create refund", in.Key, &ledger.FieldError{Field: "refund_of",
			Err: fmt.Errorf("charge %q is %s: only a succeeded charge can be refunded", ch.Key, ch.State)})
	}
	if !s.CanRefund(in.Provider) {
		return in, true, nil
	}
	if _, err := s.queue.InsertTx(ctx, tx, RefundArgs{IntentKey: in.Key}, s.refundOpts()); err != nil {
		return ledger.Intent{}, false, fmt.Errorf("charge: enqueue refund %s: %w", in.Key, err)
	}
	return in, true, nil
}

// CanRefund reports whether provider has a charger that sends refunds
// (providers.Refunder).
func (s *Service) CanRefund(provider string) bool {
	c := s.chargers[provider]
	if _, ok := c.(providers.Refunder); !ok {
		return false
	}
	if sw, ok := c.(providers.RefundSwitch); ok {
		return sw.RefundsEnabled()
	}
	return true
}

// CheckIntent refuses what could never be charged, so that a request is
// refused at create rather than failing later in the background: a
// currency the provider never moves (providers.CheckIntentCurrency, which
// CreateIntentTx applies too), then what the provider's charger says, when
// it can tell. The error wraps a *ledger.FieldError.
func (s *Service) CheckIntent(p ledger.IntentParams) error {
	if err := providers.CheckIntentCurrency(p); err != nil {
		return err
	}
	c, ok := s.chargerOf(p)
	if !ok {
		return nil // CreateIntentTx says so
	}
	rc, ok := c.(providers.RequestChecker)
	if !ok {
		return nil
	}
	return rc.CheckRequest(providers.ChargeRequest{IntentKey: p.Key, Amount: p.Amount, Customer: p.Customer,
		Reference: p.Reference, Metadata: p.Metadata, Attempt: 1})
}

// EnqueueChargesTx enqueues the charge jobs of the pending intents keys in
// one insert inside the caller's transaction (a bulk import creating them),
// and returns how many were new: a key whose job is still queued (or
// finished within River's retention) is skipped. Every intent's provider
// must have a charger (CanCharge): the caller checks before creating them.
func (s *Service) EnqueueChargesTx(ctx context.Context, tx ledger.Tx, keys []string) (int, error) {
	return s.enqueueTx(ctx, tx, keys, "charge", func(k string) river.JobArgs { return ChargeArgs{IntentKey: k} }, s.chargeOpts())
}

// EnqueueRefundsTx enqueues the refund jobs of the pending refund intents
// keys in the caller's transaction, as EnqueueChargesTx does for charges.
func (s *Service) EnqueueRefundsTx(ctx context.Context, tx ledger.Tx, keys []string) (int, error) {
	return s.enqueueTx(ctx, tx, keys, "refund", func(k string) river.JobArgs { return RefundArgs{IntentKey: k} }, s.refundOpts())
}

func (s *Service) enqueueTx(ctx context.Context, tx ledger.Tx, keys []string, what string, job func(string) river.JobArgs, opts *river.InsertOpts) (int, error) {
	if s.queue == nil {
		return 0, errors.New("charge: no queue (call UseQueue)")
	}
	args := make([]river.JobArgs, len(keys))
	for i, k := range keys {
		args[i] = job(k)
	}
	n, err := s.queue.InsertManyTx(ctx, tx, args, opts)
	if err != nil {
		return n, fmt.Errorf("charge: enqueue %d %s(s): %w", len(keys), what, err)
	}
	return n, nil
}

// chargerOf returns the charger of p's provider account: an intent of
// another account than the default one is charged through its own short
// code (config.Chargers keys them by ledger.Scope).
func (s *Service) chargerOf(p ledger.IntentParams) (providers.Charger, bool) {
	c, ok := s.chargers[ledger.Scope(p.Provider, p.Account)]
	return c, ok
}

// CanCharge reports whether provider has a charger.
func (s *Service) CanCharge(provider string) bool {
	_, ok := s.chargers[provider]
	return ok
}

// CreateIntent is CreateIntentTx in a transaction of its own.
func (s *Service) CreateIntent(ctx context.Context, n ledger.NewIntent) (in ledger.Intent, created bool, err error) {
	err = s.store.InTx(ctx, func(tx ledger.Tx) error {
		in, created, err = s.CreateIntentTx(ctx, tx, n)
		return err
	})
	return in, created, err
}
