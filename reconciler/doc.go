// Package reconciler runs reconciles: for one provider and window it claims
// the run under its stable key, optionally pulls the provider's evidence for
// the window plus the boundary tolerance, streams the intents, their
// provider references and the provider transactions from the store's bulk
// scans (compact rows, ledger.ScanStore) into the matcher, and then, in one
// transaction, upserts the findings in one batch, resolves those of the
// window that are no longer seen, settles unknown intents from provider
// evidence, calls the findings hook (alerts enqueue there) and records the
// run. A dry run does the same matching and writes nothing.
//
// It also offers the findings workflow (acknowledge, resolve) on what runs
// wrote. It owns no SQL and no wire formats: the store and the pullers do
// the I/O, the matcher decides, and rendering belongs to package report.
package reconciler
