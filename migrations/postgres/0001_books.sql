-- +goose Up
CREATE TABLE intents (
    key              text PRIMARY KEY,
    provider         text NOT NULL,
    amount           numeric NOT NULL CHECK (amount > 0),
    currency         text NOT NULL,
    customer         text NOT NULL DEFAULT '',
    reference        text NOT NULL,
    metadata         jsonb,
    state            text NOT NULL CHECK (state IN ('pending', 'processing', 'succeeded', 'failed', 'unknown')),
    claim_token      bigint NOT NULL DEFAULT 0,
    claim_owner      text NOT NULL DEFAULT '',
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL
);
CREATE INDEX intents_provider_created_idx ON intents (provider, created_at);
CREATE INDEX intents_open_idx ON intents (provider, state, created_at)
    WHERE state IN ('pending', 'processing', 'unknown');

CREATE TABLE attempts (
    id           bigserial PRIMARY KEY,
    intent_key   text NOT NULL REFERENCES intents (key),
    number       integer NOT NULL,
    claim_token  bigint NOT NULL,
    provider_ref text NOT NULL DEFAULT '',
    outcome      text NOT NULL,
    error        text NOT NULL DEFAULT '',
    started_at   timestamptz NOT NULL,
    finished_at  timestamptz,
    UNIQUE (intent_key, number)
);
CREATE INDEX attempts_provider_ref_idx ON attempts (provider_ref) WHERE provider_ref <> '';

CREATE TABLE provider_txns (
    provider      text NOT NULL,
    txn_id        text NOT NULL,
    type          text NOT NULL,
    status        text NOT NULL,
    amount        numeric NOT NULL,
    currency      text NOT NULL,
    occurred_at   timestamptz NOT NULL,
    reference     text NOT NULL DEFAULT '',
    provider_ref  text NOT NULL DEFAULT '',
    counterparty  text NOT NULL DEFAULT '',
    linked_txn_id text NOT NULL DEFAULT '',
    first_seen_at timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    PRIMARY KEY (provider, txn_id)
);
CREATE INDEX provider_txns_occurred_idx ON provider_txns (provider, occurred_at);

CREATE TABLE provider_txn_sources (
    provider    text NOT NULL,
    txn_id      text NOT NULL,
    channel     text NOT NULL,
    ref         text NOT NULL,
    raw         bytea,
    received_at timestamptz NOT NULL,
    PRIMARY KEY (provider, txn_id, channel, ref),
    FOREIGN KEY (provider, txn_id) REFERENCES provider_txns (provider, txn_id)
);

CREATE TABLE runs (
    id               bigserial PRIMARY KEY,
    key              text NOT NULL UNIQUE,
    provider         text NOT NULL,
    window_from      timestamptz NOT NULL,
    window_to        timestamptz NOT NULL,
    state            text NOT NULL CHECK (state IN ('running', 'finished', 'failed')),
    owner            text NOT NULL,
    attempt          integer NOT NULL DEFAULT 1,
    lease_expires_at timestamptz NOT NULL,
    started_at       timestamptz NOT NULL,
    finished_at      timestamptz,
    counts           jsonb NOT NULL DEFAULT '{}',
    error            text NOT NULL DEFAULT ''
);
CREATE INDEX runs_provider_idx ON runs (provider, window_from);

CREATE TABLE findings (
    id                text PRIMARY KEY,
    kind              text NOT NULL,
    severity          text NOT NULL,
    provider          text NOT NULL,
    intent_key        text NOT NULL DEFAULT '',
    provider_txn_ids  jsonb NOT NULL DEFAULT '[]',
    expected_amount   numeric,
    expected_currency text NOT NULL DEFAULT '',
    actual_amount     numeric,
    actual_currency   text NOT NULL DEFAULT '',
    at_risk_amount    numeric,
    at_risk_currency  text NOT NULL DEFAULT '',
    counterparty      text NOT NULL DEFAULT '',
    detail            text NOT NULL DEFAULT '',
    occurred_at       timestamptz NOT NULL,
    status            text NOT NULL CHECK (status IN ('open', 'acknowledged', 'resolved')),
    first_seen_at     timestamptz NOT NULL,
    last_seen_at      timestamptz NOT NULL,
    first_run_id      bigint NOT NULL DEFAULT 0,
    last_run_id       bigint NOT NULL DEFAULT 0,
    acknowledged_at   timestamptz,
    resolved_at       timestamptz,
    resolved_by       text NOT NULL DEFAULT '',
    note              text NOT NULL DEFAULT ''
);
CREATE INDEX findings_window_idx ON findings (provider, occurred_at);
CREATE INDEX findings_status_idx ON findings (status, last_seen_at);

CREATE TABLE quarantine (
    id          bigserial PRIMARY KEY,
    source      text NOT NULL,
    origin      text NOT NULL DEFAULT '',
    line        integer NOT NULL DEFAULT 0,
    field       text NOT NULL DEFAULT '',
    reason      text NOT NULL,
    raw         bytea,
    received_at timestamptz NOT NULL
);
CREATE INDEX quarantine_source_idx ON quarantine (source, id);

CREATE TABLE callbacks (
    id           bigserial PRIMARY KEY,
    provider     text NOT NULL,
    kind         text NOT NULL DEFAULT '',
    dedupe_key   text NOT NULL,
    body         bytea NOT NULL,
    remote_addr  text NOT NULL DEFAULT '',
    received_at  timestamptz NOT NULL,
    processed_at timestamptz,
    error        text NOT NULL DEFAULT '',
    UNIQUE (provider, dedupe_key)
);
CREATE INDEX callbacks_unprocessed_idx ON callbacks (provider, id) WHERE processed_at IS NULL;

CREATE TABLE alerts (
    id           bigserial PRIMARY KEY,
    subject      text NOT NULL,
    reason       text NOT NULL,
    provider     text NOT NULL DEFAULT '',
    run_id       bigint NOT NULL DEFAULT 0,
    severity     text NOT NULL DEFAULT '',
    channel      text NOT NULL DEFAULT '',
    state        text NOT NULL CHECK (state IN ('pending', 'delivered', 'discarded')),
    message_ts   text NOT NULL DEFAULT '',
    thread_ts    text NOT NULL DEFAULT '',
    attempts     integer NOT NULL DEFAULT 0,
    error        text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    delivered_at timestamptz,
    UNIQUE (subject, reason)
);
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
