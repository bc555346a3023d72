-- Times are TEXT in the fixed-width UTC form 2006-01-02T15:04:05.000000Z, so
-- that they sort and compare as text; amounts are exact decimal TEXT.

-- +goose Up
CREATE TABLE intents (
    key              TEXT PRIMARY KEY,
    provider         TEXT NOT NULL,
    amount           TEXT NOT NULL,
    currency         TEXT NOT NULL,
    customer         TEXT NOT NULL DEFAULT '',
    reference        TEXT NOT NULL,
    metadata         TEXT,
    state            TEXT NOT NULL CHECK (state IN ('pending', 'processing', 'succeeded', 'failed', 'unknown')),
    claim_token      INTEGER NOT NULL DEFAULT 0,
    claim_owner      TEXT NOT NULL DEFAULT '',
    lease_expires_at TEXT,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
) STRICT;
CREATE INDEX intents_provider_created_idx ON intents (provider, created_at);
CREATE INDEX intents_open_idx ON intents (provider, state, created_at)
    WHERE state IN ('pending', 'processing', 'unknown');

CREATE TABLE attempts (
    id           INTEGER PRIMARY KEY,
    intent_key   TEXT NOT NULL REFERENCES intents (key),
    number       INTEGER NOT NULL,
    claim_token  INTEGER NOT NULL,
    provider_ref TEXT NOT NULL DEFAULT '',
    outcome      TEXT NOT NULL,
    error        TEXT NOT NULL DEFAULT '',
    started_at   TEXT NOT NULL,
    finished_at  TEXT,
    UNIQUE (intent_key, number)
) STRICT;
CREATE INDEX attempts_provider_ref_idx ON attempts (provider_ref) WHERE provider_ref <> '';

CREATE TABLE provider_txns (
    provider      TEXT NOT NULL,
    txn_id        TEXT NOT NULL,
    type          TEXT NOT NULL,
    status        TEXT NOT NULL,
    amount        TEXT NOT NULL,
    currency      TEXT NOT NULL,
    occurred_at   TEXT NOT NULL,
    reference     TEXT NOT NULL DEFAULT '',
    provider_ref  TEXT NOT NULL DEFAULT '',
    counterparty  TEXT NOT NULL DEFAULT '',
    linked_txn_id TEXT NOT NULL DEFAULT '',
    first_seen_at TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (provider, txn_id)
) STRICT;
CREATE INDEX provider_txns_occurred_idx ON provider_txns (provider, occurred_at);

CREATE TABLE provider_txn_sources (
    provider    TEXT NOT NULL,
    txn_id      TEXT NOT NULL,
    channel     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    raw         BLOB,
    received_at TEXT NOT NULL,
    PRIMARY KEY (provider, txn_id, channel, ref),
    FOREIGN KEY (provider, txn_id) REFERENCES provider_txns (provider, txn_id)
) STRICT;

CREATE TABLE runs (
    id               INTEGER PRIMARY KEY,
    key              TEXT NOT NULL UNIQUE,
    provider         TEXT NOT NULL,
    window_from      TEXT NOT NULL,
    window_to        TEXT NOT NULL,
    state            TEXT NOT NULL CHECK (state IN ('running', 'finished', 'failed')),
    owner            TEXT NOT NULL,
    attempt          INTEGER NOT NULL DEFAULT 1,
    lease_expires_at TEXT NOT NULL,
    started_at       TEXT NOT NULL,
    finished_at      TEXT,
    counts           TEXT NOT NULL DEFAULT '{}',
    error            TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX runs_provider_idx ON runs (provider, window_from);

CREATE TABLE findings (
    id                TEXT PRIMARY KEY,
    kind              TEXT NOT NULL,
    severity          TEXT NOT NULL,
    provider          TEXT NOT NULL,
    intent_key        TEXT NOT NULL DEFAULT '',
    provider_txn_ids  TEXT NOT NULL DEFAULT '[]',
    expected_amount   TEXT,
    expected_currency TEXT NOT NULL DEFAULT '',
    actual_amount     TEXT,
    actual_currency   TEXT NOT NULL DEFAULT '',
    at_risk_amount    TEXT,
    at_risk_currency  TEXT NOT NULL DEFAULT '',
    counterparty      TEXT NOT NULL DEFAULT '',
    detail            TEXT NOT NULL DEFAULT '',
    occurred_at       TEXT NOT NULL,
    status            TEXT NOT NULL CHECK (status IN ('open', 'acknowledged', 'resolved')),
    first_seen_at     TEXT NOT NULL,
    last_seen_at      TEXT NOT NULL,
    first_run_id      INTEGER NOT NULL DEFAULT 0,
    last_run_id       INTEGER NOT NULL DEFAULT 0,
    acknowledged_at   TEXT,
    resolved_at       TEXT,
    resolved_by       TEXT NOT NULL DEFAULT '',
    note              TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX findings_window_idx ON findings (provider, occurred_at);
CREATE INDEX findings_status_idx ON findings (status, last_seen_at);

CREATE TABLE quarantine (
    id          INTEGER PRIMARY KEY,
    source      TEXT NOT NULL,
    origin      TEXT NOT NULL DEFAULT '',
    line        INTEGER NOT NULL DEFAULT 0,
    field       TEXT NOT NULL DEFAULT '',
    reason      TEXT NOT NULL,
    raw         BLOB,
    received_at TEXT NOT NULL
) STRICT;
CREATE INDEX quarantine_source_idx ON quarantine (source, id);

CREATE TABLE callbacks (
    id           INTEGER PRIMARY KEY,
    provider     TEXT NOT NULL,
    kind         TEXT NOT NULL DEFAULT '',
    dedupe_key   TEXT NOT NULL,
    body         BLOB NOT NULL,
    remote_addr  TEXT NOT NULL DEFAULT '',
    received_at  TEXT NOT NULL,
    processed_at TEXT,
    error        TEXT NOT NULL DEFAULT '',
    UNIQUE (provider, dedupe_key)
) STRICT;
CREATE INDEX callbacks_unprocessed_idx ON callbacks (provider, id) WHERE processed_at IS NULL;

CREATE TABLE alerts (
    id           INTEGER PRIMARY KEY,
    subject      TEXT NOT NULL,
    reason       TEXT NOT NULL,
    provider     TEXT NOT NULL DEFAULT '',
    run_id       INTEGER NOT NULL DEFAULT 0,
    severity     TEXT NOT NULL DEFAULT '',
    channel      TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'discarded')),
    message_ts   TEXT NOT NULL DEFAULT '',
    thread_ts    TEXT NOT NULL DEFAULT '',
    attempts     INTEGER NOT NULL DEFAULT 0,
    error        TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    delivered_at TEXT,
    UNIQUE (subject, reason)
) STRICT;
CREATE INDEX alerts_run_idx ON alerts (run_id, id);

-- +goose Down
DROP TABLE alerts;
DROP TABLE callbacks;
DROP TABLE quarantine;
DROP TABLE findings;
DROP TABLE runs;
DROP TABLE provider_txn_sources;
DROP TABLE provider_txns;
DROP TABLE attempts;
DROP TABLE intents;
