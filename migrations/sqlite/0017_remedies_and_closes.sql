-- +goose Up
-- What people do to fix a finding beyond resolving it: refund the excess of a
-- duplicate or an overpayment, write a small difference off, retry or cancel
-- a stuck intent. A remedy above its currency's approval threshold waits for
-- a second person (awaiting_approval) and is then applied, rejected or
-- expired; a refund is confirmed when a run sees the money go back. Amounts
-- are text, exact.
CREATE TABLE remedies (
    id            INTEGER PRIMARY KEY,
    finding_id    TEXT NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('refund', 'writeoff', 'retry', 'cancel')),
    status        TEXT NOT NULL CHECK (status IN ('awaiting_approval', 'applied', 'confirmed', 'rejected', 'expired')),
    provider      TEXT NOT NULL,
    intent_key    TEXT NOT NULL DEFAULT '',
    txn_id        TEXT NOT NULL DEFAULT '',
    refund_key    TEXT NOT NULL DEFAULT '',
    amount        TEXT,
    currency      TEXT NOT NULL DEFAULT '',
    note          TEXT NOT NULL DEFAULT '',
    requested_by  TEXT NOT NULL,
    requested_via TEXT NOT NULL,
    requested_at  TEXT NOT NULL,
    expires_at    TEXT,
    decided_by    TEXT NOT NULL DEFAULT '',
    decided_via   TEXT NOT NULL DEFAULT '',
    decided_at    TEXT,
    decision_note TEXT NOT NULL DEFAULT '',
    applied_at    TEXT,
    confirmed_at  TEXT,
    CHECK ((amount IS NULL) = (currency = ''))
) STRICT;
CREATE INDEX remedies_finding_idx ON remedies (finding_id, id);
CREATE INDEX remedies_waiting_idx ON remedies (requested_at) WHERE status = 'awaiting_approval';
CREATE INDEX remedies_refund_key_idx ON remedies (refund_key) WHERE refund_key <> '';
-- One request of a kind (and transaction) waits at a time, and one refund
-- of a transaction is ever live: asking twice, from any surface, is refused.
CREATE UNIQUE INDEX remedies_waiting_once ON remedies (finding_id, kind, txn_id) WHERE status = 'awaiting_approval';
CREATE UNIQUE INDEX remedies_refund_once ON remedies (finding_id, txn_id)
    WHERE kind = 'refund' AND status IN ('awaiting_approval', 'applied', 'confirmed');

-- A refund job that cannot be sent yet because the books lack what the
-- provider needs (the charge's M-Pesa receipt) waits rather than fails: one
-- row per waiting refund intent, removed when it is sent or given up.
CREATE TABLE refund_waits (
    intent_key TEXT PRIMARY KEY,
    reason     TEXT NOT NULL,
    since      TEXT NOT NULL,
    checked_at TEXT NOT NULL,
    next_at    TEXT NOT NULL,
    checks     INTEGER NOT NULL DEFAULT 1
) STRICT;

-- Corrections of imported intents: an amount amended or an intent voided,
-- by whom, when and why. The intent row holds the corrected values.
CREATE TABLE intent_changes (
    id         INTEGER PRIMARY KEY,
    intent_key TEXT NOT NULL,
    action     TEXT NOT NULL CHECK (action IN ('amended', 'voided')),
    old_amount TEXT NOT NULL,
    new_amount TEXT NOT NULL,
    currency   TEXT NOT NULL,
    old_state  TEXT NOT NULL,
    new_state  TEXT NOT NULL,
    actor      TEXT NOT NULL,
    surface    TEXT NOT NULL,
    note       TEXT NOT NULL,
    at         TEXT NOT NULL
) STRICT;
CREATE INDEX intent_changes_intent_idx ON intent_changes (intent_key, id);
CREATE INDEX intent_changes_voided_idx ON intent_changes (intent_key) WHERE action = 'voided';

-- Month-end closes: who closed a month (of one provider, or of all when
-- provider is empty) and when, with the close report as it stood.
CREATE TABLE period_closes (
    period     TEXT NOT NULL CHECK (length(period) = 7 AND period GLOB '[0-9][0-9][0-9][0-9]-[01][0-9]'
                                    AND substr(period, 6, 2) BETWEEN '01' AND '12'),
    provider   TEXT NOT NULL DEFAULT '',
    closed_by  TEXT NOT NULL,
    closed_via TEXT NOT NULL,
    closed_at  TEXT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    summary    TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (period, provider)
) STRICT;

-- +goose Down
DROP TABLE period_closes;
DROP TABLE intent_changes;
DROP TABLE refund_waits;
DROP TABLE remedies;
