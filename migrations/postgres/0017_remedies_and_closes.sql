-- +goose Up
-- What people do to fix a finding beyond resolving it: refund the excess of a
-- duplicate or an overpayment, write a small difference off, retry or cancel
-- a stuck intent. A remedy above its currency's approval threshold waits for
-- a second person (awaiting_approval) and is then applied, rejected or
-- expired; a refund is confirmed when a run sees the money go back.
CREATE TABLE remedies (
    id            bigserial PRIMARY KEY,
    finding_id    text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('refund', 'writeoff', 'retry', 'cancel')),
    status        text NOT NULL CHECK (status IN ('awaiting_approval', 'applied', 'confirmed', 'rejected', 'expired')),
    provider      text NOT NULL,
    intent_key    text NOT NULL DEFAULT '',
    txn_id        text NOT NULL DEFAULT '',
    refund_key    text NOT NULL DEFAULT '',
    amount        numeric,
    currency      text NOT NULL DEFAULT '',
    note          text NOT NULL DEFAULT '',
    requested_by  text NOT NULL,
    requested_via text NOT NULL,
    requested_at  timestamptz NOT NULL,
    expires_at    timestamptz,
    decided_by    text NOT NULL DEFAULT '',
    decided_via   text NOT NULL DEFAULT '',
    decided_at    timestamptz,
    decision_note text NOT NULL DEFAULT '',
    applied_at    timestamptz,
    confirmed_at  timestamptz,
    CHECK ((amount IS NULL) = (currency = ''))
);
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
    intent_key text PRIMARY KEY,
    reason     text NOT NULL,
    since      timestamptz NOT NULL,
    checked_at timestamptz NOT NULL,
    next_at    timestamptz NOT NULL,
    checks     integer NOT NULL DEFAULT 1
);

-- Corrections of imported intents: an amount amended or an intent voided,
-- by whom, when and why. The intent row holds the corrected values.
CREATE TABLE intent_changes (
    id         bigserial PRIMARY KEY,
    intent_key text NOT NULL,
    action     text NOT NULL CHECK (action IN ('amended', 'voided')),
    old_amount numeric NOT NULL,
    new_amount numeric NOT NULL,
    currency   text NOT NULL,
    old_state  text NOT NULL,
    new_state  text NOT NULL,
    actor      text NOT NULL,
    surface    text NOT NULL,
    note       text NOT NULL,
    at         timestamptz NOT NULL
);
CREATE INDEX intent_changes_intent_idx ON intent_changes (intent_key, id);
CREATE INDEX intent_changes_voided_idx ON intent_changes (intent_key) WHERE action = 'voided';

-- Month-end closes: who closed a month (of one provider, or of all when
-- provider is empty) and when, with the close report as it stood.
CREATE TABLE period_closes (
    period     text NOT NULL CHECK (period ~ '^[0-9]{4}-(0[1-9]|1[0-2])$'),
    provider   text NOT NULL DEFAULT '',
    closed_by  text NOT NULL,
    closed_via text NOT NULL,
    closed_at  timestamptz NOT NULL,
    note       text NOT NULL DEFAULT '',
    summary    text NOT NULL DEFAULT '',
    PRIMARY KEY (period, provider)
);

-- +goose Down
DROP TABLE period_closes;
DROP TABLE intent_changes;
DROP TABLE refund_waits;
DROP TABLE remedies;
