-- +goose Up
-- As on PostgreSQL: an intent may be an expected payment, with a due date
-- and an amount tolerance, and references are stored beside their normal
-- form (ref_norm, filled by migration 14 and then by the writers, in Go).
-- SQLite changes a CHECK constraint by rebuilding the table; the foreign
-- key from attempts is checked at commit, when intents exists again.
PRAGMA defer_foreign_keys = ON;
CREATE TABLE intents_new (
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
    updated_at       TEXT NOT NULL,
    kind             TEXT NOT NULL DEFAULT 'charge' CHECK (kind IN ('charge', 'refund', 'expected')),
    refund_of        TEXT NOT NULL DEFAULT '' CHECK ((kind = 'refund') = (refund_of <> '')),
    due_at           TEXT,
    tolerance        TEXT,
    ref_norm         TEXT,
    CHECK (kind = 'expected' OR (due_at IS NULL AND tolerance IS NULL))
) STRICT;
INSERT INTO intents_new (key, provider, amount, currency, customer, reference, metadata, state, claim_token,
    claim_owner, lease_expires_at, created_at, updated_at, kind, refund_of)
SELECT key, provider, amount, currency, customer, reference, metadata, state, claim_token,
    claim_owner, lease_expires_at, created_at, updated_at, kind, refund_of FROM intents;
DROP TABLE intents;
ALTER TABLE intents_new RENAME TO intents;
CREATE INDEX intents_provider_created_idx ON intents (provider, created_at);
CREATE INDEX intents_open_idx ON intents (provider, state, created_at)
    WHERE state IN ('pending', 'processing', 'unknown');
CREATE INDEX intents_refund_of_idx ON intents (refund_of) WHERE kind = 'refund';
CREATE INDEX intents_ref_norm_idx ON intents (provider, ref_norm) WHERE ref_norm <> '';

ALTER TABLE provider_txns ADD COLUMN ref_norm TEXT;
CREATE INDEX provider_txns_ref_norm_idx ON provider_txns (provider, ref_norm) WHERE ref_norm <> '';
CREATE INDEX provider_txns_provider_ref_idx ON provider_txns (provider, provider_ref) WHERE provider_ref <> '';
CREATE INDEX provider_txns_linked_idx ON provider_txns (provider, linked_txn_id) WHERE linked_txn_id <> '';
CREATE INDEX findings_intent_idx ON findings (intent_key) WHERE intent_key <> '';

-- +goose Down
DROP INDEX findings_intent_idx;
DROP INDEX provider_txns_linked_idx;
DROP INDEX provider_txns_provider_ref_idx;
DROP INDEX provider_txns_ref_norm_idx;
ALTER TABLE provider_txns DROP COLUMN ref_norm;
PRAGMA defer_foreign_keys = ON;
CREATE TABLE intents_old (
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
    updated_at       TEXT NOT NULL,
    kind             TEXT NOT NULL DEFAULT 'charge' CHECK (kind IN ('charge', 'refund')),
    refund_of        TEXT NOT NULL DEFAULT '' CHECK ((kind = 'refund') = (refund_of <> ''))
) STRICT;
INSERT INTO intents_old (key, provider, amount, currency, customer, reference, metadata, state, claim_token,
    claim_owner, lease_expires_at, created_at, updated_at, kind, refund_of)
SELECT key, provider, amount, currency, customer, reference, metadata, state, claim_token,
    claim_owner, lease_expires_at, created_at, updated_at, kind, refund_of FROM intents;
DROP TABLE intents;
ALTER TABLE intents_old RENAME TO intents;
CREATE INDEX intents_provider_created_idx ON intents (provider, created_at);
CREATE INDEX intents_open_idx ON intents (provider, state, created_at)
    WHERE state IN ('pending', 'processing', 'unknown');
CREATE INDEX intents_refund_of_idx ON intents (refund_of) WHERE kind = 'refund';
