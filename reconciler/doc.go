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
// With a read replica (Config.Replica), the matching's reads (the scans of
// the span and the look-ups of its leftovers) go to the replica when it
// holds everything the primary had written once the run pulled; otherwise,
// or when a read on it fails, they go to the primary. The claim, the pull
// and the writing transaction, with every read inside it, stay on the
// primary.
//
// It also offers the findings workflow (acknowledge, resolve) on what runs
// wrote. It owns no SQL and no wire formats: the store and the pullers do
// the I/O, the matcher decides, and rendering belongs to package report.
package reconciler
