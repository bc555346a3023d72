// Package intake stores provider callbacks durably and then interprets them:
// one code path for the HTTP endpoints, for `reconcile import callbacks`
// (ImportFile) and for reprocessing. A body is stored before anything else
// happens, so an acknowledged delivery is never lost; a duplicate delivery
// changes nothing; a body that cannot be interpreted is quarantined with the
// reason, never dropped. The sightings of a body, the outcome it gives an
// attempt and the mark that it was processed are written in one transaction.
//
// It knows no provider format (parsers are handed in) and must not change
// intents itself: that is the OutcomeApplier's job, inside its transaction.
// It does not log on success; rejected bodies are logged once, when a logger
// is given.
package intake
