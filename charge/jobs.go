package charge

import (
	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

// ChargeArgs is the job that charges one intent.
type ChargeArgs struct {
	IntentKey string `json:"intent_key"`
	// Retry numbers a person's retry of a stuck intent (the remedy's id),
	// so that its job is a new one even while River keeps the intent's
	// earlier job; zero for the job queued with the intent.
	Retry int64 `json:"retry,omitempty"`
}

// Kind implements river.JobArgs.
func (ChargeArgs) Kind() string { return "charge" }

// RefundArgs is the job that sends one refund intent to its provider.
type RefundArgs struct {
	IntentKey string `json:"intent_key"`
	// Retry is ChargeArgs.Retry for refunds.
	Retry int64 `json:"retry,omitempty"`
}

// Kind implements river.JobArgs.
func (RefundArgs) Kind() string { return "refund" }

// intentArgs are the jobs that act on one intent at its provider.
type intentArgs interface {
	river.JobArgs
	intentKey() string
	intentKind() ledger.IntentKind
}

func (a ChargeArgs) intentKey() string           { return a.IntentKey }
func (ChargeArgs) intentKind() ledger.IntentKind { return ledger.IntentCharge }
func (a RefundArgs) intentKey() string           { return a.IntentKey }
func (RefundArgs) intentKind() ledger.IntentKind { return ledger.IntentRefund }

func (s *Service) chargeOpts() *river.InsertOpts {
	// Unique by intent key within River's retention of its jobs (completed
	// ones are kept 24 hours): a second enqueue of the same intent is a no-op
	// meanwhile. The ledger's claims, not River, are what stop a second
	// charge.
	return &river.InsertOpts{Queue: queue.QueueCharges, MaxAttempts: s.cfg.MaxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// refundOpts are chargeOpts: refunds share the charges' queue, its
// concurrency and its capped retries.
func (s *Service) refundOpts() *river.InsertOpts { return s.chargeOpts() }

// DeliverEventArgs is the job that delivers one event to one endpoint.
type DeliverEventArgs struct {
	EventID  string `json:"event_id"`
	Endpoint string `json:"endpoint"`
}

// Kind implements river.JobArgs.
func (DeliverEventArgs) Kind() string { return "deliver_event" }

// AddWorkers registers the charge, refund and event-delivery workers.
func AddWorkers(w *river.Workers, s *Service) {
	river.AddWorker(w, &intentWorker[ChargeArgs]{svc: s})
	river.AddWorker(w, &intentWorker[RefundArgs]{svc: s})
	river.AddWorker(w, &eventWorker{svc: s})
}
