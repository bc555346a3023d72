-- +goose Up
-- Sightings are written by one path only, the batch upsert, which adds a
-- sighting after its transaction in the same statement batch and never
-- deletes a transaction; nothing else writes or deletes either table. The
-- foreign key from a sighting to its transaction checked what that path
-- guarantees, at the price of a trigger and a primary-key probe per
-- sighting: about a third of the server's time on a large import. The
-- conformance suite checks after every test that no sighting is orphaned.
ALTER TABLE provider_txn_sources DROP CONSTRAINT provider_txn_sources_provider_txn_id_fkey;

-- +goose Down
ALTER TABLE provider_txn_sources ADD CONSTRAINT provider_txn_sources_provider_txn_id_fkey
    FOREIGN KEY (provider, txn_id) REFERENCES provider_txns (provider, txn_id);
