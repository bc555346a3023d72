-- +goose Up
-- Bank accounts are providers (bank:<name>): each statement entry is a
-- provider transaction, and its details beyond the transaction (booking and
-- value days, the bank's and the payer's references, the whole remittance
-- text) are kept here, one row per transaction, written with it.
CREATE TABLE bank_entries (
    provider      text NOT NULL,
    txn_id        text NOT NULL,
    statement     text NOT NULL DEFAULT '',
    entry_index   integer NOT NULL DEFAULT 0,
    booking_date  date NOT NULL,
    value_date    date,
    reversal      boolean NOT NULL DEFAULT false,
    bank_ref      text NOT NULL DEFAULT '',
    end_to_end_id text NOT NULL DEFAULT '',
    counterparty  text NOT NULL DEFAULT '',
    text          text NOT NULL DEFAULT '',
    info          text NOT NULL DEFAULT '',
    code          text NOT NULL DEFAULT '',
    PRIMARY KEY (provider, txn_id)
);

-- A payout is a provider transaction (type payout) that should reach a bank
-- account: when (the provider's arrival date, else when it left), under
-- which trace and descriptor, and, for a sweep of a running balance, what
-- was carried in and left behind. expected_at is arrival_at when known,
-- else initiated_at: the day a bank run judges it.
CREATE TABLE payouts (
    provider         text NOT NULL,
    payout_id        text NOT NULL,
    initiated_at     timestamptz,
    arrival_at       timestamptz,
    expected_at      timestamptz NOT NULL,
    trace_id         text NOT NULL DEFAULT '',
    descriptor       text NOT NULL DEFAULT '',
    destination      text NOT NULL DEFAULT '',
    carried_amount   numeric,
    left_amount      numeric,
    balance_currency text NOT NULL DEFAULT '',
    first_seen_at    timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (provider, payout_id)
);
CREATE INDEX payouts_expected_idx ON payouts (provider, expected_at);
CREATE INDEX payouts_trace_idx ON payouts (provider, trace_id) WHERE trace_id <> '';

-- What each payout carries: one row per provider transaction of the same
-- provider (a charge, its fee, a refund, a dispute, an adjustment). A table
-- rather than a column on provider_txns: a transaction's payout is learnt
-- from other channels than the transaction (a report row names the payout
-- of a charge pulled days before), a payout is looked up by its items and
-- its items by the payout, and the hot path of imports that carry no payout
-- stays as it is.
CREATE TABLE payout_items (
    provider      text NOT NULL,
    payout_id     text NOT NULL,
    txn_id        text NOT NULL,
    first_seen_at timestamptz NOT NULL,
    PRIMARY KEY (provider, payout_id, txn_id)
);
CREATE INDEX payout_items_txn_idx ON payout_items (provider, txn_id);

-- +goose Down
DROP TABLE payout_items;
DROP TABLE payouts;
DROP TABLE bank_entries;
