-- +goose Up
-- The one best suggested counterpart of an unknown_charge or a
-- missing_at_provider finding, as JSON ({"finding_id", "intent_key",
-- "txn_id", "reason"}); '' when none. A run rewrites it each time.
ALTER TABLE findings ADD COLUMN suggestion TEXT NOT NULL DEFAULT '';

-- Provider transactions linked to intents by a person: the matcher treats
-- each like a provider reference recorded by the intent, first in the
-- linking order. One link per transaction; unmatching deletes it (the
-- findings' history keeps both decisions).
CREATE TABLE manual_links (
    provider   TEXT NOT NULL,
    txn_id     TEXT NOT NULL,
    intent_key TEXT NOT NULL,
    actor      TEXT NOT NULL,
    note       TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    PRIMARY KEY (provider, txn_id)
);
CREATE INDEX manual_links_intent ON manual_links (provider, intent_key);

-- +goose Down
DROP TABLE manual_links;
ALTER TABLE findings DROP COLUMN suggestion;
