// Package schedule decides which reconcile windows to run and when: it parses
// cron specifications (robfig/cron, with CRON_TZ= and an optional seconds
// field), cuts time into windows aligned to midnight in the provider's zone,
// and lists the windows a tick should reconcile: the one that just closed, a
// lookback of earlier ones (late evidence), and any missed while nothing was
// running. It holds no state and does no I/O.
package schedule
