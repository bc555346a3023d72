// Package queue runs River on whichever engine the ledger uses, through the
// store's engine.Driver (riverpgxv5 on PostgreSQL, riversqlite on the
// embedded default); it never names a store package. It lets the rest of
// reconcile enqueue inside a ledger transaction (the outbox), complete a job in
// the transaction that records its outcome, and list and retry jobs, without
// knowing the engine. It owns no job kinds and no business logic; River owns
// retries, the discarded state (the dead letter), rescue of jobs whose worker
// died, unique jobs and periodic jobs.
package queue
