package charge

import (
	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/queue"
)

// ChargeArgs is the job that charges one intent.
type ChargeArgs struct {
	IntentKey string `json:"intent_key"`
}

// Kind implements river.JobArgs.
func (ChargeArgs) Kind() string { return "charge" }

func (s *Service) chargeOpts() *river.InsertOpts {
	// Unique by intent key within River's retention of its jobs (completed
	// ones are kept 24 hours): a second enqueue of the same intent is a no-op
	// meanwhile. The ledger's claims, not River, are what stop a second
	// charge.
	return &river.InsertOpts{Queue: queue.QueueCharges, MaxAttempts: s.cfg.MaxAttempts,
		UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// DeliverEventArgs is the job that delivers one event to one endpoint.
type DeliverEventArgs struct {
	EventID  string `json:"event_id"`
	Endpoint string `json:"endpoint"`
}

// Kind implements river.JobArgs.
func (DeliverEventArgs) Kind() string { return "deliver_event" }

// AddWorkers registers the charge and event-delivery workers.
func AddWorkers(w *river.Workers, s *Service) {
	river.AddWorker(w, &chargeWorker{svc: s})
	river.AddWorker(w, &eventWorker{svc: s})
}
