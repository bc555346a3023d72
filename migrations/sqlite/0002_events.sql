-- +goose Up
CREATE TABLE events (
    id         TEXT PRIMARY KEY,
    type       TEXT NOT NULL,
    intent_key TEXT NOT NULL,
    payload    TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX events_intent_idx ON events (intent_key);

CREATE TABLE api_requests (
    key          TEXT PRIMARY KEY,
    request_hash TEXT NOT NULL,
    status       INTEGER NOT NULL,
    response     BLOB NOT NULL,
    created_at   TEXT NOT NULL
) STRICT;

-- +goose Down
DROP TABLE api_requests;
DROP TABLE events;
