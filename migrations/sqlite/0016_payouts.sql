-- +goose Up
-- As on PostgreSQL: the details of bank statement entries, the payouts
-- providers make to bank accounts and what each carries. Days are TEXT
-- YYYY-MM-DD; times the fixed-width UTC TEXT of every table.
CREATE TABLE bank_entries (
    provider      TEXT NOT NULL,
    txn_id        TEXT NOT NULL,
    statement     TEXT NOT NULL DEFAULT '',
    entry_index   INTEGER NOT NULL DEFAULT 0,
    booking_date  TEXT NOT NULL,
    value_date    TEXT,
    reversal      INTEGER NOT NULL DEFAULT 0 CHECK (reversal IN (0, 1)),
    bank_ref      TEXT NOT NULL DEFAULT '',
    end_to_end_id TEXT NOT NULL DEFAULT '',
    counterparty  TEXT NOT NULL DEFAULT '',
    text          TEXT NOT NULL DEFAULT '',
    info          TEXT NOT NULL DEFAULT '',
    code          TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (provider, txn_id)
) STRICT;

CREATE TABLE payouts (
    provider         TEXT NOT NULL,
    payout_id        TEXT NOT NULL,
    initiated_at     TEXT,
    arrival_at       TEXT,
    expected_at      TEXT NOT NULL,
    trace_id         TEXT NOT NULL DEFAULT '',
    descriptor       TEXT NOT NULL DEFAULT '',
    destination      TEXT NOT NULL DEFAULT '',
    carried_amount   TEXT,
    left_amount      TEXT,
    balance_currency TEXT NOT NULL DEFAULT '',
    first_seen_at    TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    PRIMARY KEY (provider, payout_id)
) STRICT;
CREATE INDEX payouts_expected_idx ON payouts (provider, expected_at);
CREATE INDEX payouts_trace_idx ON payouts (provider, trace_id) WHERE trace_id <> '';

CREATE TABLE payout_items (
    provider      TEXT NOT NULL,
    payout_id     TEXT NOT NULL,
    txn_id        TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    PRIMARY KEY (provider, payout_id, txn_id)
) STRICT;
CREATE INDEX payout_items_txn_idx ON payout_items (provider, txn_id);

-- +goose Down
DROP TABLE payout_items;
DROP TABLE payouts;
DROP TABLE bank_entries;
