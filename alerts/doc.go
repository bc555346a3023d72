// Package alerts turns reconcile findings into Slack messages for finance
// ops and delivers each one exactly once as far as Slack allows.
//
// It owns four things:
//
//   - Planning (Planner.Plan): inside the transaction that writes a run's
//     findings, it decides what to announce and records each announcement
//     in the ledger's alerts table, unique per (subject, reason). A finding
//     that qualifies for messages of its own is announced when opened, when
//     it escalates, when it reopens, and followed up when resolved; every
//     run gets a summary of its window's open findings, recorded only when
//     that set or its amounts changed. The caller enqueues one delivery job
//     per new alert in the same transaction, so nothing planned is lost and
//     nothing seen twice is planned twice.
//   - Messages: Block Kit blocks plus a plain-text fallback for run
//     summaries, opened, escalated, reopened and resolved findings, with
//     counterparties masked and free text scrubbed of phone numbers,
//     e-mail addresses, URLs and tokens (Preview, PreviewFindings).
//   - Delivery (Deliverer.Deliver): posts one recorded alert through an
//     incoming webhook or with a bot token (chat.postMessage, threads,
//     message metadata), paces each channel with a token bucket, classifies
//     Slack's answers into snooze (429 Retry-After), retry (5xx, timeouts,
//     network) and give-up (4xx and payload errors), and records the
//     outcome. In bot mode a retry looks for an earlier post of the same
//     alert in the channel's history before posting again.
//   - Interactions (Interactions): in bot mode with buttons, the
//     Acknowledge, Resolve and Accept suggestion buttons, verified by
//     Slack's signature and applied once per press; Accept suggestion makes
//     the manual match the finding suggests (ledger.MatchInTx) while it
//     still suggests that pair.
//
// Webhook mode cannot do three things bot mode does: thread follow-ups
// under the first message, mark that message resolved, and look up whether
// a try whose outcome is unknown (a crash between posting and recording, a
// timeout, a 5xx) did post. It posts again in that case, so a message may
// appear twice; each such re-post counts in
// reconcile_alerts_possible_duplicates_total{mode="webhook"} and is logged.
//
// Package alerts/alertstest fakes both Slack endpoints for tests.
//
// It must not own the queue (the caller wires River jobs around Deliver),
// read configuration files or the environment, log secrets, or decide what
// a finding is: findings come from the reconciler through the ledger.
package alerts
