-- +goose Up
-- As on PostgreSQL: the foreign key from a sighting to its transaction is
-- dropped (the one write path guarantees it; the conformance suite checks
-- it). SQLite drops a constraint by rebuilding the table.
CREATE TABLE provider_txn_sources_new (
    provider    TEXT NOT NULL,
    txn_id      TEXT NOT NULL,
    channel     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    raw         BLOB,
    received_at TEXT NOT NULL,
    PRIMARY KEY (provider, txn_id, channel, ref)
) STRICT;
INSERT INTO provider_txn_sources_new (provider, txn_id, channel, ref, raw, received_at)
    SELECT provider, txn_id, channel, ref, raw, received_at FROM provider_txn_sources;
DROP TABLE provider_txn_sources;
ALTER TABLE provider_txn_sources_new RENAME TO provider_txn_sources;

-- +goose Down
CREATE TABLE provider_txn_sources_old (
    provider    TEXT NOT NULL,
    txn_id      TEXT NOT NULL,
    channel     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    raw         BLOB,
    received_at TEXT NOT NULL,
    PRIMARY KEY (provider, txn_id, channel, ref),
    FOREIGN KEY (provider, txn_id) REFERENCES provider_txns (provider, txn_id)
) STRICT;
INSERT INTO provider_txn_sources_old (provider, txn_id, channel, ref, raw, received_at)
    SELECT provider, txn_id, channel, ref, raw, received_at FROM provider_txn_sources;
DROP TABLE provider_txn_sources;
ALTER TABLE provider_txn_sources_old RENAME TO provider_txn_sources;
